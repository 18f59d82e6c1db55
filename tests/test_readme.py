"""The README's Python examples run and their assertions hold."""

from __future__ import annotations

from .readme import ROOT, python_blocks, run_blocks

README = ROOT / "README.md"


def test_readme_has_examples() -> None:
    assert len(python_blocks(README)) >= 2


def test_readme_examples_run() -> None:
    run_blocks(README)
