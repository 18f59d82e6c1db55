"""The core README's examples run as written and their assertions hold."""

from __future__ import annotations

from pathlib import Path

from ..readme import run_blocks

README = Path(__file__).resolve().parents[2] / "core" / "README.md"


def test_the_readme_examples_run() -> None:
    assert len(run_blocks(README)) == 16
