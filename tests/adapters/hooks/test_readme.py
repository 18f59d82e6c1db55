"""The package README: it starts with the mapping table, and its example runs."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "adapters" / "hooks" / "README.md"


def test_readme_starts_with_the_mapping_table() -> None:
    text = README.read_text(encoding="utf-8")
    first_table_row = next(line for line in text.splitlines() if line.startswith("|"))
    assert first_table_row.startswith("| hook event")
    assert text.index("| `PreToolUse` |") < text.index("```python")


def test_readme_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(README), "exec"), {})
