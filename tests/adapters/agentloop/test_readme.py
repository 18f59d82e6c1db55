"""The README's example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "adapters" / "agentloop" / "README.md"


def test_the_readme_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    assert namespace["reminder"] == {
        "source": {"kind": "plugin", "plugin": "repeat-tool-guard"},
        "agent": "agent-1",
        "tool": "grep",
        "count": 3,
        "form": "gentle",
        "arguments": '{"pattern":"TODO"}',
        "text": str(namespace["reminder"]["text"]),  # type: ignore[index]  # a dict, asserted
    }
