"""The testing kit: its README example runs and passes, and a broken harness is caught."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    reduce,
)
from repeat_guard_testing import (
    AGENTS,
    FAILED,
    KNOWN_RESULTS,
    RESULTS,
    TOOLS,
    HarnessMachine,
    ReferenceGuard,
    configs,
    events,
    failure_events,
    fired,
    policy_configs,
    tool_calls,
)

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "testing" / "README.md"
FAST = settings(max_examples=30, stateful_step_count=30, deadline=None)


@pytest.mark.parametrize(
    ("block", "name"), [(0, "HarnessCheck"), (1, "RefusingHarnessCheck"), (2, "FailuresCheck")]
)
def test_the_readme_examples_run_and_their_model_checks_pass(block: int, name: str) -> None:
    namespaces = run_blocks(README)
    assert len(namespaces) == 3
    check = namespaces[block][name]
    assert isinstance(check, type)
    assert issubclass(check, HarnessMachine)
    run_state_machine_as_test(check, settings=FAST)


class ForgetsPrompts(HarnessMachine):
    """A harness that never forwards prompts: its chains outlive the user's interjection."""

    def start(self, config: GuardConfig) -> None:
        self.state = GuardState.initial(config)

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if isinstance(event, PromptSubmitted):
            return ()
        self.state, reminders = reduce(self.state, event)
        return reminders

    events = events(agents=["a"], tools=["grep"], arguments=[{"q": 1}])


def test_a_harness_that_drops_prompts_is_caught() -> None:
    # Found, not shrunk: shrinking a stateful failure is slow and proves nothing more here.
    quick = settings(FAST, max_examples=200, database=None, phases=[Phase.generate])
    with pytest.raises(AssertionError, match="after"):
        run_state_machine_as_test(ForgetsPrompts, settings=quick)


class RecordsRuns(HarnessMachine):
    """A correct harness that records the longest run of one call sent again as it was.

    Drawn events are new objects each time; a call sent again is the same object.
    """

    longest: ClassVar[list[int]] = [0]

    def start(self, config: GuardConfig) -> None:
        self.state = GuardState.initial(config)
        self.previous: Event | None = None
        self.run = 0

    def deliver(self, event: Event) -> Iterable[Reminder]:
        self.run = self.run + 1 if event is self.previous else 1
        self.previous = event
        self.longest[0] = max(self.longest[0], self.run)
        self.state, reminders = reduce(self.state, event)
        return reminders


def test_the_machine_sends_the_last_call_again_in_runs_that_reach_every_threshold() -> None:
    # Thresholds go up to 7: a call drawn once and sent again up to 8 times reaches them.
    quick = settings(FAST, database=None, phases=[Phase.generate])
    run_state_machine_as_test(RecordsRuns, settings=quick)
    assert RecordsRuns.longest[0] >= 8


class RefusesEveryRepeat(HarnessMachine):
    """A harness that refuses the second identical call in a row, when the limit is the third."""

    configs = st.just(GuardConfig(deny_at=3))
    events = events(agents=["a"], tools=["grep"], arguments=[{"q": 1}])

    def start(self, config: GuardConfig) -> None:
        self.state = GuardState.initial(config)

    def admit(self, call: ToolCallFinished) -> bool | None:
        return call.agent is None or self.state.chain(call.agent) is None

    def deliver(self, event: Event) -> Iterable[Reminder]:
        self.state, reminders = reduce(self.state, event)
        return reminders


def test_a_harness_that_refuses_too_early_is_caught() -> None:
    quick = settings(FAST, max_examples=200, database=None, phases=[Phase.generate])
    with pytest.raises(AssertionError, match=r"admit\(ToolCallFinished"):
        run_state_machine_as_test(RefusesEveryRepeat, settings=quick)


class DropsFailures(HarnessMachine):
    """A harness that reads every call as a success: the host's failure flag never arrives."""

    configs = policy_configs(refusals=False)
    events = failure_events()

    def start(self, config: GuardConfig) -> None:
        self.state = GuardState.initial(config)

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if isinstance(event, ToolCallFinished):
            event = replace(event, failed=False)
        self.state, reminders = reduce(self.state, event)
        return reminders


def test_a_harness_that_drops_failures_is_caught_at_the_narrow_breadth() -> None:
    quick = settings(FAST, max_examples=1000, database=None, phases=[Phase.generate])
    with pytest.raises(AssertionError, match="after"):
        run_state_machine_as_test(DropsFailures, settings=quick)


def test_the_base_machine_must_be_told_how_to_start_and_deliver() -> None:
    machine = HarnessMachine()
    with pytest.raises(NotImplementedError):
        machine.start(GuardConfig())
    with pytest.raises(NotImplementedError):
        machine.deliver(PromptSubmitted("a"))
    machine.check()  # the default adds no invariant, so it passes
    assert machine.admit(ToolCallFinished("a", "grep", {})) is None  # no decision to compare


@given(configs())
def test_configs_are_valid_and_draw_from_the_patterns(config: GuardConfig) -> None:
    assert 1 <= len(config.thresholds) <= 3
    assert all(2 <= t <= 7 for t in config.thresholds)
    assert 1 <= config.arguments_preview_chars <= 30


@settings(max_examples=50, deadline=None)
@given(st.lists(events(), min_size=10, max_size=10))
def test_events_are_mostly_calls_with_some_prompts_and_disposals(drawn: list[Event]) -> None:
    assert all(isinstance(e, ToolCallFinished | PromptSubmitted | AgentDisposed) for e in drawn)
    calls = [e for e in drawn if isinstance(e, ToolCallFinished)]
    assert all(e.agent is None or e.agent in AGENTS for e in calls)
    assert all(e.tool in TOOLS for e in calls)


@settings(max_examples=50, deadline=None)
@given(st.lists(events(results=RESULTS), min_size=40, max_size=40))
def test_with_results_events_report_some_after_their_calls(drawn: list[Event]) -> None:
    # No share is asserted: Hypothesis skews its draws on purpose (it found a list with 20 of
    # 40 results reported late), so how often a kind comes is not a property of one example.
    returned = [e for e in drawn if isinstance(e, ToolCallReturned)]
    assert all(e.result in RESULTS and e.tool in TOOLS for e in returned)
    assert all(e.agent is None or e.agent in AGENTS for e in returned)


def test_results_reported_after_their_calls_are_drawn() -> None:
    found = find(events(results=RESULTS), lambda e: isinstance(e, ToolCallReturned))
    assert isinstance(found, ToolCallReturned)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        events(results=KNOWN_RESULTS, failed=FAILED, late_results=False, refusals=False),
        min_size=20,
        max_size=20,
    )
)
def test_without_late_results_or_refusals_calls_carry_their_results(drawn: list[Event]) -> None:
    assert not any(isinstance(e, ToolCallReturned) for e in drawn)
    calls = [e for e in drawn if isinstance(e, ToolCallFinished)]
    assert all(not e.denied and e.result in KNOWN_RESULTS for e in calls)


@given(policy_configs(refusals=False))
def test_configs_without_refusals_refuse_nothing(config: GuardConfig) -> None:
    assert (config.deny_at, config.cycle_deny_at, config.budgets) == (None, None, ())
    assert all(policy.deny_at is None for _, policy in config.tools)


def test_configs_with_refusals_draw_them() -> None:
    found = find(policy_configs(), lambda c: c.deny_at is not None and bool(c.budgets))
    assert found.deny_at is not None


@given(tool_calls(agents=["x"], tools=["t"], arguments=[1]))
def test_tool_calls_use_the_given_values(call: ToolCallFinished) -> None:
    assert call.agent in ("x", None)
    assert (call.tool, call.arguments) == ("t", 1)


def test_the_reference_model_counts_resets_and_escalates() -> None:
    model = ReferenceGuard(GuardConfig(thresholds=(3, 2), exclude=("todo_*",)))
    grep = ToolCallFinished("a", "grep", {"q": 1})
    todo = ToolCallFinished("a", "todo_write", {})
    assert model.apply(grep) == []
    assert model.apply(todo) == []  # excluded: transparent
    assert model.apply(ToolCallFinished("a", "grep", {"q": 1.0})) == [("a", "grep", 2, "gentle")]
    assert model.apply(grep) == [("a", "grep", 3, "detailed")]
    assert model.chains == {"a": ("grep", '{"q":1}', 3)}
    assert model.apply(ToolCallFinished(None, "grep", {})) == []
    assert model.apply(PromptSubmitted("a")) == []
    assert model.chains == {}
    assert model.apply(grep) == []
    assert model.apply(AgentDisposed("a")) == []
    assert model.chains == {}
    assert not ReferenceGuard(GuardConfig(include=("mcp.*",))).tracks("mcpXfs")


def test_the_reference_model_reminds_of_a_failure_retried_with_calls_between() -> None:
    model = ReferenceGuard(GuardConfig(retry_window=6))
    make = ToolCallFinished("a", "make", {}, result="main.c:3: error", failed=True)
    again = ToolCallFinished("a", "make", {}, result="main.c:9: error", failed=True)
    edit = ToolCallFinished("a", "edit", {"n": 1}, result="ok")
    assert [model.apply(e) for e in (make, edit, again, edit)] == [[], [], [], []]
    assert model.apply(make) == [("a", "make", 3, "retry")]
    worked = ToolCallFinished("a", "make", {}, result="built")
    assert [model.apply(e) for e in (worked, edit, make, edit, make)] == [[], [], [], [], []]


def test_fired_reads_reminders_as_the_models_tuples() -> None:
    reminder = Reminder("a", "grep", 3, "gentle", "text", "{}")
    assert fired([reminder]) == [("a", "grep", 3, "gentle")]


def test_the_model_counts_a_failure_reported_after_its_call() -> None:
    from repeat_guard import ToolCallReturned

    model = ReferenceGuard(GuardConfig(retry_window=6))
    late = ToolCallReturned("a", "make", {}, "error", failed=True)
    fired = []
    for n in range(3):
        fired += model.apply(ToolCallFinished("a", "edit", {"n": n}, result="ok"))
        fired += model.apply(ToolCallFinished("a", "make", {}))
        fired += model.apply(late)
    assert fired == [("a", "make", 3, "retry")]
    assert model.apply(late) == []  # its result is known now
    assert model.apply(ToolCallReturned("a", "make", {}, None)) == []
    assert model.apply(ToolCallReturned(None, "make", {}, "x", failed=True)) == []
