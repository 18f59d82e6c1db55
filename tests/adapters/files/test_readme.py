"""The README's example runs as written."""

from __future__ import annotations

from pathlib import Path

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "files" / "README.md"


def test_the_readme_examples_run() -> None:
    (namespace,) = run_blocks(README)
    assert str(namespace["refused"]).endswith("not a regular file")
