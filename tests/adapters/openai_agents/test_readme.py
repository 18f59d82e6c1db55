"""The README's example runs as written."""

from __future__ import annotations

from pathlib import Path

from agents import RunResult

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "openai_agents" / "README.md"


def test_the_readme_example_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.index("| Agents SDK | repeat-guard |") < text.index("```python")
    (namespace,) = run_blocks(README)
    result = namespace["result"]
    assert isinstance(result, RunResult)
    assert result.final_output == "No TODOs; I will stop searching."
