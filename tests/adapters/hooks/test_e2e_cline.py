"""The real Cline CLI, offline, with the hook files ``repeat-guard install cline`` writes.

Cline runs against a scripted Chat Completions stand-in on 127.0.0.1 (an OpenAI-compatible
provider set with ``cline auth --baseurl``), which logs every request; the checks are on what
reached it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import GuardConfig, GuardState, Reminder, ToolCallFinished, reduce

from .agents import Host, Sandbox, cline_hooks, host_params, run_cline
from .standins import Call, ChatCompletionsStandIn, Say, Step

pytestmark = pytest.mark.e2e


@pytest.fixture(params=host_params("cline", "cline", "cline"))
def cline(request: pytest.FixtureRequest) -> Host:
    """One Cline release (``make e2e``: the pinned ones; ``make e2e-latest``: the newest)."""
    host: Host = request.param
    return host


LS = {"commands": ["ls"]}
LS_CALL = Call("run_commands", LS)


def _reminder(count: int, config: GuardConfig | None = None) -> Reminder:
    state = GuardState.initial(config)
    fired: list[Reminder] = []
    for _ in range(count):
        state, reminders = reduce(state, ToolCallFinished("a", "run_commands", LS))
        fired.extend(reminders)
    return fired[-1]


def _wrapped(reminder: Reminder, call: str) -> str:
    # Cline's own envelope around a PreToolUse hook's context, as the model reads it (it
    # doubles each underscore in the attributes).
    attributes = f'source="PreToolUse" tool_name="run__commands" tool_call_id="{call}"'
    return f"<hook_context {attributes}>\n{reminder.body}\n</hook_context>"


def _results_since_prompt(request: Mapping[str, Any]) -> int:
    return sum(1 for message in request["messages"] if message.get("role") == "tool")


def _contexts(request: Mapping[str, Any]) -> list[str]:
    """The hook contexts after the newest tool result: what the last call's hook said."""
    messages = request["messages"]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "tool"), default=-1)
    return [
        str(m["content"])
        for m in messages[last + 1 :]
        if m.get("role") == "user" and str(m.get("content", "")).startswith("<hook_context")
    ]


def _is_subagent(request: Mapping[str, Any]) -> bool:
    first = next(m for m in request["messages"] if m.get("role") == "user")
    return "SUBTASK" in str(first.get("content"))


def _call_id(request: Mapping[str, Any]) -> str:
    last = [m for m in request["messages"] if m.get("role") == "tool"][-1]
    return str(last["tool_call_id"]).replace("_", "__")


def test_a_loop_gets_the_gentle_reminder_before_clines_own_stop(
    tmp_path: Path, cline: Host
) -> None:
    sandbox = Sandbox.create(tmp_path)
    cline_hooks(sandbox)

    def script(request: Mapping[str, Any]) -> Step:
        return (LS_CALL,) if _results_since_prompt(request) < 6 else Say("done")

    with ChatCompletionsStandIn(script) as model:
        done = run_cline(cline, sandbox, model.url, "list the files")
    requests = model.model_requests()
    seen = [(_results_since_prompt(r), _contexts(r)) for r in requests]
    gentle = _wrapped(_reminder(3), _call_id(requests[3]))
    # Cline 3.0.65 stops a task by itself at the 5th identical call in a row, before the
    # guard's detailed reminder could reach the model: the gentle one, at the 3rd, does.
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, [])]
    assert "<system-reminder>" not in gentle
    assert "Detected 5 consecutive identical calls to `run_commands`" in done.stdout
    assert sandbox.log() == ""


def test_a_subagent_keeps_its_own_chain(tmp_path: Path, cline: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    cline_hooks(sandbox)
    # The spawn call itself is transparent, so the parent's ls calls around it form one run.
    (sandbox.project / ".repeat-guard.toml").write_text('exclude = ["spawn_agent"]\n')
    spawn = Call("spawn_agent", {"systemPrompt": "You list files.", "task": "SUBTASK: list"})

    def script(request: Mapping[str, Any]) -> Step:
        done = _results_since_prompt(request)
        if _is_subagent(request):
            return (LS_CALL,) if done < 3 else Say("sub done")
        plan: list[Step] = [(LS_CALL,), (LS_CALL,), (spawn,), (LS_CALL,)]
        return plan[done] if done < len(plan) else Say("done")

    with ChatCompletionsStandIn(script) as model:
        run_cline(cline, sandbox, model.url, "list the files")
    requests = model.model_requests()
    sub = [(_results_since_prompt(r), bool(_contexts(r))) for r in requests if _is_subagent(r)]
    main = [(_results_since_prompt(r), bool(_contexts(r))) for r in requests if not _is_subagent(r)]
    assert sub == [(0, False), (1, False), (2, False), (3, True)]
    # One shared chain would have made the parent's last ls the 6th in a row (detailed).
    assert main == [(0, False), (1, False), (2, False), (3, False), (4, True)]
    (last,) = _contexts(requests[-1])
    assert _reminder(3).body in last
    assert sandbox.log() == ""


def test_deny_at_stops_the_task(tmp_path: Path, cline: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    cline_hooks(sandbox)
    (sandbox.project / ".repeat-guard.toml").write_text("denyAt = 4\n")

    def script(request: Mapping[str, Any]) -> Step:
        return (LS_CALL,) if _results_since_prompt(request) < 6 else Say("done")

    with ChatCompletionsStandIn(script) as model:
        done = run_cline(cline, sandbox, model.url, "list the files")
    # Cline 3.0.65 reads a refusal (cancel) as the end of the task: the fourth call never ran
    # and the model was not asked again.
    assert [_results_since_prompt(r) for r in model.model_requests()] == [0, 1, 2, 3]
    result = [json.loads(line) for line in done.stdout.splitlines() if '"run_result"' in line]
    assert [r["finishReason"] for r in result] == ["aborted"]
    assert sandbox.log() == ""
