"""The README's example runs as written."""

from __future__ import annotations

from pathlib import Path

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "langchain" / "README.md"


def test_the_readme_example_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.index("| LangChain | repeat-guard |") < text.index("```python")
    (namespace,) = run_blocks(README)
    result = namespace["result"]
    assert isinstance(result, dict)
    assert result["messages"][-1].content == "Done."
