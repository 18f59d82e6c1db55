"""The README's example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "adapters" / "langchain" / "README.md"


def test_the_readme_example_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.index("| LangChain | repeat-guard |") < text.index("```python")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 1
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    result = namespace["result"]
    assert isinstance(result, dict)
    assert result["messages"][-1].content == "Done."
