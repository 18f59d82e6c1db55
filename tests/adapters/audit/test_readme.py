"""The package README's example runs and its assertions hold; it starts with the mapping."""

from __future__ import annotations

from pathlib import Path

from ...readme import run_blocks

README = Path(__file__).parents[3] / "adapters" / "audit" / "README.md"


def test_the_readme_opens_with_the_mapping_table() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.index("| reader item |") < text.index("## Example")


def test_the_readme_example_runs() -> None:
    assert len(run_blocks(README)) == 1
