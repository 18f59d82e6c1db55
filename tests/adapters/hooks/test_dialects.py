"""Hook inputs of Claude Code and Codex as guard events; reminders as hook answers.

The inputs are shaped like those the real Claude Code 2.1.197 and Codex 0.171.0 sent in this
project's own runs (tests/adapters/hooks/test_e2e_*.py record them again).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from returns.result import Failure, Success

from repeat_guard import (
    AgentDisposed,
    GuardState,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    reduce,
)
from repeat_guard_hooks import (
    CLAUDE_CODE,
    CODEX,
    DIALECTS,
    AgentEvent,
    HookInput,
    SessionEnded,
    Unused,
    agent_key,
    parse_hook_input,
    render_answer,
)

SESSION = "75ed4efb-ff36-4160-9d16-d209eefb574b"
PRE = {
    "session_id": SESSION,
    "transcript_path": "/home/dev/.claude/projects/-home-dev-proj/x.jsonl",
    "cwd": "/home/dev/proj",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "ls", "description": "List files"},
    "tool_use_id": "toolu_000_0",
}


def _parse(payload: object) -> HookInput:
    result = parse_hook_input(CLAUDE_CODE, json.dumps(payload).encode())
    assert isinstance(result, Success), result
    parsed: HookInput = result.unwrap()
    return parsed


def _reason(data: bytes) -> str:
    result = parse_hook_input(CLAUDE_CODE, data)
    assert isinstance(result, Failure)
    reason: str = result.failure()
    return reason


def test_pre_tool_use_of_the_main_agent_is_a_call_of_the_session() -> None:
    parsed = _parse(PRE)
    assert parsed == HookInput(
        "PreToolUse",
        "/home/dev/proj",
        AgentEvent(SESSION, ToolCallFinished(SESSION, "Bash", PRE["tool_input"])),
    )


def test_a_subagents_call_is_its_own_agent() -> None:
    parsed = _parse({**PRE, "agent_id": "a9db1cda3af2c2cce", "agent_type": "claude"})
    agent = f"{SESSION}/a9db1cda3af2c2cce"
    assert agent_key(SESSION, "a9db1cda3af2c2cce") == agent
    assert parsed.action == AgentEvent(SESSION, ToolCallFinished(agent, "Bash", PRE["tool_input"]))


def test_codex_pre_tool_use() -> None:
    payload = {
        "session_id": "01a237c4-a07f-7b71-97e2-ba1894ae8275",
        "turn_id": "01a237c4-a095-7243-b8ab-68be61d0a197",
        "cwd": "/home/dev/proj",
        "hook_event_name": "PreToolUse",
        "model": "fake-model",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "call_0",
    }
    session = payload["session_id"]
    assert _parse(payload).action == AgentEvent(
        str(session), ToolCallFinished(str(session), "Bash", {"command": "ls"})
    )


def test_missing_tool_input_is_a_call_without_arguments() -> None:
    payload = {k: v for k, v in PRE.items() if k != "tool_input"}
    assert _parse(payload).action == AgentEvent(SESSION, ToolCallFinished(SESSION, "Bash", None))


def test_a_prompt_resets_its_own_agent_only() -> None:
    prompt = {"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    assert _parse(prompt).action == AgentEvent(SESSION, PromptSubmitted(SESSION))
    # Codex 0.171.0 sends the task a subagent starts with as that subagent's prompt.
    subagent = {**prompt, "agent_id": "01a238df-8f67", "agent_type": "default"}
    assert _parse(subagent).action == AgentEvent(
        SESSION, PromptSubmitted(f"{SESSION}/01a238df-8f67")
    )


def test_subagent_stop_disposes_of_the_subagent() -> None:
    stop = {"session_id": SESSION, "hook_event_name": "SubagentStop", "agent_id": "a1"}
    assert _parse(stop).action == AgentEvent(SESSION, AgentDisposed(f"{SESSION}/a1"))


def test_session_end_ends_the_session() -> None:
    end = {"session_id": SESSION, "hook_event_name": "SessionEnd", "reason": "other"}
    parsed = _parse(end)
    assert parsed.action == SessionEnded(SESSION)
    assert parsed.cwd is None


def test_post_tool_use_reports_the_calls_result() -> None:
    # As Claude Code 2.1.197 sent it: the call's input again, and its response.
    response = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
    post = {**PRE, "hook_event_name": "PostToolUse", "tool_response": response, "duration_ms": 9}
    returned = ToolCallReturned(SESSION, "Bash", PRE["tool_input"], response)
    assert _parse(post).action == AgentEvent(SESSION, returned)
    inside = _parse({**post, "agent_id": "a9"}).action
    assert isinstance(inside, AgentEvent)
    assert inside.event == replace(returned, agent=f"{SESSION}/a9")
    # Codex 0.171.0 sends a command's output as a string; a missing response is no result.
    codex = {**post, "tool_response": ""}
    assert _parse(codex).action == AgentEvent(SESSION, replace(returned, result=""))
    unknown = {k: v for k, v in post.items() if k != "tool_response"}
    assert _parse(unknown).action == AgentEvent(SESSION, replace(returned, result=None))
    assert _reason(json.dumps({**post, "tool_name": 1}).encode()) == (
        "PostToolUse: tool_name is missing or not a string"
    )


def test_post_tool_use_failure_reports_the_error_as_the_result() -> None:
    # As Claude Code 2.1.197 sent it for `cat missing.txt`, which exited 1.
    error = "Exit code 1\ncat: missing.txt: No such file or directory"
    failure: dict[str, object] = {**PRE, "hook_event_name": "PostToolUseFailure", "error": error}
    failure["is_interrupt"] = False
    returned = ToolCallReturned(SESSION, "Bash", PRE["tool_input"], {"error": error}, True)
    assert _parse(failure).action == AgentEvent(SESSION, returned)
    # An interrupted call returned nothing known, and did not fail: it was stopped.
    interrupted = replace(returned, result=None, failed=False)
    assert _parse({**failure, "is_interrupt": True}).action == AgentEvent(SESSION, interrupted)
    # One whose error is not given failed, with no text.
    without = {k: v for k, v in failure.items() if k != "error"}
    assert _parse(without).action == AgentEvent(SESSION, replace(returned, result=None))


def test_other_events_are_unused_and_need_no_session() -> None:
    for name in ("Stop", "SessionStart", "Notification"):
        assert _parse({"hook_event_name": name, "cwd": 7}).action == Unused()


def test_unusable_inputs_say_why_without_quoting_them() -> None:
    secret = b'{"hook_event_name": "PreToolUse", "tool_input": {"password": "hunter2"}}'
    assert _reason(secret) == "PreToolUse: session_id is missing or not a string"
    assert "hunter2" not in _reason(secret)
    assert _reason(b"\xff not json") == "stdin is not JSON"
    assert _reason(b"[" * 100_000) == "stdin is not JSON"
    for document, kind in [
        (b"[1, 2]", "an array"),
        (b"null", "null"),
        (b'"s"', "a string"),
        (b"3", "a number"),
        (b"-1.5e3", "a number with a fraction"),
        (b"true", "a boolean"),
    ]:
        assert _reason(document) == f"stdin is {kind}, not a JSON object"
    assert _reason(b"{}") == "hook_event_name is missing or not a string"
    base = {"session_id": SESSION, "hook_event_name": "PreToolUse"}
    assert _reason(json.dumps({**base, "session_id": ""}).encode()).endswith(
        "session_id is missing or not a string"
    )
    assert (
        _reason(json.dumps({**base, "agent_id": 3}).encode())
        == "PreToolUse: agent_id is not a string"
    )
    assert _reason(json.dumps(base).encode()) == "PreToolUse: tool_name is missing or not a string"
    stop = {"session_id": SESSION, "hook_event_name": "SubagentStop"}
    assert _reason(json.dumps(stop).encode()) == "SubagentStop: agent_id is missing"


def _reminders(count: int) -> list[Reminder]:
    state = GuardState.initial()
    fired: list[Reminder] = []
    for _ in range(count):
        state, reminders = reduce(state, ToolCallFinished("a", "Bash", {"command": "ls"}))
        fired.extend(reminders)
    return fired


def test_claude_code_gets_the_body_and_codex_the_whole_text() -> None:
    (gentle,) = _reminders(3)
    claude = json.loads(render_answer(CLAUDE_CODE, "PreToolUse", [gentle]))
    codex = json.loads(render_answer(CODEX, "PreToolUse", [gentle]))
    assert claude == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": gentle.body}
    }
    assert "<system-reminder>" not in claude["hookSpecificOutput"]["additionalContext"]
    assert codex["hookSpecificOutput"]["additionalContext"] == gentle.text


def test_nothing_to_say_is_an_empty_answer() -> None:
    (gentle,) = _reminders(3)
    assert render_answer(CLAUDE_CODE, "PreToolUse", []) == b""
    assert render_answer(CODEX, "UserPromptSubmit", [gentle]) == b""
    assert render_answer(CLAUDE_CODE, "SessionEnd", [], "refused") == b""


def test_a_refused_call_is_denied_with_the_reason_in_claude_codes_form() -> None:
    # Gemini CLI has a form of its own (test_hosts.py).
    for dialect in (d for d in DIALECTS.values() if d.answer is CLAUDE_CODE.answer):
        answer = json.loads(render_answer(dialect, "PreToolUse", [], "refused: enough"))
        assert answer == {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "refused: enough",
            }
        }


def test_a_refused_call_still_carries_its_reminders() -> None:
    (gentle,) = _reminders(3)
    answer = json.loads(render_answer(CLAUDE_CODE, "PreToolUse", [gentle], "refused: enough"))
    output = answer["hookSpecificOutput"]
    assert (output["permissionDecision"], output["additionalContext"]) == ("deny", gentle.body)


# A host whose input nests the tool call and names its ids otherwise: one row, no code.
NESTED = CLAUDE_CODE._replace(
    name="nested",
    event_field="hookName",
    session_field="taskId",
    agent_field="agent.id",
    tool_field="tool_call.name",
    arguments_field="tool_call.input",
)


def test_a_dialect_reads_its_fields_by_dotted_paths() -> None:
    call = {
        "hookName": "PreToolUse",
        "taskId": "t1",
        "agent": {"id": "sub"},
        "tool_call": {"name": "read_file", "input": {"path": "a.py"}},
    }
    parsed = parse_hook_input(NESTED, json.dumps(call).encode()).unwrap()
    assert parsed.action == AgentEvent(
        "t1", ToolCallFinished("t1/sub", "read_file", {"path": "a.py"})
    )
    # A path through something that is not an object leads nowhere, and says which field.
    for broken in ({**call, "tool_call": "read_file"}, {**call, "tool_call": None}):
        reason = parse_hook_input(NESTED, json.dumps(broken).encode()).failure()
        assert reason == "PreToolUse: tool_call.name is missing or not a string"
    without = {k: v for k, v in call.items() if k != "agent"}
    parsed = parse_hook_input(NESTED, json.dumps(without).encode()).unwrap()
    assert parsed.action == AgentEvent("t1", ToolCallFinished("t1", "read_file", {"path": "a.py"}))
    assert parse_hook_input(NESTED, b'{"hook_event_name": "PreToolUse"}').failure() == (
        "hookName is missing or not a string"
    )


def test_an_event_outside_the_dialects_table_is_unused() -> None:
    # Codex reports a failed command with PostToolUse: PostToolUseFailure is not in its table.
    failure = {**PRE, "hook_event_name": "PostToolUseFailure", "error": "Exit code 1"}
    parsed = parse_hook_input(CODEX, json.dumps(failure).encode()).unwrap()
    assert parsed.action == Unused()
    assert render_answer(CODEX, "PostToolUseFailure", _reminders(3)) == b""


def test_a_codex_result_says_nothing_of_how_its_command_ended() -> None:
    # Recorded with the real Codex 0.171.0 (fixtures/codex/failure.hooks.jsonl: exec_command
    # `echo step 0`, then `echo 'pre-commit: ruff failed' >&2; exit 1`, then `false`; the
    # model's copies of the last two outputs said "Process exited with code 1"). Its PostToolUse
    # input holds the command's output alone, so no result is failed.
    path = Path(__file__).parent / "fixtures" / "codex" / "failure.hooks.jsonl"
    returned = []
    for line in path.read_text().splitlines():
        parsed = parse_hook_input(CODEX, line.encode()).unwrap()
        if isinstance(parsed.action, AgentEvent) and isinstance(
            parsed.action.event, ToolCallReturned
        ):
            returned.append(parsed.action.event)
    results = [(r.arguments, r.result, r.failed) for r in returned]
    assert results == [
        ({"command": "echo step 0"}, "step 0\n", False),
        (
            {"command": "echo 'pre-commit: ruff failed' >&2; exit 1"},
            "pre-commit: ruff failed\n",
            False,
        ),
        ({"command": "false"}, "", False),
    ]
