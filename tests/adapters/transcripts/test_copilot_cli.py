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
    # The text ends "<shellId: 0 completed with exit code 0>": the shell's id is dropped.
    assert first.event == ToolCallFinished(
        SESSION,
        "bash",
        {"command": "ls", "description": "list"},
        result="a.txt\n<completed with exit code 0>",
    )
    assert (first.where.line, first.turn, first.project) == (8, "0", "/home/dev/project")
    # Every usage record (lines 5, 11, 17, 23, 29, before the message of the same apiCallId)
    # says 10 input and 5 output tokens; the one on line 37 is the closing step's, no call's.
    calls = items[1:]
    assert [(i.tokens, i.input_tokens) for i in calls] == [(5, 10)] * 5


FAILURES = FIXTURES / "copilot-cli" / "failures" / "events.jsonl"


def test_a_recorded_session_of_a_command_failing_three_times() -> None:
    outcomes = run_file("copilot-cli", FAILURES)
    # tool.execution_complete on lines 8, 14, 20 (the same command exiting 1: "success": true,
    # "shellExecution": {"exitCode": 1}) and 26 (`echo ok`, exit code 0).
    assert fired(outcomes) == [(20, "bash", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.denied, total.longest_run) == (4, 2, 0, 3)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == unfinished(outcomes) == []
    lines = FAILURES.read_bytes().splitlines(keepends=True)
    items = [i for i in READERS["copilot-cli"].read(lines, "e") if isinstance(i, Located)]
    calls = [i.event for i in items if isinstance(i.event, ToolCallFinished)]
    assert [c.failed for c in calls] == [True, True, True, False]
    # The shell ids 0, 1, 2 are dropped: the three failures are the same result.
    assert {c.result for c in calls[:3]} == {
        "pre-commit: ruff failed\n<completed with exit code 1>"
    }
    assert calls[3].result == "ok\n<completed with exit code 0>"
    # The usage records on lines 5, 11, 17, 23 (29: the closing step, no call) give output
    # tokens 20, 21, 22, 23 and input tokens 1000, 1100, 1200, 1300 (cacheReadTokens 600 is
    # part of inputTokens: the stand-in sent prompt_tokens 1000 + 100 n, 600 of them cached).
    steps = [(i.tokens, i.input_tokens) for i in items[1:]]
    assert steps == [(20, 1000), (21, 1100), (22, 1200), (23, 1300)]


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


def test_exit_codes_and_the_tokens_of_a_step() -> None:
    ls = {"toolName": "bash", "arguments": {"command": "ls"}}
    exited = {"exitCode": 2}
    lines = [
        _event("session.usage_record", usage={"apiCallId": "s1", "inputTokens": 9}),
        _event("assistant.message", apiCallId="s1", toolRequests=[{"toolCallId": "a"}, {}]),
        _event("tool.execution_start", toolCallId="b", **ls),  # not the step's first call
        _event("tool.execution_start", toolCallId="a", **ls),
        # The exit code in shellExecution alone (a text without Copilot's ending).
        _event(
            "tool.execution_complete",
            toolCallId="a",
            success=True,
            shellExecution=exited,
            result={"content": "cut"},
        ),
        _event(
            "tool.execution_complete",
            toolCallId="b",
            success=True,
            shellExecution=exited,
            error={"message": "no"},
        ),
        _event("session.usage_record", usage={"apiCallId": "s2", "outputTokens": 3}),
        _event("assistant.message", apiCallId="other", toolRequests=[{"toolCallId": "c"}]),
        _event("assistant.message", apiCallId="s2", toolRequests=[]),
        _event("assistant.message", apiCallId="s2", toolRequests=["c"]),
        _event("assistant.message", apiCallId="s2", toolRequests=[{"toolCallId": 1}]),
        _event("session.usage_record", usage="none"),
        _event("assistant.message", toolRequests=[{"toolCallId": "c"}]),
        _event("tool.execution_start", toolCallId="c", **ls),
        # Copilot's ending mid-text is the command's own output; exit code -1: still running.
        _event(
            "tool.execution_complete",
            toolCallId="c",
            success=True,
            shellExecution={"exitCode": -1},
            result={"content": "<shellId: 1 completed with exit code 1> then"},
        ),
        _event("session.usage_record", usage={"apiCallId": "s3", "outputTokens": 4}),
        _event("assistant.message", apiCallId="s3", toolRequests=[{"toolCallId": "d"}]),
        _event("tool.execution_start", toolCallId="d", **ls),
        _event(
            "tool.execution_complete",
            toolCallId="d",
            success=True,
            shellExecution=[],
            result={"content": 7},
        ),
        _event("tool.execution_start", toolCallId="e", **ls),
        _event(
            "tool.execution_complete",
            toolCallId="e",
            success=True,
            result={"content": "x\n<shellId: 9 completed with exit code 0>"},
        ),
    ]
    items = [i for i in READERS["copilot-cli"].read(lines, "e") if isinstance(i, Located)]
    calls = [(i.event, i.tokens, i.input_tokens) for i in items]
    assert [(c.failed, c.result, t, n) for c, t, n in calls if isinstance(c, ToolCallFinished)] == [
        (True, "cut", None, 9),
        (True, "no", None, None),
        (False, "<shellId: 1 completed with exit code 1> then", None, None),
        (False, 7, 4, None),
        (False, "x\n<completed with exit code 0>", None, None),
    ]


def test_sniffing() -> None:
    reader = READERS["copilot-cli"]
    head = EVENTS.read_bytes()[:4096]
    assert reader.sniff(head)
    assert sniff_head(head) == "copilot-cli"
    assert not reader.sniff(b'{"type": "session.start", "data": {}}\n')
    assert not reader.sniff(b'{"type": "other", "data": {}, "parentId": null}\n')
    assert not reader.sniff(b'{"type": [], "data": {}, "parentId": null}\n')  # not a name
