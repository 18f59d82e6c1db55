"""The core README's examples run as written and their assertions hold."""

from __future__ import annotations

from pathlib import Path

from ..readme import run_blocks

README = Path(__file__).resolve().parents[2] / "core" / "README.md"


def test_the_readme_examples_run() -> None:
    # Every block the README opens as Python runs: counted from the text, so adding or taking
    # out an example changes nothing here, and a block the runner's pattern missed fails.
    opened = README.read_text(encoding="utf-8").count("```python\n")
    assert opened >= 10
    assert len(run_blocks(README)) == opened
