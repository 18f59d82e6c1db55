"""The real GitHub Copilot CLI binary, offline, with the hooks ``repeat-guard install`` writes.

Copilot runs against a scripted Chat Completions stand-in on 127.0.0.1 (its own model provider,
``COPILOT_OFFLINE=true``), which logs every request; the checks are on what reached it.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import HOST_PRESETS, Reminder
from repeat_guard_hooks import COPILOT

from .agents import (
    Host,
    Repeated,
    Sandbox,
    check_install,
    contexts_after_tool,
    host_fixture,
    installed,
    is_subagent,
    looping,
    run_copilot,
    since_prompt,
    with_subagent,
)
from .standins import Call, ChatCompletionsStandIn, Say, Step, growing_log
from .test_e2e_daemon import _start_guard, _status, _stop_guard

pytestmark = pytest.mark.e2e

copilot = host_fixture("copilot", "@github/copilot", "copilot")

LS = {"command": "ls", "description": "List files"}
LS_CALL = Call("bash", LS)
# Copilot reports its bash tool to hooks by Claude Code's name.
LOOP = Repeated("Bash", LS)
# What Copilot puts before a preToolUse answer's additionalContext, as the model reads it.
MARK = "Additional context from preToolUse hook:\n"
# What Copilot puts before a postToolUseFailure answer's context: a user message of its own
# after the failed call's result.
FAILURE_MARK = 'Tool "view" failed. Additional guidance from postToolUseFailure hooks:\n'


def _wrapped(reminder: Reminder) -> str:
    # Copilot adds a line of its own and no envelope: the model sees the core's one.
    return f"{MARK}{reminder.text}"


def _is_prompt(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and not content.startswith(("Additional context from", FAILURE_MARK))
    )


def _is_result(message: Mapping[str, Any]) -> int:
    return int(message.get("role") == "tool")


def _prompts(request: Mapping[str, Any]) -> int:
    return since_prompt(request["messages"], _is_prompt, _is_result)[0]


def _results_since_prompt(request: Mapping[str, Any]) -> int:
    return since_prompt(request["messages"], _is_prompt, _is_result)[1]


def _seen(request: Mapping[str, Any]) -> tuple[int, list[str]]:
    return _results_since_prompt(request), contexts_after_tool(request, MARK)


def _scripted_results(request: Mapping[str, Any]) -> int:
    # The results of the calls the stand-in asked for (its ids call_N_M), not of a read_bash
    # Copilot makes itself when a background command ends (after a system_notification).
    calls = (m for m in request["messages"] if m.get("role") == "tool")
    return sum(str(m.get("tool_call_id", "")).startswith("call_") for m in calls)


def _tool_outputs(request: Mapping[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m.get("role") == "tool"]


def test_install_writes_entries_that_run_this_executable(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    path = sandbox.project / ".github" / "hooks" / "repeat-guard.json"
    # With the preset's polls' results alone (a tool matcher).
    events = [
        "PreToolUse",
        "SessionEnd",
        "SubagentStop",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
    ]
    check_install(sandbox, "copilot", path, events)


def test_a_loop_gets_the_gentle_then_the_detailed_reminder(tmp_path: Path, copilot: Host) -> None:
    sandbox = installed(tmp_path, "copilot")
    with ChatCompletionsStandIn(looping(LS_CALL, 6, _results_since_prompt)) as model:
        run_copilot(copilot, sandbox, model.url, "list the files")
    seen = [_seen(r) for r in model.model_requests()]
    gentle, detailed = _wrapped(LOOP.reminder(3)), _wrapped(LOOP.reminder(5))
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, []), (5, [detailed]), (6, [])]
    assert gentle.count("<system-reminder>") == 1
    assert sandbox.errors() == []


def test_a_subagent_keeps_its_own_chain(tmp_path: Path, copilot: Host) -> None:
    # The task call itself is transparent, so the parent's ls calls around it form one run.
    sandbox = installed(tmp_path, "copilot", 'exclude = ["Agent"]\n')
    task = {"description": "sub", "prompt": "SUBTASK: list", "agent_type": "task", "name": "sub"}
    script = with_subagent(LS_CALL, Call("task", task), _results_since_prompt)
    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "list the files")
    requests = model.model_requests()
    sub = [_seen(r) for r in requests if is_subagent(r)]
    main = [_seen(r) for r in requests if not is_subagent(r)]
    gentle = _wrapped(LOOP.reminder(3))
    assert sub == [(0, []), (1, []), (2, []), (3, [gentle])]
    # One shared chain would have made the parent's last ls the 6th in a row (detailed).
    assert main == [(0, []), (1, []), (2, []), (3, []), (4, [gentle])]
    assert sandbox.errors() == []


def test_a_second_prompt_starts_the_chain_over(tmp_path: Path, copilot: Host) -> None:
    sandbox = installed(tmp_path, "copilot")
    calls_per_prompt = {1: 2, 2: 3}
    session = str(uuid.uuid4())

    def script(request: Mapping[str, Any]) -> Step:
        wanted = calls_per_prompt.get(_prompts(request), 0)
        return (LS_CALL,) if _results_since_prompt(request) < wanted else Say("done")

    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "list the files", "--session-id", session)
        run_copilot(copilot, sandbox, model.url, "again, please", "--resume", session)
    seen = [(_prompts(r), *_seen(r)) for r in model.model_requests()]
    # Without the reset the second prompt's first call would be the third in a row.
    assert seen == [
        (1, 0, []),
        (1, 1, []),
        (1, 2, []),
        (2, 0, []),
        (2, 1, []),
        (2, 2, []),
        (2, 3, [_wrapped(LOOP.reminder(3))]),
    ]
    assert sandbox.errors() == []


def test_deny_at_refuses_the_call_and_the_model_reads_why(tmp_path: Path, copilot: Host) -> None:
    sandbox = installed(tmp_path, "copilot", "denyAt = 4\n")
    with ChatCompletionsStandIn(looping(LS_CALL, 5, _results_since_prompt)) as model:
        run_copilot(copilot, sandbox, model.url, "list the files")
    requests = model.model_requests()
    assert [_results_since_prompt(r) for r in requests] == [0, 1, 2, 3, 4, 5]
    outputs = _tool_outputs(requests[-1])
    # The first three ran; the fourth and fifth never did: their results are the refusals.
    assert all("completed with exit code 0" in output for output in outputs[:3])
    assert outputs[3] == f"Denied by preToolUse hook: {LOOP.refusal(4)}"
    assert outputs[4].startswith("Denied by preToolUse hook: refused: this would be the 5th")
    # The refused fourth counted: the fifth carries the detailed reminder beside its refusal.
    assert _seen(requests[4])[1] == []
    assert _seen(requests[5])[1] == [_wrapped(LOOP.reminder(5))]
    assert sandbox.errors() == []


def test_a_bad_configuration_lets_every_call_run(tmp_path: Path, copilot: Host) -> None:
    sandbox = installed(tmp_path, "copilot", "thresholds = 3\n")
    with ChatCompletionsStandIn(looping(LS_CALL, 3, _results_since_prompt)) as model:
        run_copilot(copilot, sandbox, model.url, "list the files")
    # A preToolUse hook exiting non-zero would deny the call: the hook exits 0 instead.
    outputs = _tool_outputs(model.model_requests()[-1])
    assert len(outputs) == 3
    assert all("completed with exit code 0" in output for output in outputs)


def test_the_same_failure_with_calls_between_gets_the_retry_reminder(
    tmp_path: Path, copilot: Host
) -> None:
    # The same command failing the same way three times, another call between each. Copilot
    # reports each with postToolUse (result_type "success", the exit code at the end of the
    # text), and appends the top-level additionalContext of that answer to the call's result.
    sandbox = installed(tmp_path, "copilot", "retryWindow = 12\n")
    sandbox.install("copilot", "--results")
    fail = {"command": "echo 'pre-commit: ruff failed' >&2; exit 1", "description": "Commit"}
    calls = [
        call
        for n in range(3)
        for call in (
            Call("bash", {"command": f"echo step {n}", "description": "Step"}),
            Call("bash", fail),
        )
    ]

    def script(request: Mapping[str, Any]) -> Step:
        done = _results_since_prompt(request)
        return Say("done") if done == len(calls) else (calls[done],)

    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "commit the fix")
    said = "has now failed 3 times the same way"
    guidance = 'Tool "bash" succeeded. Additional guidance from postToolUse hooks:\n'
    seen = []
    for request in model.model_requests():
        outputs = _tool_outputs(request)
        seen.append((len(outputs), bool(outputs) and said in outputs[-1]))
    assert seen == [(n, n == 6) for n in range(7)]
    last = _tool_outputs(model.model_requests()[-1])[-1]
    # Copilot's own line, then the core's reminder, whole (Copilot adds no envelope).
    assert last.startswith("pre-commit: ruff failed\n<shellId: 5 completed with exit code 1>")
    assert f"{guidance}<system-reminder>\n" in last
    assert sandbox.errors() == []


def test_a_tool_failing_the_same_way_gets_the_retry_reminder(tmp_path: Path, copilot: Host) -> None:
    # A tool's own error (view of a missing path) is reported with postToolUseFailure, its
    # error "Path does not exist"; that answer's context reaches the model as a user message
    # after the result.
    sandbox = installed(tmp_path, "copilot", "retryWindow = 12\n")
    sandbox.install("copilot", "--results")
    missing = str(tmp_path / "missing.txt")
    calls = [
        call
        for n in range(3)
        for call in (
            Call("bash", {"command": f"echo step {n}", "description": "Step"}),
            Call("view", {"path": missing}),
        )
    ]

    def script(request: Mapping[str, Any]) -> Step:
        done = _results_since_prompt(request)
        return Say("done") if done == len(calls) else (calls[done],)

    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "read the notes")
    requests = model.model_requests()
    seen = [(_results_since_prompt(r), contexts_after_tool(r, FAILURE_MARK)) for r in requests]
    reminder = (
        f"{FAILURE_MARK}<system-reminder>\nThe tool call `Read` with arguments "
        f'{{"path":"{missing}"}} has now failed 3 times the same way'
    )
    assert [n for n, _ in seen] == list(range(7))
    assert [len(said) for _, said in seen] == [0, 0, 0, 0, 0, 0, 1]
    assert seen[6][1][0].startswith(reminder)
    assert sandbox.errors() == []


_JOB = {"command": "for i in 1 2 3; do echo n $i; sleep 1; done", "description": "Count"}
_ASYNC = Call("bash", {**_JOB, "mode": "async", "shellId": "job1"})
_READ_JOB = Call("read_bash", {"shellId": "job1", "delay": 1})


@pytest.mark.parametrize("flags", [(), ("--results",)])
def test_the_result_matcher_install_writes_is_the_one_copilot_applies(
    tmp_path: Path, copilot: Host, flags: tuple[str, ...]
) -> None:
    # Every hook call goes to the resident guard, started first, which counts them. A plain
    # install writes PostToolUse and PostToolUseFailure with the preset's matcher (an anchored
    # expression): Copilot runs them for the calls whose hook name it matches whole, so the
    # guard hears the prompt, each call before it runs, the matched results alone and the
    # session's end; --results writes the matcher "*", and every result is heard.
    sandbox = installed(tmp_path, "copilot")
    sandbox.install("copilot", *flags)
    (sandbox.project / "notes.txt").write_text("notes\n")
    # A job started in the background (async mode) and read three times with read_bash, then
    # a file viewed three times: Copilot's hooks name them Bash, read_bash and Read.
    notes = Call("view", {"path": str(sandbox.project / "notes.txt")})
    calls = [_ASYNC, *[_READ_JOB] * 3, *[notes] * 3]
    names = ["Bash", *["read_bash"] * 3, *["Read"] * 3]
    path = sandbox.project / ".github" / "hooks" / "repeat-guard.json"
    groups = json.loads(path.read_text())["hooks"]["PostToolUse"]
    matcher = groups[0].get("matcher")
    translate = COPILOT.tool_matcher
    assert translate is not None
    assert matcher == ("*" if flags else translate(HOST_PRESETS["copilot"]))
    heard = [name for name in names if matcher == "*" or re.fullmatch(matcher, name)]
    assert heard.count("read_bash") == 3
    assert heard.count("Read") == (3 if flags else 0)

    def script(request: Mapping[str, Any]) -> Step:
        done = _scripted_results(request)
        return (calls[done],) if done < len(calls) else Say("done")

    _start_guard(sandbox)
    try:
        with ChatCompletionsStandIn(script) as model:
            run_copilot(copilot, sandbox, model.url, "count, then read the notes")
        status = _status(sandbox.state)
    finally:
        _stop_guard(sandbox.state)
    outputs = _tool_outputs(model.model_requests()[-1])
    assert all("notes" in output for output in outputs[4:7]), outputs
    # the prompt, each call before it runs, the results heard, and the session's end
    assert int(status["calls"]) == 1 + len(calls) + len(heard) + 1
    assert sandbox.errors() == []


_POLL = {"command": "tail -n 20 build.log", "description": "Show the build's progress"}
_BUILT = [f"compiled module {n} of 4" for n in range(1, 5)]


@pytest.mark.parametrize(
    ("flags", "grows", "reminded"),
    [((), True, []), (("--preset", "seed"), True, [3]), ((), False, [3])],
)
def test_a_shell_poll_follows_the_installed_preset(
    tmp_path: Path, copilot: Host, flags: tuple[str, ...], grows: bool, reminded: list[int]
) -> None:
    # Four identical bash polls of a build log. When a line is added before each (the script
    # writes it, as the build would, before asking for the poll), a plain install (the copilot
    # preset, whose PostToolUse matcher names Bash) brings each poll's output to the guard, and
    # a poll whose output changed is progress: no reminder. Under --preset seed the third poll
    # is reminded whatever it read; and with the plain install a poll of a log that stays the
    # same is a loop, reminded at the third.
    sandbox = installed(tmp_path, "copilot")
    sandbox.install("copilot", *flags)
    log = sandbox.project / "build.log"
    log.write_text("" if grows else f"{_BUILT[0]}\n")

    script = growing_log(log, _BUILT, (Call("bash", _POLL),), _results_since_prompt, grows=grows)
    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "wait for the build")
    requests = model.model_requests()
    seen = [_seen(r) for r in requests]
    assert [count for count, _ in seen] == [0, 1, 2, 3, 4]
    assert [count for count, contexts in seen if contexts] == reminded
    if reminded:
        assert seen[3][1] == [_wrapped(Repeated("Bash", _POLL).reminder(3))]
    # Each poll read one line more than the one before, or the same line each time.
    outputs = _tool_outputs(requests[-1])
    read = [sum(line in output for line in _BUILT) for output in outputs]
    assert read == ([1, 2, 3, 4] if grows else [1, 1, 1, 1])
    assert sandbox.errors() == []
