"""The package README: it starts with the mapping table, and its example runs."""

from __future__ import annotations

from pathlib import Path

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "hooks" / "README.md"


def test_readme_starts_with_the_mapping_table() -> None:
    text = README.read_text(encoding="utf-8")
    first_table_row = next(line for line in text.splitlines() if line.startswith("|"))
    assert first_table_row.startswith("| hook event")
    assert text.index("| `PreToolUse` |") < text.index("```python")


def test_readme_example_runs() -> None:
    # the hook call, splicing a settings file, and install --http
    namespaces = run_blocks(README)
    assert len(namespaces) == 3
    entry = namespaces[2]["entry"]
    assert isinstance(entry, dict)
    assert entry["allowedEnvVars"] == ["REPEAT_GUARD_HTTP_SECRET"]
