"""The guard's pre-execute hook: the core's ``admit`` before a call runs, failing open."""

from __future__ import annotations

import logging

import pytest

from repeat_guard import GuardState
from repeat_guard_pluggy import ToolExecution, ToolResult

from ._support import GREP, Agent, execute, guarded


def pre(pm: object, agent: object | None, tool: str = "grep") -> str | None:
    reason: str | None = pm.hook.tool_pre_execute(  # type: ignore[attr-defined]  # pluggy's hook
        execution=ToolExecution(agent, "call-1", tool, GREP)
    )
    return reason


def test_the_call_that_would_reach_deny_at_is_refused_with_the_cores_reason() -> None:
    pm, guard = guarded(config={"denyAt": 3})
    agent = Agent()
    for _ in range(2):
        assert pre(pm, agent) is None
        execute(pm, agent)
    reason = pre(pm, agent)
    assert reason is not None
    assert "3rd identical call to `grep`" in reason
    assert pre(pm, agent, "read") is None
    assert pre(pm, None) is None
    execute(pm, agent, denied=True)  # the refused attempt is reported, and counts
    chain = guard.state.chain(guard.agent_id(agent) or "")
    assert chain is not None
    assert chain.repeats == 3


def test_a_spent_budget_refuses_and_results_reach_the_core_for_progress() -> None:
    pm, guard = guarded(config={"budgets": {"grep": 1}, "progress": "result"})
    agent = Agent()
    decision = pm.hook.tool_post_execute(
        execution=ToolExecution(agent, "c", "grep", GREP), result=ToolResult("found")
    )
    assert decision.contexts[0].reminder.form == "budget"
    assert "budget of 1 calls" in (pre(pm, agent) or "")
    memory = guard.state.memory(guard.agent_id(agent) or "")
    assert memory.result is not None  # the tool's content became the result key


def test_without_a_hard_limit_every_call_runs() -> None:
    pm, _ = guarded()
    agent = Agent()
    for _ in range(10):
        assert pre(pm, agent) is None
        execute(pm, agent)


def test_an_error_in_the_check_fails_open(caplog: pytest.LogCaptureFixture) -> None:
    def broken(state: GuardState, event: object) -> object:
        raise RuntimeError("boom")

    pm, guard = guarded(config={"denyAt": 2})
    agent = Agent()
    guard._state = broken  # type: ignore[assignment]  # a state that breaks admit, on purpose
    with caplog.at_level(logging.ERROR, logger="repeat_guard_pluggy"):
        assert pre(pm, agent) is None
    assert "failed to check the call" in caplog.text
