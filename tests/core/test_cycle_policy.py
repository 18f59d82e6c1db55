"""Cycles follow ``progress`` as runs do, and ``cycleDenyAt`` refuses the call that would
complete a cycle's N-th repetition: scripted, through the public API."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from repeat_guard import (
    Admit,
    Deny,
    Event,
    GuardConfig,
    GuardState,
    Memory,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    admit,
    parse_config,
    reduce,
)
from repeat_guard._policies import cycle_returned


def run(state: GuardState, *events: Event) -> tuple[GuardState, list[Reminder]]:
    fired: list[Reminder] = []
    for event in events:
        state, reminders = reduce(state, event)
        fired.extend(reminders)
    return state, fired


def call(tool: str, result: object = None, *, denied: bool = False) -> ToolCallFinished:
    return ToolCallFinished("a", tool, {"path": "x"}, denied=denied, result=result)


def cycles(results: Sequence[object], **settings: object) -> list[tuple[str, int]]:
    """A B A B ... with these results in turn (A's and B's alike), as (form, count)."""
    config = GuardConfig(cycle_period=2, cycle_thresholds=(2, 3), progress="result", **settings)  # type: ignore[arg-type]  # test settings
    calls = [call("AB"[n % 2], result) for n, result in enumerate(results)]
    _, fired = run(GuardState.initial(config), *calls)
    return [(r.form, r.count) for r in fired]


def test_a_cycle_whose_results_keep_changing_is_not_reported_under_progress() -> None:
    assert cycles(list(range(6))) == []
    # The same cycle with results that do not change, or are not reported, is one.
    assert cycles(["same"] * 6) == [("cycle", 2), ("cycle", 3)]
    assert cycles([None] * 6) == [("cycle", 2), ("cycle", 3)]


def test_each_call_is_compared_with_the_call_one_period_before() -> None:
    # A always answers "a", B always "b": different from each other, the same round to round.
    assert cycles(["a", "b"] * 3) == [("cycle", 2), ("cycle", 3)]
    # B's answer changes in the third round (its 6th call): progress, so the run starts over
    # at 2 calls there, and two more rounds later it is a cycle of 2 again.
    changed = ["a", "b", "a", "b", "a", "c", "a", "c"]
    assert cycles(changed) == [("cycle", 2), ("cycle", 2)]
    assert cycles(changed[:7]) == [("cycle", 2)]


def test_without_progress_a_cycle_ignores_its_results() -> None:
    config = GuardConfig(cycle_period=2, cycle_thresholds=(3,))
    _, fired = run(GuardState.initial(config), *[call("AB"[n % 2], n) for n in range(6)])
    assert [(r.form, r.count) for r in fired] == [("cycle", 3)]
    assert GuardState.initial(config).memory("a").outcomes == ()


def test_a_denied_attempt_in_a_cycle_is_no_progress() -> None:
    config = GuardConfig(cycle_period=2, cycle_thresholds=(2,), progress="result")
    events = [call("A", 1), call("B", 2), call("A", 3, denied=True), call("B", 2)]
    _, fired = run(GuardState.initial(config), *events)
    assert [(r.form, r.count) for r in fired] == [("cycle", 2)]


def returned(tool: str, result: object) -> ToolCallReturned:
    return ToolCallReturned("a", tool, {"path": "x"}, result)


def test_results_reported_after_their_calls_are_compared_when_they_come() -> None:
    config = GuardConfig(cycle_period=2, cycle_thresholds=(2, 3), progress="result")
    state = GuardState.initial(config)
    events: list[Event] = []
    for n in range(6):
        tool = "AB"[n % 2]
        events += [call(tool), returned(tool, f"{tool}{n}")]
    _, fired = run(state, *events)
    # Each call counts as no progress until its result comes (a run of 3 calls, one short of
    # two rounds), and then its changed result starts the count over.
    assert fired == []
    events = []
    for n in range(6):
        tool = "AB"[n % 2]
        events += [call(tool), returned(tool, tool)]
    _, fired = run(state, *events)
    assert [(r.form, r.count) for r in fired] == [("cycle", 2), ("cycle", 3)]


def test_a_late_result_shortens_only_a_run_that_grew_with_its_call() -> None:
    memory = Memory(runs=(2, 5), outcomes=("x", "y", "z", None))
    # Period 2: run 2 did not grow (nothing to undo). Period 3: "x", three calls before the
    # last, differs from "w".
    assert cycle_returned(memory, "w") == Memory(runs=(2, 3), outcomes=("x", "y", "z", "w"))
    # The same result as three calls before is no progress: the run stands.
    assert cycle_returned(memory, "x").runs == (2, 5)
    # With no outcomes kept (progress off, or a memory stored before them), nothing changes.
    assert cycle_returned(Memory(runs=(4,)), "w") == Memory(runs=(4,))


def test_only_the_last_period_plus_one_outcomes_are_kept() -> None:
    config = GuardConfig(cycle_period=2, progress="result")
    state, _ = run(GuardState.initial(config), *[call("AB"[n % 2], n) for n in range(5)])
    outcomes = state.memory("a").outcomes
    assert len(outcomes) == 3
    assert outcomes[-1] == state.memory("a").result
    state, _ = run(state, PromptSubmitted("a"))
    assert state.memory("a") == Memory()


def deny_config(**settings: object) -> GuardConfig:
    return GuardConfig(cycle_period=3, cycle_deny_at=2, **settings)  # type: ignore[arg-type]  # test settings


def test_cycle_deny_at_refuses_the_call_that_would_complete_the_nth_repetition() -> None:
    state = GuardState.initial(deny_config())
    for tool in ["A", "B", "A"]:
        assert isinstance(admit(state, call(tool)), Admit)
        state, _ = reduce(state, call(tool))
    verdict = admit(state, call("B"))
    assert isinstance(verdict, Deny)
    assert verdict.reason == (
        'refused: this call would take the same cycle of 2 tool calls (`A` {"path":"x"} → `B` '
        '{"path":"x"}) to 4 calls in a row, 2 times round, and the limit is reached. Change '
        "the approach, or finish your answer."
    )
    # The refused attempt counts, so going on round the cycle is refused too.
    state, _ = reduce(state, call("B", denied=True))
    verdict = admit(state, call("A"))
    assert isinstance(verdict, Deny)
    assert "to 5 calls in a row, 2 times round" in verdict.reason
    # Another call breaks the cycle.
    assert isinstance(admit(state, call("C")), Admit)


def test_cycle_deny_at_counts_the_call_as_no_progress_and_ignores_untracked_tools() -> None:
    state = GuardState.initial(deny_config(progress="result", exclude=("todo",)))
    state, _ = run(state, call("A", 1), call("B", 1), call("A", 2))
    # A's result changed: the run of period 2 starts at that A, so B would make 3 calls.
    assert isinstance(admit(state, call("B")), Admit)
    state, _ = run(state, call("B", 1))
    assert isinstance(admit(state, call("A")), Deny)
    assert isinstance(admit(state, ToolCallFinished("a", "todo", {"path": "x"})), Admit)


def test_a_back_to_back_repeat_is_for_deny_at_not_cycle_deny_at() -> None:
    state, _ = run(GuardState.initial(deny_config()), call("A"), call("A"), call("A"))
    assert isinstance(admit(state, call("A")), Admit)
    state, _ = run(GuardState.initial(deny_config(deny_at=3)), call("A"), call("A"))
    verdict = admit(state, call("A"))
    assert isinstance(verdict, Deny)
    assert "3rd identical call" in verdict.reason


def test_cycle_deny_at_parses_round_trips_and_needs_cycles() -> None:
    config = parse_config({"cyclePeriod": 2, "cycleDenyAt": 3}).unwrap()
    assert config.cycle_deny_at == 3
    assert config.to_mapping()["cycleDenyAt"] == 3
    assert parse_config(config.to_mapping()).unwrap() == config
    assert "cycleDenyAt" not in GuardConfig(cycle_period=2).to_mapping()
    error = parse_config({"cycleDenyAt": 3}).failure()
    assert (error.key, error.value) == ("cycleDenyAt", 3)
    assert error.message == "cycleDenyAt needs cyclePeriod (2 to 8), got 3 alone"
    bad = parse_config({"cyclePeriod": 2, "cycle_deny_at": 1}).failure()
    assert bad.message == "cycleDenyAt must be an integer of 2 or more (or absent), got 1"
    with pytest.raises(ValueError, match="needs cyclePeriod"):
        GuardConfig(cycle_deny_at=2)
