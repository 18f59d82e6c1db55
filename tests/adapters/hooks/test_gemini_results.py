"""Gemini CLI's AfterTool as a call's result: read as its chat records it, and the reminders its
BeforeTool left still delivered."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from repeat_guard_hooks import (
    GEMINI,
    GEMINI_SHELL,
    AfterCall,
    HookOptions,
    gemini_result,
    hook_input_or_reason,
    run_hook,
)

SESSION = "s1"
LOG = {"command": "tail -n 5 build.log"}


def _shell(lines: str, pgid: int) -> dict[str, str]:
    # Gemini CLI 0.61.0's tool_response for run_shell_command, as its AfterTool sends it.
    text = f"<untrusted_context>\nOutput: {lines}\nProcess Group PGID: {pgid}\n</untrusted_context>"
    return {"llmContent": text, "returnDisplay": lines}


def _payload(event: str, tool: str, arguments: object, response: object = None) -> bytes:
    payload: dict[str, object] = {
        "session_id": SESSION,
        "cwd": "/nowhere",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": arguments,
    }
    if response is not None:
        payload["tool_response"] = response
    return json.dumps(payload).encode()


def _run(options: HookOptions, calls: Sequence[tuple[str, object, object]]) -> list[str | None]:
    """Each call as Gemini CLI reports it (BeforeTool, then AfterTool with its response): the
    reminder text each AfterTool answered with (BeforeTool never says one)."""
    said: list[str | None] = []
    for tool, arguments, response in calls:
        before = run_hook(options, _payload("BeforeTool", tool, arguments), 100.0)
        assert (before.status, before.stdout, before.stderr) == (0, b"", "")
        after = run_hook(options, _payload("AfterTool", tool, arguments, response), 100.0)
        assert (after.status, after.stderr) == (0, "")
        answer = json.loads(after.stdout or "null")
        said.append(None if answer is None else answer["hookSpecificOutput"]["additionalContext"])
    return said


@pytest.mark.parametrize(
    ("tool", "response", "read"),
    [
        ("read_file", "text", ("text", False)),
        ("read_file", None, (None, False)),
        (
            GEMINI_SHELL,
            {"llmContent": "Output: a\nBackground PIDs: 41, 42\nProcess Group PGID: 40\n", "x": 1},
            ({"llmContent": "Output: a\n", "x": 1}, False),
        ),
        (
            GEMINI_SHELL,
            {"llmContent": "Command moved to background (PID: 3841)", "returnDisplay": "(PID: 9)"},
            (
                {
                    "llmContent": "Command moved to background (PID: <n>)",
                    "returnDisplay": "(PID: <n>)",
                },
                False,
            ),
        ),
        (
            GEMINI_SHELL,
            {"llmContent": "Output: x\nExit Code: 2"},
            ({"llmContent": "Output: x\nExit Code: 2"}, True),
        ),
        (
            GEMINI_SHELL,
            {"llmContent": "Output: x\nExit Code: 0"},
            ({"llmContent": "Output: x\nExit Code: 0"}, False),
        ),
        (
            GEMINI_SHELL,
            {"llmContent": "Output: Exit Code: 2"},
            ({"llmContent": "Output: Exit Code: 2"}, False),
        ),
        # A file that says so is not a command that failed.
        ("read_file", {"llmContent": "Exit Code: 2"}, ({"llmContent": "Exit Code: 2"}, False)),
        (
            GEMINI_SHELL,
            {"llmContent": [{"text": "Exit Code: 2"}]},
            ({"llmContent": [{"text": "Exit Code: 2"}]}, False),
        ),
    ],
)
def test_gemini_results_read_as_the_chat_records_them(
    tool: str, response: object, read: object
) -> None:
    assert gemini_result(tool, response) == read


def test_an_after_tool_without_a_tool_name_still_delivers_its_reminders() -> None:
    data = json.dumps({"session_id": SESSION, "hook_event_name": "AfterTool"}).encode()
    read = hook_input_or_reason(GEMINI, data)
    assert not isinstance(read, str)
    assert read.action == AfterCall(SESSION, SESSION, None)


def test_a_shell_poll_whose_output_grows_is_no_loop_under_the_gemini_preset(
    tmp_path: Path,
) -> None:
    polls = [(GEMINI_SHELL, LOG, _shell("\n".join(["line"] * n), 100 + n)) for n in (1, 2, 3, 4)]
    state = str(tmp_path / "state.sqlite3")
    assert _run(HookOptions(GEMINI, state), polls) == [None] * 4
    said = _run(HookOptions(GEMINI, str(tmp_path / "seed.sqlite3"), preset="seed"), polls)
    assert [text is not None for text in said] == [False, False, True, False]
    assert "repeating the exact same tool call" in str(said[2])
    assert not (tmp_path / "state.sqlite3.log").exists()


def test_the_same_output_with_a_new_process_group_each_time_is_a_loop(tmp_path: Path) -> None:
    polls = [(GEMINI_SHELL, LOG, _shell("done", 100 + n)) for n in (1, 2, 3, 4)]
    said = _run(HookOptions(GEMINI, str(tmp_path / "state.sqlite3")), polls)
    assert [text is not None for text in said] == [False, False, True, False]


def test_a_result_the_configuration_ignores_leaves_the_reminder_due(tmp_path: Path) -> None:
    # read_file is no poll of the gemini preset: its results change nothing, and the third
    # identical read is still reminded at its AfterTool.
    reads = [("read_file", {"file_path": "a.py"}, {"llmContent": f"v{n}"}) for n in (1, 2, 3)]
    said = _run(HookOptions(GEMINI, str(tmp_path / "state.sqlite3")), reads)
    assert [text is not None for text in said] == [False, False, True]


def test_a_failing_shell_command_retried_between_edits_gets_the_retry_reminder(
    tmp_path: Path,
) -> None:
    config = tmp_path / "guard.toml"
    config.write_text("retryWindow = 12\n")
    options = HookOptions(GEMINI, str(tmp_path / "state.sqlite3"), config=str(config))
    commit = {"command": "git commit -m fix"}
    calls: list[tuple[str, object, object]] = []
    for n in (1, 2, 3):
        calls.append((GEMINI_SHELL, commit, _shell("pre-commit: ruff failed\nExit Code: 1", n)))
        calls.append(
            ("replace", {"file_path": "a.py", "new_string": f"v{n}"}, {"llmContent": "ok"})
        )
    said = _run(options, calls)
    assert [n for n, text in enumerate(said) if text is not None] == [4]
    assert "has now failed 3 times the same way" in str(said[4])
