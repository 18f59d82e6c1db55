"""The README's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "adapters" / "agentloop" / "README.md"


def readme_namespaces() -> list[dict[str, object]]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    namespaces = []
    for block in blocks:
        namespace: dict[str, object] = {"__name__": "readme_example"}
        exec(compile(block, str(README), "exec"), namespace)  # the README's own code
        namespaces.append(namespace)
    return namespaces


def test_the_readme_examples_run() -> None:
    first, denying = readme_namespaces()
    assert first["reminder"] == {
        "source": {"kind": "plugin", "plugin": "repeat-tool-guard"},
        "agent": "agent-1",
        "tool": "grep",
        "count": 3,
        "form": "gentle",
        "arguments": '{"pattern":"TODO"}',
        "text": str(first["reminder"]["text"]),  # type: ignore[index]  # a dict, asserted
    }
    results = denying["results"]
    assert isinstance(results, list)
    refused = [(result.is_error, result.model_is_error) for result in results]
    assert refused == [(False, False), (False, False), (True, True)]  # shown as an error
