"""The real Cline CLI, offline, with the hook files ``repeat-guard install cline`` writes.

Cline runs against a scripted Chat Completions stand-in on 127.0.0.1 (an OpenAI-compatible
provider set with ``cline auth --baseurl``), which logs every request; the checks are on what
reached it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import Reminder

from .agents import (
    Host,
    Repeated,
    Sandbox,
    cline_hubs,
    contexts_after_tool,
    host_fixture,
    installed,
    is_subagent,
    looping,
    run_cline,
    stop_cline_hub,
    with_subagent,
)
from .standins import Call, ChatCompletionsStandIn

pytestmark = pytest.mark.e2e

cline = host_fixture("cline", "cline", "cline")

LS = {"commands": ["ls"]}
LS_CALL = Call("run_commands", LS)
LOOP = Repeated("run_commands", LS)


def _wrapped(reminder: Reminder, call: str) -> str:
    # Cline's own envelope around a PreToolUse hook's context, as the model reads it (it
    # doubles each underscore in the attributes).
    attributes = f'source="PreToolUse" tool_name="run__commands" tool_call_id="{call}"'
    return f"<hook_context {attributes}>\n{reminder.body}\n</hook_context>"


def _results_since_prompt(request: Mapping[str, Any]) -> int:
    return sum(1 for message in request["messages"] if message.get("role") == "tool")


def _contexts(request: Mapping[str, Any]) -> list[str]:
    return contexts_after_tool(request, "<hook_context")


@pytest.fixture
def cline_sandbox(tmp_path: Path, cline: Host) -> Iterator[Callable[..., Sandbox]]:
    """Makes the test's sandbox (``config``: its ``.repeat-guard.toml``); afterwards stops the
    hub daemon Cline started from it, and checks that none of its own is left running."""
    made: list[Sandbox] = []

    def make(config: str | None = None) -> Sandbox:
        made.append(installed(tmp_path, "cline", config, git=True))
        return made[-1]

    yield make
    for each in made:
        assert stop_cline_hub(cline, each) == []
        assert cline_hubs(each) == []


def _call_id(request: Mapping[str, Any]) -> str:
    last = [m for m in request["messages"] if m.get("role") == "tool"][-1]
    return str(last["tool_call_id"]).replace("_", "__")


def test_a_loop_gets_the_gentle_reminder_before_clines_own_stop(
    cline_sandbox: Callable[..., Sandbox], cline: Host
) -> None:
    sandbox = cline_sandbox()
    with ChatCompletionsStandIn(looping(LS_CALL, 6, _results_since_prompt)) as model:
        done = run_cline(cline, sandbox, model.url, "list the files")
    requests = model.model_requests()
    seen = [(_results_since_prompt(r), _contexts(r)) for r in requests]
    gentle = _wrapped(LOOP.reminder(3), _call_id(requests[3]))
    # Cline 3.0.65 stops a task by itself at the 5th identical call in a row, before the
    # guard's detailed reminder could reach the model: the gentle one, at the 3rd, does.
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, [])]
    assert "<system-reminder>" not in gentle
    assert "Detected 5 consecutive identical calls to `run_commands`" in done.stdout
    assert sandbox.errors() == []


def test_a_subagent_keeps_its_own_chain(cline_sandbox: Callable[..., Sandbox], cline: Host) -> None:
    # The spawn call itself is transparent, so the parent's ls calls around it form one run.
    sandbox = cline_sandbox('exclude = ["spawn_agent"]\n')
    spawn = Call("spawn_agent", {"systemPrompt": "You list files.", "task": "SUBTASK: list"})
    script = with_subagent(LS_CALL, spawn, _results_since_prompt)
    with ChatCompletionsStandIn(script) as model:
        run_cline(cline, sandbox, model.url, "list the files")
    requests = model.model_requests()
    sub = [(_results_since_prompt(r), bool(_contexts(r))) for r in requests if is_subagent(r)]
    main = [(_results_since_prompt(r), bool(_contexts(r))) for r in requests if not is_subagent(r)]
    assert sub == [(0, False), (1, False), (2, False), (3, True)]
    # One shared chain would have made the parent's last ls the 6th in a row (detailed).
    assert main == [(0, False), (1, False), (2, False), (3, False), (4, True)]
    (last,) = _contexts(requests[-1])
    assert LOOP.reminder(3).body in last
    assert sandbox.errors() == []


def test_deny_at_stops_the_task(cline_sandbox: Callable[..., Sandbox], cline: Host) -> None:
    sandbox = cline_sandbox("denyAt = 4\n")
    with ChatCompletionsStandIn(looping(LS_CALL, 6, _results_since_prompt)) as model:
        done = run_cline(cline, sandbox, model.url, "list the files")
    # Cline 3.0.65 reads a refusal (cancel) as the end of the task: the fourth call never ran
    # and the model was not asked again.
    assert [_results_since_prompt(r) for r in model.model_requests()] == [0, 1, 2, 3]
    result = [json.loads(line) for line in done.stdout.splitlines() if '"run_result"' in line]
    assert [r["finishReason"] for r in result] == ["aborted"]
    assert sandbox.errors() == []
