"""The README's example runs as written."""

from __future__ import annotations

from pathlib import Path

from strands.agent import AgentResult

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "strands" / "README.md"


def test_the_readme_example_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.index("| Strands | repeat-guard |") < text.index("```python")
    (namespace,) = run_blocks(README)
    result = namespace["result"]
    assert isinstance(result, AgentResult)
    assert result.stop_reason == "end_turn"
