"""The README's examples run as written."""

from __future__ import annotations

from pathlib import Path

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "agentloop" / "README.md"


def test_the_readme_examples_run() -> None:
    first, denying = run_blocks(README)
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
