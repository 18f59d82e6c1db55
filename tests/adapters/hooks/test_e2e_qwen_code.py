"""The real Qwen Code, headless and offline, with the hooks ``repeat-guard install qwen-code``
writes.

The model is a scripted OpenAI-compatible stand-in (Chat Completions) on 127.0.0.1 that logs
every request; the checks are on what reached it. Qwen Code 0.24.4 drops a ``PreToolUse``
answer's ``additionalContext`` and appends a ``PostToolUse`` one to the call's result (with
``<`` and ``>`` escaped), so the reminders a call's ``PreToolUse`` counted wait in the store
for its ``PostToolUse``; it halts a run by itself at the fifth identical call in a row.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import GuardConfig, Reminder
from repeat_guard_hooks import QWEN_LABEL

from .agents import (
    Host,
    Repeated,
    Sandbox,
    check_install,
    host_fixture,
    installed,
    is_subagent,
    looping,
    run_qwen,
    texts,
    with_subagent,
)
from .standins import Call, ChatCompletionsStandIn, Say, Step, growing_log

pytestmark = pytest.mark.e2e

qwen = host_fixture("qwen-code", "@qwen-code/qwen-code", "qwen")

LS = {"command": "ls"}
LS_CALL = Call("run_shell_command", LS)
LOOP = Repeated("run_shell_command", LS)
SUBAGENT = Call(
    "agent", {"description": "sub", "prompt": "SUBTASK: list", "subagent_type": "general-purpose"}
)


def _labelled(reminder: Reminder) -> str:
    # What the model reads after the call's own output: the label, then the reminder's body.
    return f"{QWEN_LABEL}{reminder.body}"


def _is_prompt(message: Mapping[str, Any]) -> bool:
    # The user's own words: not Qwen Code's context block nor its note that a subagent ended.
    said = [t for t in texts(message) if not t.startswith(("<system-reminder>", "<task-"))]
    return message.get("role") == "user" and bool(said)


def _since_prompt(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    messages: list[Mapping[str, Any]] = request["messages"]
    last = max((i for i, m in enumerate(messages) if _is_prompt(m)), default=-1)
    return messages[last + 1 :]


def _results(request: Mapping[str, Any]) -> list[str]:
    """The results of the calls since the prompt, as the model reads them."""
    return ["".join(texts(m)) for m in _since_prompt(request) if m.get("role") == "tool"]


def _guard_text(result: str) -> list[str]:
    """What the guard appended to a call's result (after a blank line), if anything."""
    _, found, said = result.partition(f"\n\n{QWEN_LABEL}")
    return [QWEN_LABEL + said] if found else []


def _seen(request: Mapping[str, Any]) -> tuple[int, list[str]]:
    """How many calls returned since the prompt, and what the guard appended to the results
    the model reads for the first time (those after its last answer)."""
    messages: list[Mapping[str, Any]] = request["messages"]
    answered = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    new = ["".join(texts(m)) for m in messages[answered + 1 :] if m.get("role") == "tool"]
    return len(_results(request)), [said for result in new for said in _guard_text(result)]


def _turns(model: ChatCompletionsStandIn) -> list[Mapping[str, Any]]:
    return [r for r in model.model_requests() if r.get("tools")]


def _done(request: Mapping[str, Any]) -> int:
    return len(_results(request))


def test_install_writes_entries_that_run_this_executable(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    path = sandbox.project / ".qwen" / "settings.json"
    events = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"]
    check_install(sandbox, "qwen-code", path, [*events, "SubagentStop", "SessionEnd"])


def test_a_loop_gets_the_gentle_reminder_before_qwen_code_halts_it(
    tmp_path: Path, qwen: Host
) -> None:
    sandbox = installed(tmp_path, "qwen-code")
    with ChatCompletionsStandIn(looping(LS_CALL, 6, _done, side=True)) as model:
        result = run_qwen(qwen, sandbox, model.url, "list the files")
    seen = [_seen(r) for r in _turns(model)]
    assert seen == [(0, []), (1, []), (2, []), (3, [_labelled(LOOP.reminder(3))]), (4, [])]
    # Qwen Code's own guard stops the fifth identical call before any hook sees it.
    assert result["is_error"] is True
    assert "consecutive_identical_tool_calls" in result["error"]["message"]
    assert sandbox.errors() == []


def test_the_detailed_reminder_reaches_the_model_at_its_threshold(
    tmp_path: Path, qwen: Host
) -> None:
    # The default detailed reminder is due at the fifth call, which Qwen Code never runs.
    sandbox = installed(tmp_path, "qwen-code", "thresholds = [3, 4]\n")
    with ChatCompletionsStandIn(looping(LS_CALL, 4, _done, side=True)) as model:
        result = run_qwen(qwen, sandbox, model.url, "list the files")
    assert result["result"] == "done"
    detailed = _labelled(LOOP.reminder(4, GuardConfig(thresholds=(3, 4))))
    assert "identical arguments" in detailed
    seen = [_seen(r) for r in _turns(model)]
    gentle = _labelled(LOOP.reminder(3))
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, [detailed])]
    assert sandbox.errors() == []


def test_a_subagent_keeps_its_own_chain(tmp_path: Path, qwen: Host) -> None:
    # The agent call itself is transparent, so the parent's ls calls around it form one run.
    sandbox = installed(tmp_path, "qwen-code", 'exclude = ["agent"]\n')
    with ChatCompletionsStandIn(with_subagent(LS_CALL, SUBAGENT, _done, side=True)) as model:
        run_qwen(qwen, sandbox, model.url, "list the files")
    turns = _turns(model)
    sub = [_seen(r) for r in turns if is_subagent(r)]
    main = [_seen(r) for r in turns if not is_subagent(r)]
    gentle = _labelled(LOOP.reminder(3))
    assert sub == [(0, []), (1, []), (2, []), (3, [gentle])]
    # One shared chain would have made the parent's last ls the 6th in a row (detailed). The
    # subagent runs in the background: the parent gets a turn of its own when it ends.
    assert main[:5] == [(0, []), (1, []), (2, []), (3, []), (4, [gentle])]
    assert all(turn == (4, []) for turn in main[5:])
    assert sandbox.errors() == []


def test_a_new_prompt_starts_the_chain_over(tmp_path: Path, qwen: Host) -> None:
    sandbox = installed(tmp_path, "qwen-code")
    calls = {"list the files": 2, "again, please": 3}

    def script(request: Mapping[str, Any]) -> Step:
        if not request.get("tools"):
            return Say("ok")
        prompt = next(m for m in reversed(request["messages"]) if _is_prompt(m))
        wanted = next((n for text, n in calls.items() if text in "".join(texts(prompt))), 0)
        return (LS_CALL,) if len(_results(request)) < wanted else Say("done")

    with ChatCompletionsStandIn(script) as model:
        run_qwen(qwen, sandbox, model.url, "list the files")
        first = len(_turns(model))
        run_qwen(qwen, sandbox, model.url, "again, please", "--continue")
    turns = _turns(model)
    assert [_seen(r) for r in turns[:first]] == [(0, []), (1, []), (2, [])]
    # Without the reset the second prompt's first call would be the third in a row.
    gentle = _labelled(LOOP.reminder(3))
    assert [_seen(r) for r in turns[first:]] == [(0, []), (1, []), (2, []), (3, [gentle])]
    assert sandbox.errors() == []


def test_deny_at_refuses_the_call_and_the_model_reads_why(tmp_path: Path, qwen: Host) -> None:
    sandbox = installed(tmp_path, "qwen-code", "denyAt = 3\n")
    with ChatCompletionsStandIn(looping(LS_CALL, 4, _done, side=True)) as model:
        result = run_qwen(qwen, sandbox, model.url, "list the files")
    assert result["result"] == "done"
    results = _results(_turns(model)[-1])
    assert [r.startswith("Command: ls") for r in results[:2]] == [True, True]
    # The third never ran: its result is the refusal, with the reminder due at it; the fourth,
    # refused too, reads the refusal alone.
    assert results[2] == f"{LOOP.refusal(3)}\n\n{_labelled(LOOP.reminder(3))}"
    assert results[3].startswith("refused: this would be the 4th identical call")
    assert _guard_text(results[3]) == []
    assert sandbox.errors() == []


BUILT = ["compiling a", "compiling b", "compiling c", "linking"]


def _poll(tool: str, log: Path) -> Call:
    """A poll of the build's log: ``tail`` through the shell, or ``read_file`` of it (as Qwen
    Code says to read a background command's output file)."""
    if tool == "run_shell_command":
        return Call(tool, {"command": f"tail -n 20 {log.name}"})
    return Call(tool, {"file_path": str(log)})


@pytest.mark.parametrize("tool", ["run_shell_command", "read_file"])
@pytest.mark.parametrize(("preset", "reminded"), [(None, []), ("seed", [3])])
def test_a_poll_whose_output_grows_follows_the_installed_preset(
    tmp_path: Path, qwen: Host, tool: str, preset: str | None, reminded: list[int]
) -> None:
    # A build writes one line more to its log before each of four identical polls (the script
    # writes it, as the build would, before asking for the poll). PostToolUse brings each
    # poll's output to the guard: under Qwen Code's own preset (a plain install), which names
    # its shell and read_file, a poll whose output changed is progress; under --preset seed the
    # third poll is reminded, whatever it read.
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("qwen-code", *([] if preset is None else ["--preset", preset]))
    log = sandbox.project / "build.log"
    poll = _poll(tool, log)

    script = growing_log(log, BUILT, (poll,), _done)
    with ChatCompletionsStandIn(script) as model:
        result = run_qwen(qwen, sandbox, model.url, "wait for the build")
    assert result["result"] == "done"
    seen = [_seen(r) for r in _turns(model)]
    assert [count for count, _ in seen] == [0, 1, 2, 3, 4]
    assert [count for count, said in seen if said] == reminded
    if reminded:
        assert seen[3][1] == [_labelled(Repeated(poll.tool, poll.arguments).reminder(3))]
    # Each poll read one line more than the one before. Qwen Code 0.24.4 on a loaded machine now
    # and then captures no output of a command that ran ("Output: (empty)", seen once in a run
    # beside another test job): such a poll read nothing, and the last one read every line.
    results = _results(_turns(model)[-1])
    read = [sum(line in output for line in BUILT) for output in results]
    assert all(n == i + 1 or "Output: (empty)" in results[i] for i, n in enumerate(read))
    assert read.count(0) <= 1
    assert read[-1] == len(BUILT)
    assert sandbox.errors() == []


def test_a_failing_shell_command_is_a_failure_the_retry_window_hears(
    tmp_path: Path, qwen: Host
) -> None:
    # A command that exits non-zero, retried between edits: Qwen Code reports it to
    # PostToolUseFailure, whose error counts as the call's failed result.
    sandbox = installed(tmp_path, "qwen-code", "retryWindow = 12\n")
    fail = Call("run_shell_command", {"command": "echo ruff failed; exit 1"})

    def script(request: Mapping[str, Any]) -> Step:
        done = _done(request)
        if done >= 6:
            return Say("done")
        if done % 2:
            return (Call("run_shell_command", {"command": f"echo v{done} > a.txt"}),)
        return (fail,)

    with ChatCompletionsStandIn(script) as model:
        run_qwen(qwen, sandbox, model.url, "commit the fix")
    seen = [_seen(r) for r in _turns(model)]
    assert [count for count, said in seen if said] == [5]
    assert "has now failed 3 times the same way" in seen[5][1][0]
    assert sandbox.errors() == []
