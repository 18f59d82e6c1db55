"""Qwen Code's PostToolUse as a call's result and its PostToolUseFailure as a failed call's
error, read as its chat records them, with the reminders its PreToolUse left still delivered."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from repeat_guard import ToolCallReturned
from repeat_guard_hooks import (
    GEMINI_SHELL,
    QWEN_CODE,
    QWEN_LABEL,
    AfterCall,
    HookOptions,
    gemini_result,
    hook_input_or_reason,
    qwen_result,
    run_hook,
)

SESSION = "s1"
LOG = {"command": "tail -n 5 build.log"}
# Qwen Code 0.24.4's answer for a command sent to the background (id and pid new every time).
STARTED = (
    "Background shell started.\nid: bg_{0}\npid: {1}\n"
    "output file: /tmp/q/shell-bg_{0}.output\nProcess Group PGID: (none)"
)


def _shell(text: str) -> dict[str, str]:
    # Qwen Code 0.24.4's tool_response for run_shell_command, as its PostToolUse sends it.
    return {"llmContent": text, "returnDisplay": text}


def _payload(event: str, tool: str, arguments: object, extra: Mapping[str, object]) -> bytes:
    payload: dict[str, object] = {
        "session_id": SESSION,
        "cwd": "/nowhere",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": arguments,
        **extra,
    }
    return json.dumps(payload).encode()


def _run(
    options: HookOptions, calls: Sequence[tuple[str, object, str, Mapping[str, object]]]
) -> list[str | None]:
    """Each call as Qwen Code reports it (PreToolUse, then ``event`` with ``extra``): the
    reminder text each of those answered with (PreToolUse never says one)."""
    said: list[str | None] = []
    for tool, arguments, event, extra in calls:
        before = run_hook(options, _payload("PreToolUse", tool, arguments, {}), 100.0)
        assert (before.status, before.stdout, before.stderr) == (0, b"", "")
        after = run_hook(options, _payload(event, tool, arguments, extra), 100.0)
        assert (after.status, after.stderr) == (0, "")
        answer = json.loads(after.stdout or "null")
        said.append(None if answer is None else answer["hookSpecificOutput"]["additionalContext"])
    return said


def test_qwen_results_read_as_gemini_results_less_its_background_ids() -> None:
    first = _shell(STARTED.format("0a1b2c3d", 52114))
    again = _shell(STARTED.format("99887766", 60221))
    assert qwen_result(GEMINI_SHELL, first) == qwen_result(GEMINI_SHELL, again)
    assert gemini_result(GEMINI_SHELL, first) != gemini_result(GEMINI_SHELL, again)
    assert qwen_result(GEMINI_SHELL, _shell("Output: x\nExit Code: 2")) == (
        _shell("Output: x\nExit Code: 2"),
        True,
    )


def test_a_post_tool_use_failure_is_the_failed_calls_error() -> None:
    data = _payload("PostToolUseFailure", GEMINI_SHELL, LOG, {"error": "Exit Code: 1"})
    read = hook_input_or_reason(QWEN_CODE, data)
    assert not isinstance(read, str)
    failed = ToolCallReturned(SESSION, GEMINI_SHELL, LOG, {"error": "Exit Code: 1"}, True)
    assert read.action == AfterCall(SESSION, SESSION, failed)
    unnamed = json.dumps({"session_id": SESSION, "hook_event_name": "PostToolUseFailure"})
    read = hook_input_or_reason(QWEN_CODE, unnamed.encode())
    assert not isinstance(read, str)
    assert read.action == AfterCall(SESSION, SESSION, None)


def test_a_background_start_repeated_is_a_loop_and_a_growing_poll_is_not(tmp_path: Path) -> None:
    start = {"command": "make build", "is_background": True}
    starts = [
        (
            GEMINI_SHELL,
            start,
            "PostToolUse",
            {"tool_response": _shell(STARTED.format(f"0000000{n}", n))},
        )
        for n in (1, 2, 3)
    ]
    said = _run(HookOptions(QWEN_CODE, str(tmp_path / "a.sqlite3"), preset="gemini"), starts)
    assert [text is not None for text in said] == [False, False, True]
    assert str(said[2]).startswith(QWEN_LABEL)
    polls = [
        (GEMINI_SHELL, LOG, "PostToolUse", {"tool_response": _shell("line\n" * n)})
        for n in (1, 2, 3, 4)
    ]
    options = HookOptions(QWEN_CODE, str(tmp_path / "b.sqlite3"), preset="gemini")
    assert _run(options, polls) == [None] * 4


def test_a_failing_shell_command_retried_between_edits_gets_the_retry_reminder(
    tmp_path: Path,
) -> None:
    config = tmp_path / "guard.toml"
    config.write_text("retryWindow = 12\n")
    options = HookOptions(QWEN_CODE, str(tmp_path / "state.sqlite3"), config=str(config))
    commit = {"command": "git commit -m fix"}
    calls: list[tuple[str, object, str, dict[str, object]]] = []
    for n in (1, 2, 3):
        calls.append((GEMINI_SHELL, commit, "PostToolUseFailure", {"error": "ruff failed"}))
        edit = {"file_path": "a.py", "new_string": f"v{n}"}
        calls.append(("edit", edit, "PostToolUse", {"tool_response": {"llmContent": "ok"}}))
    said = _run(options, calls)
    assert [n for n, text in enumerate(said) if text is not None] == [4]
    assert "has now failed 3 times the same way" in str(said[4])
