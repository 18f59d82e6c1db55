"""The real GitHub Copilot CLI binary, offline, with the hooks ``repeat-guard install`` writes.

Copilot runs against a scripted Chat Completions stand-in on 127.0.0.1 (its own model provider,
``COPILOT_OFFLINE=true``), which logs every request; the checks are on what reached it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import Deny, GuardConfig, GuardState, Reminder, ToolCallFinished, admit, reduce

from .agents import REPEAT_GUARD, Host, Sandbox, host_params, run_copilot
from .standins import Call, ChatCompletionsStandIn, Say, Step

pytestmark = pytest.mark.e2e


@pytest.fixture(params=host_params("copilot", "@github/copilot", "copilot"))
def copilot(request: pytest.FixtureRequest) -> Host:
    host: Host = request.param
    return host


LS = {"command": "ls", "description": "List files"}
LS_CALL = Call("bash", LS)
# What Copilot puts before a preToolUse answer's additionalContext, as the model reads it.
MARK = "Additional context from preToolUse hook:\n"


def _reminder(count: int, config: GuardConfig | None = None) -> Reminder:
    # Copilot reports its bash tool to hooks by Claude Code's name.
    state = GuardState.initial(config)
    fired: list[Reminder] = []
    for _ in range(count):
        state, reminders = reduce(state, ToolCallFinished("a", "Bash", LS))
        fired.extend(reminders)
    return fired[-1]


def _wrapped(reminder: Reminder) -> str:
    # Copilot adds a line of its own and no envelope: the model sees the core's one.
    return f"{MARK}{reminder.text}"


def _is_prompt(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and not content.startswith("Additional context from")
    )


def _prompts(request: Mapping[str, Any]) -> int:
    return sum(1 for message in request["messages"] if _is_prompt(message))


def _results_since_prompt(request: Mapping[str, Any]) -> int:
    count = 0
    for message in request["messages"]:
        if _is_prompt(message):
            count = 0
        count += message.get("role") == "tool"
    return count


def _contexts(request: Mapping[str, Any]) -> list[str]:
    """The hook contexts after the newest tool result: what the last call's hook said."""
    messages = request["messages"]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "tool"), default=-1)
    return [
        str(m["content"])
        for m in messages[last + 1 :]
        if m.get("role") == "user" and str(m.get("content", "")).startswith(MARK)
    ]


def _is_subagent(request: Mapping[str, Any]) -> bool:
    first = next(m for m in request["messages"] if m.get("role") == "user")
    return "SUBTASK" in str(first.get("content"))


def _tool_outputs(request: Mapping[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m.get("role") == "tool"]


def test_install_writes_entries_that_run_this_executable(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    out = sandbox.install("copilot")
    path = sandbox.project / ".github" / "hooks" / "repeat-guard.json"
    assert out == f"repeat-guard copilot hooks added to {path}\n"
    hooks = json.loads(path.read_text())["hooks"]
    assert sorted(hooks) == ["PreToolUse", "SessionEnd", "SubagentStop", "UserPromptSubmit"]
    for groups in hooks.values():
        ((entry,),) = [group["hooks"] for group in groups]
        assert entry["command"] == f"{REPEAT_GUARD} hook copilot"
    assert sandbox.install("copilot") == f"{path}: already as wanted; nothing changed\n"


def test_a_loop_gets_the_gentle_then_the_detailed_reminder(tmp_path: Path, copilot: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("copilot")

    def script(request: Mapping[str, Any]) -> Step:
        return (LS_CALL,) if _results_since_prompt(request) < 6 else Say("done")

    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "list the files")
    seen = [(_results_since_prompt(r), _contexts(r)) for r in model.model_requests()]
    gentle, detailed = _wrapped(_reminder(3)), _wrapped(_reminder(5))
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, []), (5, [detailed]), (6, [])]
    assert gentle.count("<system-reminder>") == 1
    assert sandbox.log() == ""


def test_a_subagent_keeps_its_own_chain(tmp_path: Path, copilot: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("copilot")
    # The task call itself is transparent, so the parent's ls calls around it form one run.
    (sandbox.project / ".repeat-guard.toml").write_text('exclude = ["Agent"]\n')
    task = {"description": "sub", "prompt": "SUBTASK: list", "agent_type": "task", "name": "sub"}

    def script(request: Mapping[str, Any]) -> Step:
        done = _results_since_prompt(request)
        if _is_subagent(request):
            return (LS_CALL,) if done < 3 else Say("sub done")
        plan: list[Step] = [(LS_CALL,), (LS_CALL,), (Call("task", task),), (LS_CALL,)]
        return plan[done] if done < len(plan) else Say("done")

    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "list the files")
    requests = model.model_requests()
    sub = [(_results_since_prompt(r), _contexts(r)) for r in requests if _is_subagent(r)]
    main = [(_results_since_prompt(r), _contexts(r)) for r in requests if not _is_subagent(r)]
    gentle = _wrapped(_reminder(3))
    assert sub == [(0, []), (1, []), (2, []), (3, [gentle])]
    # One shared chain would have made the parent's last ls the 6th in a row (detailed).
    assert main == [(0, []), (1, []), (2, []), (3, []), (4, [gentle])]
    assert sandbox.log() == ""


def test_a_second_prompt_starts_the_chain_over(tmp_path: Path, copilot: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("copilot")
    calls_per_prompt = {1: 2, 2: 3}
    session = str(uuid.uuid4())

    def script(request: Mapping[str, Any]) -> Step:
        wanted = calls_per_prompt.get(_prompts(request), 0)
        return (LS_CALL,) if _results_since_prompt(request) < wanted else Say("done")

    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "list the files", "--session-id", session)
        run_copilot(copilot, sandbox, model.url, "again, please", "--resume", session)
    seen = [(_prompts(r), _results_since_prompt(r), _contexts(r)) for r in model.model_requests()]
    # Without the reset the second prompt's first call would be the third in a row.
    assert seen == [
        (1, 0, []),
        (1, 1, []),
        (1, 2, []),
        (2, 0, []),
        (2, 1, []),
        (2, 2, []),
        (2, 3, [_wrapped(_reminder(3))]),
    ]
    assert sandbox.log() == ""


def test_deny_at_refuses_the_call_and_the_model_reads_why(tmp_path: Path, copilot: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("copilot")
    (sandbox.project / ".repeat-guard.toml").write_text("denyAt = 4\n")

    def script(request: Mapping[str, Any]) -> Step:
        return (LS_CALL,) if _results_since_prompt(request) < 5 else Say("done")

    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "list the files")
    requests = model.model_requests()
    assert [_results_since_prompt(r) for r in requests] == [0, 1, 2, 3, 4, 5]
    state = GuardState.initial(GuardConfig(deny_at=4))
    for _ in range(3):
        state, _ = reduce(state, ToolCallFinished("a", "Bash", LS))
    refusal = admit(state, ToolCallFinished("a", "Bash", LS))
    assert isinstance(refusal, Deny)
    outputs = _tool_outputs(requests[-1])
    # The first three ran; the fourth and fifth never did: their results are the refusals.
    assert all("completed with exit code 0" in output for output in outputs[:3])
    assert outputs[3] == f"Denied by preToolUse hook: {refusal.reason}"
    assert outputs[4].startswith("Denied by preToolUse hook: refused: this would be the 5th")
    # The refused fourth counted: the fifth carries the detailed reminder beside its refusal.
    assert _contexts(requests[4]) == []
    assert _contexts(requests[5]) == [_wrapped(_reminder(5))]
    assert sandbox.log() == ""


def test_a_bad_configuration_lets_every_call_run(tmp_path: Path, copilot: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("copilot")
    (sandbox.project / ".repeat-guard.toml").write_text("thresholds = 3\n")

    def script(request: Mapping[str, Any]) -> Step:
        return (LS_CALL,) if _results_since_prompt(request) < 3 else Say("done")

    with ChatCompletionsStandIn(script) as model:
        run_copilot(copilot, sandbox, model.url, "list the files")
    # A preToolUse hook exiting non-zero would deny the call: the hook exits 0 instead.
    outputs = _tool_outputs(model.model_requests()[-1])
    assert len(outputs) == 3
    assert all("completed with exit code 0" in output for output in outputs)
