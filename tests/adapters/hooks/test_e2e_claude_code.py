"""The real Claude Code binary, offline, with the hooks ``repeat-guard install`` writes.

Each test runs every release ``host_params`` finds (``make e2e``: the pin and the older release
kept tested; ``make e2e-latest``: the newest on npm). The model is a scripted stand-in on
127.0.0.1 that logs every request; the checks are on what reached it: which request carried a
reminder, and in what envelope.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import GuardConfig, Reminder

from .agents import (
    Host,
    Repeated,
    Sandbox,
    blocks,
    check_install,
    host_fixture,
    is_subagent,
    looping,
    run_claude,
    run_claude_session,
    since_prompt,
    trust_project,
    with_subagent,
)
from .standins import Call, MessagesStandIn, Say, Step

pytestmark = pytest.mark.e2e

LS = {"command": "ls", "description": "List files"}
LS_CALL = Call("Bash", LS)
MARK = "hook additional context: "
# Where Claude Code puts a PreToolUse answer's additionalContext, as the model receives it: up
# to SYSTEM_ROLE_SINCE, a text block "<system-reminder>\nPreToolUse:<tool> hook additional
# context: <text>\n</system-reminder>" in the user message after the call's result; from it on,
# a message of its own after that one, with role "system" and the same text unwrapped (a
# "<system-reminder>" tag inside it escaped as "&lt;system-reminder>"). Either way the envelope
# is Claude Code's, so the dialect sends the reminder's body. Found by running the releases
# between 2.1.197 and 2.1.332: 2.1.227 is the last with the tag, 2.1.228 the first without.
SYSTEM_ROLE_SINCE = (2, 1, 228)
# A PreToolUse deny's reason is the refused call's result; Claude Code labels it "PreToolUse:<tool>
# hook error: " since this release (2.1.280 is the last without the label).
DENY_LABELLED_SINCE = (2, 1, 281)
# Claude Code's own sentence, which it appends to the newest system message after a minute
# without a word to the user (its "silent turn" reminder, default text).
SILENT_TURN = (
    "\n\nThe user hasn't heard from you in a while. As you continue, keep them updated when "
    "there's something to tell \u2014 a finding, a change of plan."
)

LOOP = Repeated("Bash", LS)

claude = host_fixture("claude-code", "@anthropic-ai/claude-code", "claude")


def _wrapped(claude: Host, reminder: Reminder) -> tuple[str, str]:
    # Claude Code's own envelope around a PreToolUse answer, as it reaches the model: the role
    # of the message it is in, and its text.
    text = f"PreToolUse:Bash {MARK}{reminder.body}"
    if claude.release >= SYSTEM_ROLE_SINCE:
        return ("system", text)
    return ("user", f"<system-reminder>\n{text}\n</system-reminder>")


def _refused(claude: Host, reason: str) -> str:
    # A refused call's result, as the model reads it: the deny reason, labelled by Claude Code
    # as a hook error since DENY_LABELLED_SINCE.
    return (
        f"PreToolUse:Bash hook error: {reason}" if claude.release >= DENY_LABELLED_SINCE else reason
    )


def _is_prompt(message: Mapping[str, Any]) -> bool:
    # A user message of the user's own text: not a tool's result, nor Claude Code's notice (in
    # its <system-reminder> blocks alone) that a background subagent finished.
    kinds = {block.get("type") for block in blocks(message)}
    texts = [str(b.get("text", "")) for b in blocks(message) if b.get("type") == "text"]
    said = any(not text.startswith("<system-reminder>") for text in texts)
    return message.get("role") == "user" and "tool_result" not in kinds and said


def _tool_results(message: Mapping[str, Any]) -> int:
    return sum(1 for b in blocks(message) if b.get("type") == "tool_result")


def _prompts(request: Mapping[str, Any]) -> int:
    return since_prompt(request["messages"], _is_prompt, _tool_results)[0]


def _results_since_prompt(request: Mapping[str, Any]) -> int:
    return since_prompt(request["messages"], _is_prompt, _tool_results)[1]


def _contexts(request: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The hook contexts since the model's last answer (what the last calls' hooks said), each
    with the role of its message, without Claude Code's own silent-turn sentence."""
    return [
        (str(message.get("role")), str(b["text"]).removesuffix(SILENT_TURN))
        for message in _since_answer(request)
        for b in blocks(message)
        if MARK in str(b.get("text", ""))
    ]


def _since_answer(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The messages after the model's last answer (all of them before its first)."""
    messages: list[Mapping[str, Any]] = request["messages"]
    roles = [message.get("role") for message in messages]
    last = max((i for i, role in enumerate(roles) if role == "assistant"), default=-1)
    return messages[last + 1 :]


def _turns(model: MessagesStandIn) -> list[Mapping[str, Any]]:
    return [r for r in model.model_requests() if r.get("tools")]


def _installed(tmp_path: Path, config: str | None = None, *flags: str) -> Sandbox:
    # A trusted project with this repeat-guard's hooks (and config).
    sandbox = Sandbox.create(tmp_path)
    trust_project(sandbox)
    sandbox.install("claude-code", *flags)
    if config is not None:
        sandbox.configure(config)
    return sandbox


def test_install_writes_entries_that_run_this_executable(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    path = sandbox.project / ".claude" / "settings.json"
    # With the preset's polls' results alone (a tool matcher).
    events = [
        "PreToolUse",
        "SessionEnd",
        "SubagentStop",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
    ]
    check_install(sandbox, "claude-code", path, events)


def test_a_loop_gets_the_gentle_then_the_detailed_reminder(tmp_path: Path, claude: Host) -> None:
    sandbox = _installed(tmp_path)
    # Requests without tools are Claude Code's own side questions (a title, a summary).
    script = looping(LS_CALL, 6, _results_since_prompt, side=True)
    with MessagesStandIn(script) as model:
        result = run_claude(claude, sandbox, model.url, "list the files")
    assert result["result"] == "done"
    seen = [(_results_since_prompt(r), _contexts(r)) for r in _turns(model)]
    gentle, detailed = _wrapped(claude, LOOP.reminder(3)), _wrapped(claude, LOOP.reminder(5))
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, []), (5, [detailed]), (6, [])]
    # Exactly one envelope around each reminder: Claude Code's tag, or its system message.
    for role, text in (gentle, detailed):
        # The tag's opening and closing (or, in a system message, no tag, not even escaped).
        assert (role, text.count("system-reminder")) in {("user", 2), ("system", 0)}
    assert "You are repeating the exact same tool call." in gentle[1]
    assert sandbox.errors() == []


def test_a_subagent_keeps_its_own_chain(tmp_path: Path, claude: Host) -> None:
    # The Agent call itself is transparent, so the parent's ls calls around it form one run.
    sandbox = _installed(tmp_path, 'exclude = ["Agent"]\n')
    agent = Call(
        "Agent", {"description": "sub", "prompt": "SUBTASK: list", "subagent_type": "claude"}
    )
    script = with_subagent(LS_CALL, agent, _results_since_prompt, side=True)
    with MessagesStandIn(script) as model:
        run_claude(claude, sandbox, model.url, "list the files", allowed=("Bash(ls)", "Agent"))
    turns = _turns(model)
    sub = [(_results_since_prompt(r), _contexts(r)) for r in turns if is_subagent(r)]
    main = [(_results_since_prompt(r), _contexts(r)) for r in turns if not is_subagent(r)]
    gentle = _wrapped(claude, LOOP.reminder(3))
    assert sub == [(0, []), (1, []), (2, []), (3, [gentle])]
    # One shared chain would have made the parent's last ls the 6th in a row (detailed).
    assert main[:5] == [(0, []), (1, []), (2, []), (3, []), (4, [gentle])]
    # Since 2.1.332 (at the latest) a subagent runs in the background, and the parent is told in
    # a turn of its own when it is done: a turn after its last call, with nothing to remind of.
    assert main[5:] in ([], [(4, [])])
    assert sandbox.errors() == []


def test_parallel_identical_calls_lose_no_count(tmp_path: Path, claude: Host) -> None:
    # The detailed reminder fires only if all six calls were counted.
    sandbox = _installed(tmp_path, "thresholds = [3, 6]\n")

    def script(request: Mapping[str, Any]) -> Step:
        if not request.get("tools"):
            return Say("ok")
        return (LS_CALL, LS_CALL) if _results_since_prompt(request) < 6 else Say("done")

    with MessagesStandIn(script) as model:
        run_claude(claude, sandbox, model.url, "list the files")
    config = GuardConfig(thresholds=(3, 6))
    seen = [(_results_since_prompt(r), _contexts(r)) for r in _turns(model)]
    assert seen == [
        (0, []),
        (2, []),
        (4, [_wrapped(claude, LOOP.reminder(3, config))]),
        (6, [_wrapped(claude, LOOP.reminder(6, config))]),
    ]
    assert sandbox.errors() == []


def test_a_second_prompt_starts_the_chain_over(tmp_path: Path, claude: Host) -> None:
    sandbox = _installed(tmp_path)
    calls_per_prompt = {1: 2, 2: 3}

    def script(request: Mapping[str, Any]) -> Step:
        if not request.get("tools"):
            return Say("ok")
        wanted = calls_per_prompt.get(_prompts(request), 0)
        return (LS_CALL,) if _results_since_prompt(request) < wanted else Say("done")

    with MessagesStandIn(script) as model:
        results = run_claude_session(
            claude, sandbox, model.url, ["list the files", "again, please"]
        )
    assert [r["result"] for r in results] == ["done", "done"]
    seen = [(_prompts(r), _results_since_prompt(r), _contexts(r)) for r in _turns(model)]
    gentle = _wrapped(claude, LOOP.reminder(3))
    # Without the reset the second prompt's first call would be the third in a row.
    assert seen == [
        (1, 0, []),
        (1, 1, []),
        (1, 2, []),
        (2, 0, []),
        (2, 1, []),
        (2, 2, []),
        (2, 3, [gentle]),
    ]
    assert sandbox.errors() == []


def _results(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    # The results since the model's last answer (a system message may follow them).
    return [
        b
        for message in _since_answer(request)
        for b in blocks(message)
        if b.get("type") == "tool_result"
    ]


def test_deny_at_refuses_the_call_and_the_model_reads_why(tmp_path: Path, claude: Host) -> None:
    sandbox = _installed(tmp_path, "denyAt = 4\n")
    with MessagesStandIn(looping(LS_CALL, 5, _results_since_prompt, side=True)) as model:
        result = run_claude(claude, sandbox, model.url, "list the files")
    assert result["result"] == "done"
    turns = _turns(model)
    assert [_results_since_prompt(r) for r in turns] == [0, 1, 2, 3, 4, 5]
    # The first three ran; the fourth never did: its result is the refusal, as an error.
    ran = [(b["is_error"], b["content"]) for r in turns[1:4] for b in _results(r)]
    assert ran == [(False, "(Bash completed with no output)")] * 3
    ((fourth,),) = [_results(turns[4])]
    assert (fourth["is_error"], fourth["content"]) == (True, _refused(claude, LOOP.refusal(4)))
    assert _contexts(turns[4]) == []
    # The refused fourth counted: the fifth, refused too, carries the detailed reminder.
    ((fifth,),) = [_results(turns[5])]
    assert fifth["is_error"] is True
    fifth_reason = "refused: this would be the 5th identical call"
    assert str(fifth["content"]).startswith(_refused(claude, fifth_reason))
    assert _contexts(turns[5]) == [_wrapped(claude, LOOP.reminder(5))]
    assert sandbox.errors() == []


def test_a_poll_whose_output_changes_is_progress_with_results(tmp_path: Path, claude: Host) -> None:
    # Exits 3 until the build is done: Claude Code reports those calls with PostToolUseFailure,
    # and a failure is progress over a failure only with errorsAreProgress.
    config = 'progress = "result"\nerrorsAreProgress = true\n'
    sandbox = _installed(tmp_path, config, "--results")
    command = "cat progress.txt; grep -qx done progress.txt || exit 3"
    poll = {"command": command, "description": "Read the build's progress"}
    outputs = ["10%", "60%", "done", "done", "done", "done"]

    def script(request: Mapping[str, Any]) -> Step:
        if not request.get("tools"):
            return Say("ok")
        done = _results_since_prompt(request)
        if done == len(outputs):
            return Say("done")
        # What the next call will read: the build moving on, then finished.
        (sandbox.project / "progress.txt").write_text(outputs[done] + "\n")
        return (Call("Bash", poll),)

    with MessagesStandIn(script) as model:
        result = run_claude(claude, sandbox, model.url, "wait for the build", allowed=("Bash",))
    assert result["result"] == "done"
    seen = [(_results_since_prompt(r), _contexts(r)) for r in _turns(model)]
    last = _turns(model)[-1]["messages"]
    read = [b for m in last for b in blocks(m) if b.get("type") == "tool_result"]
    assert [(b.get("is_error", False), str(b["content"])) for b in read] == [
        (True, "Exit code 3\n10%"),
        (True, "Exit code 3\n60%"),
        *[(False, "done")] * 4,
    ]
    # Six identical calls: the output changed twice, so only the fifth (the third since the
    # output last changed) is a loop; without the results it would have been the third.
    gentle = _wrapped(claude, Repeated("Bash", poll).reminder(3))
    assert seen == [(0, []), (1, []), (2, []), (3, []), (4, []), (5, [gentle]), (6, [])]
    assert sandbox.errors() == []


def test_the_same_failure_with_calls_between_gets_the_retry_reminder(
    tmp_path: Path, claude: Host
) -> None:
    # The same command failing the same way three times, another call between each: Claude Code
    # reports each failure with PostToolUseFailure, whose answer carries the retry reminder.
    sandbox = _installed(tmp_path, "retryWindow = 12\n", "--results")
    fail = {"command": "echo 'pre-commit: ruff failed' >&2; exit 1", "description": "Commit"}
    calls = [
        call
        for n in range(3)
        for call in (
            Call("Bash", {"command": f"echo step {n}", "description": "Step"}),
            Call("Bash", fail),
        )
    ]

    def script(request: Mapping[str, Any]) -> Step:
        if not request.get("tools"):
            return Say("ok")
        done = _results_since_prompt(request)
        return Say("done") if done == len(calls) else (calls[done],)

    with MessagesStandIn(script) as model:
        result = run_claude(claude, sandbox, model.url, "commit the fix", allowed=("Bash",))
    assert result["result"] == "done"
    said = "has now failed 3 times the same way"
    seen = [(_results_since_prompt(r), said in str(list(_since_answer(r)))) for r in _turns(model)]
    assert seen == [(n, n == 6) for n in range(7)]
    assert sandbox.errors() == []


# A background process that prints the files step1, step2... each once it appears, until a file
# ``stop`` does.
_FEED = (
    "n=1; while [ ! -f stop ]; do if [ -f step$n ]; then cat step$n; n=$((n+1)); fi; "
    "sleep 0.05; done"
)


@pytest.mark.parametrize(("flags", "reminded"), [((), []), (("--preset", "seed"), [4])])
def test_a_task_output_poll_follows_the_installed_preset(
    tmp_path: Path, claude: Host, flags: tuple[str, ...], reminded: list[int]
) -> None:
    # Bash starts a background task that prints a new line before each of four TaskOutput polls
    # with the same arguments. A plain install sends TaskOutput's results alone to the hook
    # (Claude Code's preset, a PostToolUse matcher): each poll made progress, and none is
    # reminded of. With --preset seed no result is sent and the third identical poll is a loop.
    # A release that does not offer the model TaskOutput (2.1.332: a background task's output
    # is read with Read on its file) refuses the call before any hook runs: no reminder either
    # way, and the preset has no poll to act on there (the hooks README says so).
    sandbox = _installed(tmp_path, None, *flags)
    start = {"command": _FEED, "description": "Watch the build", "run_in_background": True}
    task: list[str] = []
    final: list[Mapping[str, Any]] = []
    polls = 4

    def script(request: Mapping[str, Any]) -> Step:
        if not request.get("tools") or final:
            return Say("done")  # a side question, or the task's end notified after the polls
        done = _results_since_prompt(request)
        if done == 0:
            return (Call("Bash", start),)
        if done > polls:
            final.append(request)
            (sandbox.project / "stop").write_text("")
            return Say("done")
        if done == 1:
            said = str(_results(request)[0]["content"])
            found = re.search(r"with ID: (\w+)\. Output is being written to: (\S+)\. ", said)
            assert found is not None, said
            task.extend(found.groups())
        (sandbox.project / f"step{done}").write_text(f"step {done}\n")
        _printed(Path(task[1]), f"step {done}\n")  # before the poll reads it
        return (Call("TaskOutput", {"task_id": task[0], "block": False, "timeout": 1000}),)

    with MessagesStandIn(script) as model:
        allowed = ("Bash", "TaskOutput")
        result = run_claude(claude, sandbox, model.url, "watch the build", allowed=allowed)
    assert result["result"] == "done"
    (last,) = final
    offered = any(tool["name"] == "TaskOutput" for tool in last["tools"])
    read = [str(b["content"]) for b in _results_in(last)]
    assert "Command running in background with ID" in read[0]
    if offered:
        # Each poll read all the task printed so far: one line more each time.
        printed = ["".join(f"step {n}\n" for n in range(1, k + 1)) for k in range(1, polls + 1)]
        assert len(read) == polls + 1
        polled = [f"<output>\n{p}</output>" in t for p, t in zip(printed, read[1:], strict=True)]
        assert polled == [True] * polls
        seen = [_results_since_prompt(r) for r in _turns(model) if _contexts(r)]
        assert seen == reminded
    else:
        refused = "<tool_use_error>Error: No such tool available: TaskOutput</tool_use_error>"
        assert read[1:] == [refused] * polls
        assert not any(_contexts(r) for r in _turns(model))
    assert sandbox.errors() == []


def _printed(output: Path, line: str, limit: float = 20.0) -> None:
    # Wait until the background task's output file ends with ``line``.
    waited = 0.0
    while not (output.exists() and output.read_text().endswith(line)):
        assert waited < limit, f"{output} never printed {line!r}"
        time.sleep(0.05)
        waited += 0.05


def _results_in(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    # Every tool result of the request, in order.
    return [b for m in request["messages"] for b in blocks(m) if b.get("type") == "tool_result"]
