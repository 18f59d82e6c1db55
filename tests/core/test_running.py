"""``attempt`` and ``Running``: what asking before a call means, decided once in the core."""

from __future__ import annotations

from repeat_guard import (
    Admit,
    Deny,
    Event,
    GuardConfig,
    GuardState,
    Reminder,
    Running,
    ToolCallFinished,
    attempt,
    reduce,
)

DENY_AT_3 = GuardConfig(deny_at=3)


def _call(agent: str | None = "a", pattern: str = "x") -> ToolCallFinished:
    return ToolCallFinished(agent, "grep", {"pattern": pattern})


def _state(calls: int) -> GuardState:
    state = GuardState.initial(DENY_AT_3)
    for _ in range(calls):
        state, _ = reduce(state, _call())
    return state


def test_an_admitted_call_changes_nothing_yet() -> None:
    state = _state(1)
    assert attempt(state, _call()) == (Admit(), state, ())


def test_a_refused_attempt_is_reduced_at_once_as_denied() -> None:
    state = _state(2)
    verdict, after, reminders = attempt(state, _call())
    assert isinstance(verdict, Deny)
    assert (after, reminders) == reduce(
        state, ToolCallFinished("a", "grep", {"pattern": "x"}, True)
    )
    assert after.chain("a") == ("grep", '{"pattern":"x"}', 3)


def test_a_refusal_goes_through_the_given_reducer() -> None:
    seen: list[Event] = []

    def recording(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
        seen.append(event)
        return state, ()

    attempt(_state(2), _call(), reducer=recording)
    assert seen == [ToolCallFinished("a", "grep", {"pattern": "x"}, denied=True)]


def test_running_calls_count_as_if_finished_first() -> None:
    state = _state(1)
    running = Running().admitted("c1", _call())
    assert isinstance(attempt(state, _call(), running)[0], Deny)
    assert isinstance(attempt(state, _call("b"), running)[0], Admit)  # another agent's: alone
    assert isinstance(attempt(state, _call(), running.finished("a", "c1"))[0], Admit)


def test_a_wait_ends_when_the_call_finishes_or_the_turn_ends() -> None:
    running = Running().admitted("c1", _call()).admitted("c2", _call()).admitted("c1", _call("b"))
    assert len(list(running.calls())) == 3
    assert sorted(call.agent or "" for call in running.finished("a", "c1").calls()) == ["a", "b"]
    assert [call.agent for call in running.ended("a").calls()] == ["b"]
    assert running.ended("z") == running
    assert running.finished("z", "c1") == running


def test_calls_outside_any_agent_never_wait() -> None:
    assert Running().admitted("c1", _call(None)) == Running()
    running = Running().admitted("c1", _call())
    assert running.finished(None, "c1") is running
