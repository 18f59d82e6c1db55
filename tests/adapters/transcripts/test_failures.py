"""What each reader marks as a failed result, and a failure that changes its text in a replay.

Under ``progress = "result"`` a failure is no progress over a failure of the same call: each
format's failing calls, their error text changing each time, remind at the third.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from repeat_guard import GuardConfig, ToolCallFinished
from repeat_guard_transcripts import READERS, Located

from ._support import fired, run_reader

PROGRESS = GuardConfig(thresholds=(3,), progress="result")


def _line(record: object) -> bytes:
    return json.dumps(record).encode() + b"\n"


def claude_code(results: Sequence[tuple[object, bool]]) -> list[bytes]:
    lines = []
    for n, (content, error) in enumerate(results):
        use = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "make"}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": content}
        if error:
            result["is_error"] = True
        lines.append(_line({"sessionId": "s", "type": "assistant", "message": {"content": [use]}}))
        lines.append(_line({"sessionId": "s", "type": "user", "message": {"content": [result]}}))
    return lines


def codex(results: Sequence[object]) -> list[bytes]:
    lines = [_line({"type": "session_meta", "payload": {"id": "s"}})]
    for n, output in enumerate(results):
        call = {"type": "function_call", "name": "exec", "arguments": "{}", "call_id": f"c{n}"}
        done = {"type": "function_call_output", "call_id": f"c{n}", "output": output}
        lines += [_line({"type": "response_item", "payload": p}) for p in (call, done)]
    return lines


def openhands(observations: Sequence[dict[str, object]]) -> list[bytes]:
    events: list[object] = []
    for n, seen in enumerate(observations):
        action = {"source": "agent", "action": "run", "args": {"command": "make"}}
        observed = {"source": "agent", "observation": "run", "cause": 2 * n, **seen}
        events += [{"id": 2 * n, **action}, {"id": 2 * n + 1, **observed}]
    return json.dumps(events, indent=2).encode().splitlines(keepends=True)


def openhands_v1(answers: Sequence[dict[str, object]]) -> list[bytes]:
    lines = []
    for n, answer in enumerate(answers):
        action = {
            "kind": "ActionEvent",
            "tool_name": "terminal",
            "tool_call_id": f"c{n}",
            "action": {"command": "make", "kind": "TerminalAction"},
        }
        lines += [
            _line(action),
            _line({"tool_name": "terminal", "tool_call_id": f"c{n}", **answer}),
        ]
    return lines


def acp(updates: Sequence[tuple[str, object]]) -> list[bytes]:
    lines = []
    for n, (status, output) in enumerate(updates):
        update = {
            "sessionUpdate": "tool_call",
            "toolCallId": f"c{n}",
            "status": status,
            "title": "make",
            "rawInput": {"target": "all"},
            "rawOutput": output,
        }
        message = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": update},
        }
        lines.append(_line({"dir": "a2c", "msg": message}))
    return lines


def failed(fmt: str, lines: list[bytes]) -> list[bool]:
    items = READERS[fmt].read(lines, "t")
    return [
        i.event.failed
        for i in items
        if isinstance(i, Located) and isinstance(i.event, ToolCallFinished)
    ]


def test_claude_code_is_error_is_a_failure_unless_a_refusal() -> None:
    refused = "Permission to use Bash has been denied."
    lines = claude_code(
        [("ok", False), ("Exit code 2\nmake: *** [all] Error 2", True), (refused, True)]
    )
    items = [i.event for i in READERS["claude-code"].read(lines, "t") if isinstance(i, Located)]
    assert [(e.failed, e.denied) for e in items if isinstance(e, ToolCallFinished)] == [
        (False, False),
        (True, False),
        (False, True),
    ]


@pytest.mark.parametrize(
    ("output", "is_failure"),
    [
        ("Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 2\nOutput:\nboom\n", True),
        ("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nfail\n", True),
        ("Process exited with code 0\nOutput:\nProcess exited with code 1\n", False),
        ("Wall time: 1 seconds\nProcess exited with code 127", True),
        ("Process running with session ID 3\nOutput:\n", False),
        ("Process exited with code -1\nOutput:\n", False),
        ({"output": "x"}, False),
    ],
)
def test_codex_a_failing_exit_status_in_the_header_is_a_failure(
    output: object, is_failure: bool
) -> None:
    assert failed("codex", codex([output])) == [is_failure]


def test_openhands_error_observations_and_failing_exit_codes_are_failures() -> None:
    lines = openhands(
        [
            {"content": "ok", "extras": {"metadata": {"exit_code": 0}}},
            {"content": "boom", "extras": {"metadata": {"exit_code": 2}}},
            {"content": "bad", "observation": "error"},
            {"content": "still running", "extras": {"metadata": {"exit_code": -1}}},
            {"content": "?", "extras": "not an object"},
            {"content": "ERROR:\nNo replacement was performed", "observation": "edit"},
            {"content": ["ERROR:\n"], "observation": "edit"},
        ]
    )
    assert failed("openhands", lines) == [False, True, True, False, False, True, False]


def test_openhands_v1_errors_and_failing_observations_are_failures() -> None:
    terminal = {"kind": "TerminalObservation", "content": "x"}
    lines = openhands_v1(
        [
            {"kind": "ObservationEvent", "observation": {**terminal, "exit_code": 0}},
            {"kind": "ObservationEvent", "observation": {**terminal, "exit_code": 1}},
            {"kind": "ObservationEvent", "observation": {**terminal, "is_error": True}},
            {"kind": "ObservationEvent", "observation": "text"},
            {"kind": "AgentErrorEvent", "error": "invalid arguments"},
            {"kind": "UserRejectObservation", "rejection_reason": "no"},
        ]
    )
    assert failed("openhands", lines) == [False, True, True, False, True, False]


def test_acp_a_failed_status_is_a_failure() -> None:
    lines = acp([("completed", "ok"), ("failed", "boom")])
    assert failed("acp", lines) == [False, True]


FAILING: dict[str, tuple[list[bytes], str]] = {
    "claude-code": (claude_code([(f"undefined: {n * 'x'}", True) for n in range(3)]), "Bash"),
    "codex": (
        codex([f"Process exited with code 1\nOutput:\nundefined: {n * 'x'}\n" for n in range(3)]),
        "exec",
    ),
    "openhands": (
        openhands([{"content": f"undefined: {n * 'x'}", "observation": "error"} for n in range(3)]),
        "run",
    ),
    "acp": (acp([("failed", f"undefined: {n * 'x'}") for n in range(3)]), "make"),
}


@pytest.mark.parametrize("fmt", sorted(FAILING))
def test_a_failure_whose_text_changes_is_no_progress(fmt: str) -> None:
    lines, tool = FAILING[fmt]
    assert [(t, c) for _line, t, c, _form in fired(run_reader(fmt, lines, PROGRESS))] == [(tool, 3)]
    errors = GuardConfig(thresholds=(3,), progress="result", errors_are_progress=True)
    assert fired(run_reader(fmt, lines, errors)) == []
