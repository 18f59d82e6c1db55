"""What each reader passes as a call's result, and ``progress = "result"`` in a replay.

Every format gets the same small transcript: one call repeated with the results given. Results
that change are progress under ``progress = "result"`` and nothing with the default config,
which ignores them; results that stay the same are a loop either way.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from repeat_guard import GuardConfig, ToolCallFinished
from repeat_guard_cli import main
from repeat_guard_transcripts import READERS, FileSummary, Located, annotate

from ._support import FIXTURES, fired, run_reader

PROGRESS = GuardConfig(thresholds=(3,), progress="result")
CHANGING: list[object] = ["queued", "running", [{"type": "text", "text": "passed"}]]
SAME: list[object] = ["running"] * 3


def _line(record: object) -> bytes:
    return json.dumps(record).encode() + b"\n"


def claude_code(results: Sequence[object]) -> list[bytes]:
    lines = []
    for n, content in enumerate(results):
        use = {"type": "tool_use", "id": f"t{n}", "name": "BashOutput", "input": {"bash_id": "b"}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": content}
        lines.append(_line({"sessionId": "s", "type": "assistant", "message": {"content": [use]}}))
        lines.append(_line({"sessionId": "s", "type": "user", "message": {"content": [result]}}))
    return lines


def codex(results: Sequence[object]) -> list[bytes]:
    lines = [_line({"type": "session_meta", "payload": {"id": "s"}})]
    for n, output in enumerate(results):
        call = {
            "type": "function_call",
            "name": "write_stdin",
            "arguments": '{"session_id": 3, "chars": ""}',
            "call_id": f"c{n}",
        }
        done = {"type": "function_call_output", "call_id": f"c{n}", "output": output}
        lines += [_line({"type": "response_item", "payload": p}) for p in (call, done)]
    return lines


def openhands(results: Sequence[object]) -> list[bytes]:
    events: list[object] = []
    for n, content in enumerate(results):
        action = {"source": "agent", "action": "run", "args": {"command": "gh pr checks"}}
        seen = {"source": "agent", "observation": "run", "cause": 2 * n, "content": content}
        events += [{"id": 2 * n, **action}, {"id": 2 * n + 1, **seen}]
    return json.dumps(events, indent=2).encode().splitlines(keepends=True)


def swe_agent(results: Sequence[object]) -> list[bytes]:
    steps = [{"action": "gh pr checks\n", "observation": result} for result in results]
    return json.dumps({"trajectory": steps}, indent=2).encode().splitlines(keepends=True)


def mini_swe_agent(results: Sequence[object]) -> list[bytes]:
    messages: list[object] = [{"role": "user", "content": "task"}]
    for result in results:
        reply = {"role": "assistant", "extra": {"actions": [{"command": "gh pr checks"}]}}
        messages += [reply, {"role": "user", "content": result}]
    data = {"info": {"mini_version": "2.0.0"}, "messages": messages}
    return json.dumps(data, indent=2).encode().splitlines(keepends=True)


def gemini_cli(results: Sequence[object]) -> list[bytes]:
    lines = [_line({"sessionId": "s", "projectHash": "h", "kind": "main"})]
    for n, result in enumerate(results):
        call = {"id": f"c{n}", "name": "gh", "args": {"pr": 7}, "result": result}
        message = {"id": f"m{n}", "type": "gemini", "toolCalls": [{**call, "status": "success"}]}
        lines.append(_line(message))
    return lines


def copilot_cli(results: Sequence[object]) -> list[bytes]:
    lines = []
    for n, result in enumerate(results):
        start = {"toolCallId": f"c{n}", "toolName": "gh", "arguments": {"pr": 7}}
        done = {"toolCallId": f"c{n}", "success": True, "result": {"content": result}}
        for kind, data in (("tool.execution_start", start), ("tool.execution_complete", done)):
            lines.append(_line({"type": kind, "data": data, "id": "i", "parentId": None}))
    return lines


def pi(results: Sequence[object]) -> list[bytes]:
    lines = [_line({"type": "session", "version": 3, "id": "s", "cwd": "/w"})]
    for n, result in enumerate(results):
        call = {"type": "toolCall", "id": f"c{n}", "name": "gh", "arguments": {"pr": 7}}
        answer = {"role": "toolResult", "toolCallId": f"c{n}", "content": result}
        lines.append(
            _line({"type": "message", "message": {"role": "assistant", "content": [call]}})
        )
        lines.append(_line({"type": "message", "message": answer}))
    return lines


def cline(results: Sequence[object]) -> list[bytes]:
    messages: list[object] = [{"role": "user", "content": "check the PR", "ts": 1}]
    for n, result in enumerate(results):
        use = {"type": "tool_use", "id": f"c{n}", "name": "gh", "input": {"pr": 7}}
        answer = {"type": "tool_result", "tool_use_id": f"c{n}", "content": result}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [answer]}]
    return json.dumps(messages, indent=2).encode().splitlines(keepends=True)


def _any(value: object) -> object:
    """``value`` as an OTLP/JSON ``AnyValue``."""
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any(v) for v in value]}}
    if isinstance(value, dict):
        pairs = [{"key": k, "value": _any(v)} for k, v in value.items()]
        return {"kvlistValue": {"values": pairs}}
    return {"stringValue": value}


def otel_genai(results: Sequence[object]) -> list[bytes]:
    lines = []
    for n, result in enumerate(results):
        attributes = {
            "gen_ai.operation.name": {"stringValue": "execute_tool"},
            "gen_ai.tool.name": {"stringValue": "gh"},
            "gen_ai.tool.call.arguments": {"stringValue": '{"pr": 7}'},
            "gen_ai.tool.call.result": _any(result),
        }
        span: dict[str, object] = {"traceId": "t", "spanId": f"s{n}"}
        span["startTimeUnixNano"] = str(n + 1)
        span["attributes"] = [{"key": k, "value": v} for k, v in attributes.items()]
        lines.append(_line({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    return lines


def qwen_code(results: Sequence[object]) -> list[bytes]:
    lines = []
    for n, result in enumerate(results):
        call = {"functionCall": {"id": f"c{n}", "name": "gh", "args": {"pr": 7}}}
        answer = {"functionResponse": {"id": f"c{n}", "response": result}}
        for kind, part in (("assistant", call), ("tool_result", answer)):
            record = {"uuid": "u", "sessionId": "s", "type": kind, "message": {"parts": [part]}}
            lines.append(_line(record))
    return lines


def acp(results: Sequence[object]) -> list[bytes]:
    lines = []
    for n, output in enumerate(results):
        update = {
            "sessionUpdate": "tool_call",
            "toolCallId": f"c{n}",
            "status": "completed",
            "title": "ci_status",
            "rawInput": {"pr": 7},
            "rawOutput": output,
        }
        params = {"sessionId": "s", "update": update}
        message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
        lines.append(_line({"dir": "a2c", "msg": message}))
    return lines


TRANSCRIPTS: dict[str, tuple[Callable[[Sequence[object]], list[bytes]], str]] = {
    "claude-code": (claude_code, "BashOutput"),
    "codex": (codex, "write_stdin"),
    "openhands": (openhands, "run"),
    "swe-agent": (swe_agent, "gh"),
    "mini-swe-agent": (mini_swe_agent, "bash"),
    "gemini-cli": (gemini_cli, "gh"),
    "copilot-cli": (copilot_cli, "gh"),
    "pi": (pi, "gh"),
    "cline": (cline, "gh"),
    "qwen-code": (qwen_code, "gh"),
    "acp": (acp, "ci_status"),
    "otel-genai": (otel_genai, "gh"),
}
FORMATS = sorted(TRANSCRIPTS)


def reminders(fmt: str, results: Sequence[object], config: GuardConfig) -> list[tuple[str, int]]:
    write, _ = TRANSCRIPTS[fmt]
    return [
        (tool, count)
        for _line, tool, count, _form in fired(run_reader(fmt, write(results), config))
    ]


def results_passed(fmt: str, lines: list[bytes]) -> list[object]:
    items = READERS[fmt].read(lines, "t")
    return [
        i.event.result
        for i in items
        if isinstance(i, Located) and isinstance(i.event, ToolCallFinished)
    ]


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_reader_passes_what_the_tool_returned(fmt: str) -> None:
    write, _ = TRANSCRIPTS[fmt]
    assert results_passed(fmt, write(CHANGING)) == CHANGING


@pytest.mark.parametrize("fmt", FORMATS)
def test_changing_results_are_progress_only_when_asked(fmt: str) -> None:
    tool = TRANSCRIPTS[fmt][1]
    assert reminders(fmt, CHANGING, PROGRESS) == []
    assert reminders(fmt, CHANGING, GuardConfig()) == [(tool, 3)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_results_that_stay_the_same_remind_either_way(fmt: str) -> None:
    tool = TRANSCRIPTS[fmt][1]
    assert reminders(fmt, SAME, PROGRESS) == [(tool, 3)]
    assert reminders(fmt, SAME, GuardConfig()) == [(tool, 3)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_default_config_replays_alike_whatever_the_results(fmt: str) -> None:
    write, _ = TRANSCRIPTS[fmt]
    assert run_reader(fmt, write(CHANGING)) == run_reader(fmt, write(SAME))


def test_codex_shell_output_is_compared_without_its_chunk_id_and_wall_time() -> None:
    # The live rollout runs ``ls`` four times with the same output, each time under its own
    # ``Chunk ID`` and ``Wall time``: those lines are left out, so it is a loop either way.
    lines = next((FIXTURES / "codex").glob("rollout-*.jsonl")).read_bytes().splitlines(True)
    outputs = results_passed("codex", lines)
    assert outputs == ["Process exited with code 0\nOriginal token count: 0\nOutput:\n"] * 4
    default = fired(run_reader("codex", lines, GuardConfig(thresholds=(3,))))
    assert default != []
    assert fired(run_reader("codex", lines, PROGRESS)) == default


@pytest.mark.parametrize(
    ("output", "result"),
    [
        (
            "Chunk ID: 9e6a41\nWall time: 1.2500 seconds\nProcess running with session ID 3\n"
            "Original token count: 2\nOutput:\nWall time: 3 s\n",
            "Process running with session ID 3\nOriginal token count: 2\nOutput:\nWall time: 3 s\n",
        ),
        ("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nfail\n", "Exit code: 1\nOutput:\nfail\n"),
        ("Wall time: 5.0000 seconds\nSleep completed.", "Sleep completed."),
        ("Wall time: 5.0000 seconds", ""),
        ("no header\nWall time: 5 seconds\n", "no header\nWall time: 5 seconds\n"),
        ("x" * 400 + "Wall time: 5 seconds", "x" * 400 + "Wall time: 5 seconds"),
        ({"content": "Wall time: 1"}, {"content": "Wall time: 1"}),
    ],
)
def test_codex_results_leave_out_only_the_header_lines_that_change_every_call(
    output: object, result: object
) -> None:
    assert results_passed("codex", codex([output])) == [result]


def test_codex_polls_whose_output_changes_only_in_its_header_are_a_loop() -> None:
    polls = [
        f"Chunk ID: {n:06x}\nWall time: {n}.0000 seconds\nProcess running with session ID 3\n"
        "Original token count: 0\nOutput:\n"
        for n in range(3)
    ]
    assert reminders("codex", polls, PROGRESS) == [("write_stdin", 3)]
    finished = [*polls[:2], polls[2].replace("running with session ID 3", "exited with code 0")]
    assert reminders("codex", finished, PROGRESS) == []


def test_a_result_the_transcript_does_not_record_is_none() -> None:
    use = {"type": "tool_use", "id": "t", "name": "Bash", "input": {}}
    claude = [
        _line({"sessionId": "s", "type": "assistant", "message": {"content": [use]}}),
        _line(
            {
                "sessionId": "s",
                "type": "user",
                "message": {"content": [{"type": "tool_result", "tool_use_id": "t"}]},
            }
        ),
    ]
    assert results_passed("claude-code", claude) == [None]
    call = {"type": "function_call", "name": "t", "arguments": "{}", "call_id": "c"}
    codex_lines = [
        _line({"type": "response_item", "payload": p})
        for p in (call, {"type": "function_call_output", "call_id": "c"})
    ]
    assert results_passed("codex", codex_lines) == [None]
    steps = [{"action": "ls", "observation": None}]
    assert results_passed("swe-agent", [json.dumps({"trajectory": steps}).encode()]) == [None]


def acp_frame(kind: str, status: str, **extra: object) -> bytes:
    update = {"sessionUpdate": kind, "toolCallId": "c", "status": status, **extra}
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }
    return _line({"dir": "a2c", "msg": message})


def test_an_acp_result_is_the_latest_raw_output_else_the_latest_content() -> None:
    shown = [{"type": "content", "content": {"type": "text", "text": "2 passed"}}]
    later = [{"type": "content", "content": {"type": "text", "text": "3 passed"}}]
    both = [
        acp_frame("tool_call", "pending", title="t", rawOutput={"out": "1"}),
        acp_frame("tool_call_update", "in_progress", rawOutput={"out": "2"}, content=shown),
        acp_frame("tool_call_update", "completed", rawOutput=None),
    ]
    assert results_passed("acp", both) == [{"out": "2"}]
    content_only = [
        acp_frame("tool_call", "pending", title="t", content=shown),
        acp_frame("tool_call_update", "completed", content=later),
    ]
    assert results_passed("acp", content_only) == [later]
    neither = [
        acp_frame("tool_call", "pending", title="t"),
        acp_frame("tool_call_update", "failed"),
    ]
    assert results_passed("acp", neither) == [None]


def test_an_annotation_with_the_default_config_writes_no_result() -> None:
    written: dict[str, list[bytes]] = {}
    for name, results in (("changing", CHANGING), ("same", SAME)):
        out: list[bytes] = []
        lines = acp(results)
        outcomes = list(annotate(lines, READERS["acp"], GuardConfig(), file="t", write=out.append))
        assert isinstance(outcomes[-1], FileSummary)
        written[name] = [line for line in out if line not in lines]
    assert len(written["changing"]) == 1
    assert written["changing"] == written["same"]


def command(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    assert err.getvalue() == ""
    return status, out.getvalue()


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_commands_take_progress_from_their_config(fmt: str, tmp_path: Path) -> None:
    write, _ = TRANSCRIPTS[fmt]
    transcript = tmp_path / "runs" / f"{fmt}.data"
    transcript.parent.mkdir()
    transcript.write_bytes(b"".join(write(["PASS-1", "PASS-2", "PASS-3"])))
    config = tmp_path / "guard.toml"
    config.write_text('thresholds = [3]\nprogress = "result"\n', encoding="utf-8")
    replay = ("replay", "--from", fmt, "--format", "json", str(transcript))
    status, default = command(*replay)
    assert (status, [json.loads(r)["type"] for r in default.splitlines()]) == (
        0,
        ["reminder", "summary"],
    )
    assert "PASS-" not in default
    status, progress = command(*replay, "--config", str(config))
    assert (status, [json.loads(r)["type"] for r in progress.splitlines()]) == (0, ["summary"])
    audit = ("audit", str(transcript.parent), "--format", "json", "--jobs", "1")
    status, default = command(*audit)
    assert (status, "PASS-" in default) == (0, False)
    totals = [json.loads(r) for r in default.splitlines()][-1]
    status, progress = command(*audit, "--config", str(config))
    progressed = [json.loads(r) for r in progress.splitlines()][-1]
    assert (status, totals["wasted"], progressed["wasted"]) == (0, 2, 0)


def _gemini_shell(ident: int, output: str) -> list[object]:
    """A ``run_shell_command`` result as Gemini CLI 0.61.0 records it."""
    response = {"output": f"<untrusted_context>\n{output}\n</untrusted_context>"}
    part = {"id": f"run_shell_command__run_shell_command_{ident}_0", "name": "run_shell_command"}
    return [{"functionResponse": {**part, "response": response}}]


def test_the_recorded_gemini_loop_stays_a_loop_when_results_are_compared() -> None:
    # The live chat runs ``ls`` four times: each result has its own call id and PGID, and the
    # same output. Without those the results are equal, so progress = "result" still reminds.
    chat = FIXTURES / "gemini-cli" / "session-2026-12-06T02-24-404f3d11.jsonl"
    lines = chat.read_bytes().splitlines(keepends=True)
    shell = [r for r in results_passed("gemini-cli", lines) if "a.txt" in json.dumps(r)]
    assert len(shell) == 6
    assert all(r == shell[0] for r in shell)
    assert shell[0] == [
        {
            "functionResponse": {
                "name": "run_shell_command",
                "response": {"output": "<untrusted_context>\nOutput: a.txt\n</untrusted_context>"},
            }
        }
    ]
    default = fired(run_reader("gemini-cli", lines, GuardConfig(thresholds=(3,))))
    assert default != []
    assert fired(run_reader("gemini-cli", lines, PROGRESS)) == default


@pytest.mark.parametrize(
    ("output", "kept"),
    [
        ("Output: a.txt\nProcess Group PGID: 3844", "Output: a.txt"),
        (
            "Output: (empty)\nBackground PIDs: 3841, 3850\nProcess Group PGID: 3839",
            "Output: (empty)",
        ),
        (
            "Output: boom\nError: spawn failed\nExit Code: 1\nSignal: 15\nProcess Group PGID: 7",
            "Output: boom\nError: spawn failed\nExit Code: 1\nSignal: 15",
        ),
        (
            "Command moved to background (PID: 3841). Output hidden. Press Ctrl+B to view.",
            "Command moved to background (PID: <n>). Output hidden. Press Ctrl+B to view.",
        ),
        ("Output: Process Group PGID: 12 is mine", "Output: Process Group PGID: 12 is mine"),
    ],
)
def test_gemini_results_leave_out_the_call_id_and_the_process_ids(output: str, kept: str) -> None:
    (result,) = results_passed("gemini-cli", gemini_cli([_gemini_shell(1796524791083, output)]))
    wrapped = f"<untrusted_context>\n{kept}\n</untrusted_context>"
    response = {"name": "run_shell_command", "response": {"output": wrapped}}
    assert result == [{"functionResponse": response}]


@pytest.mark.parametrize(
    "result",
    [
        "text",
        ["a part that is text", {"text": "no response"}, {"functionResponse": "odd"}],
        [{"functionResponse": {"name": "n", "response": {"output": 3, "error": None}}}],
    ],
)
def test_gemini_results_of_other_shapes_pass_as_they_are(result: object) -> None:
    assert results_passed("gemini-cli", gemini_cli([result])) == [result]


def test_a_gemini_response_that_is_not_an_object_loses_only_its_id() -> None:
    result = [{"functionResponse": {"id": "c7", "name": "n", "response": "done"}}]
    expected = [{"functionResponse": {"name": "n", "response": "done"}}]
    assert results_passed("gemini-cli", gemini_cli([result])) == [expected]
    bare = [{"functionResponse": {"id": "c8", "name": "n"}}]
    assert results_passed("gemini-cli", gemini_cli([bare])) == [
        [{"functionResponse": {"name": "n"}}]
    ]


def test_gemini_polls_are_a_loop_until_their_output_changes() -> None:
    same = [_gemini_shell(n, f"Output: step 1\nProcess Group PGID: {40 + n}") for n in range(3)]
    assert reminders("gemini-cli", same, PROGRESS) == [("gh", 3)]
    moving = [_gemini_shell(n, f"Output: step {n}\nProcess Group PGID: {40 + n}") for n in range(3)]
    assert reminders("gemini-cli", moving, PROGRESS) == []


def _gemini_calls(tool: str, results: Sequence[object]) -> list[bytes]:
    lines = [_line({"sessionId": "s", "projectHash": "h", "kind": "main"})]
    for n, result in enumerate(results):
        call = {"id": f"c{n}", "name": tool, "args": {"command": "make"}, "result": result}
        message = {"id": f"m{n}", "type": "gemini", "toolCalls": [{**call, "status": "success"}]}
        lines.append(_line(message))
    return lines


def _failed(fmt: str, lines: list[bytes]) -> list[bool]:
    items = READERS[fmt].read(lines, "t")
    return [
        i.event.failed
        for i in items
        if isinstance(i, Located) and isinstance(i.event, ToolCallFinished)
    ]


@pytest.mark.parametrize(
    ("tool", "output", "failed"),
    [
        ("run_shell_command", "Output: boom\nExit Code: 2\nProcess Group PGID: 7", True),
        ("run_shell_command", "Output: killed\nExit Code: -9", True),
        ("run_shell_command", "Output: still running\nExit Code: -1", False),
        ("run_shell_command", "Output: fine\nProcess Group PGID: 7", False),
        ("run_shell_command", "Output: it said Exit Code: 2", False),
        ("grep_search", "Output: boom\nExit Code: 2", False),
    ],
)
def test_a_gemini_shell_call_whose_output_says_a_failing_exit_code_failed(
    tool: str, output: str, failed: bool
) -> None:
    assert _failed("gemini-cli", _gemini_calls(tool, [_gemini_shell(1, output)])) == [failed]


def test_a_gemini_shell_result_of_another_shape_is_not_a_failure() -> None:
    odd: list[object] = ["text", [{"functionResponse": {"response": {"output": 3}}}, "part"]]
    assert _failed("gemini-cli", _gemini_calls("run_shell_command", odd)) == [False, False]


def test_a_failing_gemini_test_run_whose_timing_changes_stays_a_loop() -> None:
    # Recorded in tests/data/eval/gemini-cli/loops.jsonl: unittest says "Ran 1 test in 0.003s",
    # then 0.006s, 0.007s (the fingerprint leaves durations out). Here the count of tests
    # changes too: different results, but each a failure after a failure.
    runs = [
        _gemini_shell(n, f"Output: FAIL\nRan {n} tests in 0.00{n}s\n\nFAILED\nExit Code: 1")
        for n in range(3, 6)
    ]
    lines = _gemini_calls("run_shell_command", runs)
    assert fired(run_reader("gemini-cli", lines, PROGRESS)) != []
    passing = [_gemini_shell(n, f"Output: OK\nRan {n} tests in 0.00{n}s") for n in range(3, 6)]
    lines = _gemini_calls("run_shell_command", passing)
    assert fired(run_reader("gemini-cli", lines, PROGRESS)) == []
    same = [_gemini_shell(n, f"Output: OK\nRan 1 test in 0.00{n}s") for n in range(3, 6)]
    lines = _gemini_calls("run_shell_command", same)
    assert fired(run_reader("gemini-cli", lines, PROGRESS)) != []  # only its duration changed


def _qwen_shell(outputs: Sequence[str]) -> list[bytes]:
    return qwen_code([{"output": output} for output in outputs])


def test_qwen_shell_results_leave_out_the_process_group_pgid_of_a_terminal_run() -> None:
    # Qwen Code 0.24.4's run_shell_command ends with "Process Group PGID: ${result.pid ??
    # "(none)"}": the shell's pid when it ran in a terminal (node-pty), new on every call.
    shell = "Command: ls\nDirectory: (root)\nOutput: {}\nError: (none)\nExit Code: 0\n"
    same = [shell.format("a.txt") + f"Signal: (none)\nProcess Group PGID: {n}" for n in (41, 57)]
    results = results_passed("qwen-code", _qwen_shell(same))
    assert results == [{"output": shell.format("a.txt") + "Signal: (none)\n"}] * 2
    none = shell.format("a.txt") + "Signal: (none)\nProcess Group PGID: (none)"
    assert results_passed("qwen-code", _qwen_shell([none])) == [{"output": none}]
    assert results_passed("qwen-code", qwen_code(["text", None])) == ["text", None]


def test_qwen_polls_are_a_loop_until_their_output_changes() -> None:
    same = [f"Output: step 1\nProcess Group PGID: {40 + n}" for n in range(3)]
    assert fired(run_reader("qwen-code", _qwen_shell(same), PROGRESS)) != []
    moving = [f"Output: step {n}\nProcess Group PGID: {40 + n}" for n in range(3)]
    assert fired(run_reader("qwen-code", _qwen_shell(moving), PROGRESS)) == []


def test_qwen_background_starts_leave_out_the_shell_id_and_pid() -> None:
    # Qwen Code 0.24.4: "Background shell started.\nid: ${shellId}\npid: ${pid}\noutput file:
    # ${outputPath}", shellId bg_ and 4 random bytes in hex, the file shell-${shellId}.output.
    started = [
        f"Background shell started.\nid: bg_{ident}\npid: {pid}\n"
        f"output file: /home/dev/.qwen/tmp/shell-bg_{ident}.output\nRead it."
        for ident, pid in (("0a1b2c3d", 4101), ("9f8e7d6c", 4177))
    ]
    expected = (
        "Background shell started.\nid: bg_<id>\n"
        "output file: /home/dev/.qwen/tmp/shell-bg_<id>.output\nRead it."
    )
    assert results_passed("qwen-code", _qwen_shell(started)) == [{"output": expected}] * 2
    assert results_passed("qwen-code", qwen_code([{"n": 3}])) == [{"n": 3}]
    kept = "id: bg_0a1b2c3d9 and xbg_0a1b2c3d\npid: none"
    assert results_passed("qwen-code", _qwen_shell([kept])) == [{"output": kept}]
