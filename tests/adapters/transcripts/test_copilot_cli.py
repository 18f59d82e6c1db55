"""The GitHub Copilot CLI reader on an events file recorded with the real Copilot CLI 1.0.102,
and on hand-made events of the shapes it writes.

Expected counts were made by hand from the files (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import READERS, Located, sniff_head

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

EVENTS = FIXTURES / "copilot-cli" / "events.jsonl"
SESSION = "9874e2f8-9e85-41a4-9e2a-7ce1f66c963c"


def test_a_recorded_session_of_identical_calls_and_a_denied_read() -> None:
    outcomes = run_file("copilot-cli", EVENTS)
    # tool.execution_complete on lines 8, 14, 20, 26 (`bash ls` four times) and 34 (`view` of
    # a path outside the project, denied: no one to approve it).
    assert fired(outcomes) == [(20, "bash", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.denied, total.longest_run) == (5, 3, 1, 4)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == unfinished(outcomes) == []
    (session,) = summary(outcomes).sessions
    assert (session.session, session.agents) == (SESSION, 1)
    lines = EVENTS.read_bytes().splitlines(keepends=True)
    items = [i for i in READERS["copilot-cli"].read(lines, "e") if isinstance(i, Located)]
    assert items[0].event == PromptSubmitted(SESSION)
    first = items[1]
    assert first.event == ToolCallFinished(
        SESSION,
        "bash",
        {"command": "ls", "description": "list"},
        result="a.txt\n<shellId: 0 completed with exit code 0>",
    )
    assert (first.where.line, first.turn, first.project) == (8, "0", "/home/dev/project")


def _event(kind: str, **data: object) -> bytes:
    return json.dumps({"type": kind, "data": data, "id": "x", "parentId": None}).encode() + b"\n"


def test_failures_denials_and_calls_left_open() -> None:
    grep = {"toolName": "grep", "arguments": {"pattern": "x"}}
    lines = [
        _event("user.message", content="find x"),  # before session.start: the file's name
        _event("tool.execution_start", toolCallId="a", **grep),
        _event("tool.execution_complete", toolCallId="a", success=False, error={"message": "no"}),
        _event("tool.execution_start", toolCallId="b", **grep),
        _event("permission.completed", toolCallId="b", result={"kind": "denied-by-rules"}),
        _event("permission.completed", toolCallId="b", result={"kind": "denied-by-rules"}),
        _event("permission.completed", toolCallId="b", result={"kind": "approved"}),
        _event("tool.execution_complete", toolCallId="b", success=False),
        _event("tool.execution_start", toolCallId="c", **grep),
        _event("tool.execution_complete", toolCallId="c", success=True, result="plain"),
        _event("tool.execution_complete", toolCallId="zz", success=True),
        _event("tool.execution_complete", success=True),
        _event("tool.execution_start", toolName="grep"),
        _event("tool.execution_start", toolCallId="d", **grep),
        _event("session.start", sessionId="late", context="nowhere"),
        _event("user.message", content="again"),
        _event("tool.execution_start", toolCallId="e", **grep),
        json.dumps({"type": "user.message", "data": 3}).encode() + b"\n",
        b"[]\n",
    ]
    outcomes = run_reader("copilot-cli", lines, file="events.jsonl")
    assert diagnostics(outcomes) == [(19, "expected a JSON object")]
    assert unfinished(outcomes) == [(14, "grep"), (17, "grep")]
    items = [
        i for i in READERS["copilot-cli"].read(lines, "events.jsonl") if isinstance(i, Located)
    ]
    calls = [i.event for i in items if isinstance(i.event, ToolCallFinished)]
    assert [(c.failed, c.denied, c.result) for c in calls] == [
        (True, False, "no"),
        (False, True, None),
        (False, False, "plain"),
    ]
    assert {i.where.session for i in items} == {"events"}


def test_sniffing() -> None:
    reader = READERS["copilot-cli"]
    head = EVENTS.read_bytes()[:4096]
    assert reader.sniff(head)
    assert sniff_head(head) == "copilot-cli"
    assert not reader.sniff(b'{"type": "session.start", "data": {}}\n')
    assert not reader.sniff(b'{"type": "other", "data": {}, "parentId": null}\n')
    assert not reader.sniff(b'{"type": [], "data": {}, "parentId": null}\n')  # not a name
