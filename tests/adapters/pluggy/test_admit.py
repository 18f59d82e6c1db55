"""The guard's pre-execute hook: the core's ``admit`` before a call runs, failing open."""

from __future__ import annotations

import gc
import logging

import pytest

from repeat_guard import GuardState, Running
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


def _started(pm: object, agent: object, call_id: str) -> str | None:
    reason: str | None = pm.hook.tool_pre_execute(  # type: ignore[attr-defined]  # pluggy's hook
        execution=ToolExecution(agent, call_id, "grep", GREP)
    )
    return reason


def _finished(pm: object, agent: object, call_id: str, denied: bool = False) -> None:
    pm.hook.tool_post_execute(  # type: ignore[attr-defined]  # pluggy's hook
        execution=ToolExecution(agent, call_id, "grep", GREP, denied), result=ToolResult("hit")
    )


def test_calls_started_before_any_finishes_still_meet_deny_at() -> None:
    # A host that gathers a turn's calls asks about each before the first has finished: the
    # calls admitted and still running count as if they had finished.
    pm, guard = guarded(config={"denyAt": 3})
    agent = Agent()
    verdicts = [_started(pm, agent, f"c{n}") for n in range(5)]
    assert [v is None for v in verdicts] == [True, True, False, False, False]
    assert "3rd identical call" in (verdicts[2] or "")
    # Another agent's calls are asked about with its own: the first agent's running ones
    # do not count for it.
    other = Agent()
    assert _started(pm, other, "c0") is None
    for n in range(5):
        _finished(pm, agent, f"c{n}", denied=verdicts[n] is not None)
    chain = guard.state.chain(guard.agent_id(agent) or "")
    assert chain is not None
    assert chain.repeats == 5  # each counted once, when it finished


def test_a_prompt_or_a_disposal_ends_the_wait_of_calls_that_never_finished() -> None:
    pm, guard = guarded(config={"denyAt": 3})
    agent = Agent()
    assert _started(pm, agent, "c0") is None
    assert _started(pm, agent, "c1") is None  # neither is ever reported finished
    assert _started(pm, agent, "c2") is not None
    pm.hook.agent_prompt_submit(agent=agent, prompt="again")
    assert _started(pm, agent, "c3") is None  # the turn ended: they no longer count
    assert _started(pm, agent, "c4") is None
    pm.hook.agent_dispose(agent=agent)
    assert _started(pm, agent, "c5") is None
    assert guard.known_agents == 1  # a fresh id, with nothing running


def test_a_collected_agents_running_calls_are_forgotten_too() -> None:
    pm, guard = guarded(config={"denyAt": 3})
    agent = Agent()
    assert _started(pm, agent, "c0") is None
    del agent
    gc.collect()
    assert guard.known_agents == 0
    assert guard.state.chain("agent-1") is None  # the disposal, applied on the next read
    assert guard._running == Running()  # and what the plugin kept for the collected agent is gone


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
