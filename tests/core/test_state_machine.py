"""Model check: ``reduce`` beside the dumb mutable model of the testing kit.

The reducer is checked the way an embedding harness checks itself (``repeat_guard_testing``),
with the kit's configs, events and ``ReferenceGuard``. Extra invariants here: every earlier
state still holds exactly the chains it held, an ignored event returns the very same state,
and the state holds chains only for agents that have one in the model (so it never grows with
agents that are gone).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import rule

from repeat_guard import (
    Admit,
    Chain,
    Deny,
    Event,
    GuardConfig,
    GuardState,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    _state,
    admit,
    argument_key,
    decode_state,
    encode_state,
    reduce,
)
from repeat_guard_testing import FAILED, RESULTS, HarnessMachine, events, fired, policy_configs

# Few agents, tools and arguments: the policies need repeats, cycles and spent budgets.
AGENTS = ("a", "b")
TOOLS = ("grep", "read", "todo_write")
ARGUMENTS: tuple[object, ...] = ({"p": 1}, {"p": 1.0, "q": None}, "raw{")


def examples(usual: int) -> int:
    """How many runs of a machine to try: ``usual``, or fewer when ``make mutation`` asks.

    A mutation campaign runs these machines once per mutant that survives the other tests,
    hundreds of times; it sets ``REPEAT_GUARD_MACHINE_EXAMPLES`` to bound each one.
    """
    return min(usual, int(os.environ.get("REPEAT_GUARD_MACHINE_EXAMPLES", usual)))


class GuardMachine(HarnessMachine):
    state: GuardState
    history: list[tuple[GuardState, dict[str, Chain]]]

    def start(self, config: GuardConfig) -> None:
        self.state = GuardState.initial(config)
        self.history = []

    def deliver(self, event: Event) -> Iterable[Reminder]:
        before = self.state
        self.history.append((before, dict(before.chains)))
        self.state, reminders = reduce(before, event)
        if isinstance(event, ToolCallFinished | ToolCallReturned) and event.agent is None:
            assert self.state is before
        return reminders

    def check(self) -> None:
        # The model keeps the canonical text; the state keeps its fixed-size key.
        expected = {
            agent: (tool, argument_key(text), count)
            for agent, (tool, text, count) in self.model.chains.items()
        }
        assert {agent: tuple(chain) for agent, chain in self.state.chains.items()} == expected
        assert len(self.state) == len(self.model.chains)
        for state, earlier in self.history[-20:]:
            assert dict(state.chains) == earlier


GuardMachine.TestCase.settings = settings(
    max_examples=examples(150), stateful_step_count=60, deadline=None
)
test_guard_machine = GuardMachine.TestCase


class PolicyMachine(GuardMachine):
    """Every opt-in policy against its own model, and ``admit`` against the model and ``reduce``.

    ``admit`` must agree with what ``reduce`` would do next: it denies exactly when reducing the
    same call (as if it made no progress) would reach ``deny_at`` identical calls in a row,
    bring a cycle to ``cycle_deny_at`` repetitions or take a budget past its limit, and it never
    changes the state.
    """

    configs = policy_configs()
    events = events(AGENTS, TOOLS, ARGUMENTS, RESULTS, FAILED)

    @rule(
        agent=st.sampled_from(AGENTS),
        block=st.lists(
            st.tuples(st.sampled_from(TOOLS), st.sampled_from(ARGUMENTS)), min_size=2, max_size=4
        ),
        times=st.integers(2, 5),
        results=st.lists(st.sampled_from(RESULTS), min_size=1, max_size=3),
        late=st.booleans(),
    )
    def go_round(
        self,
        agent: str,
        block: list[tuple[str, object]],
        times: int,
        results: list[object],
        late: bool,
    ) -> None:
        """A cycle, the shape random calls almost never take: one block, several times, its
        results drawn in turn from ``results``, each with its call or (``late``) after it."""
        for turn in range(times):
            for tool, arguments in block:
                result = results[turn % len(results)]
                steps: list[Event] = [
                    ToolCallFinished(agent, tool, arguments, result=None if late else result)
                ]
                if late:
                    steps.append(ToolCallReturned(agent, tool, arguments, result))
                for event in steps:
                    got = fired(self.deliver(event))
                    assert got == self.model.apply(event), f"after {event!r}"

    @rule(
        agent=st.sampled_from(AGENTS),
        tool=st.sampled_from(TOOLS),
        arguments=st.sampled_from(ARGUMENTS),
        results=st.lists(st.sampled_from(RESULTS), min_size=2, max_size=6),
        late=st.lists(st.booleans(), min_size=6, max_size=6),
        failed=st.lists(st.sampled_from(FAILED), min_size=6, max_size=6),
    )
    def poll(
        self,
        agent: str,
        tool: str,
        arguments: object,
        results: list[object],
        late: list[bool],
        failed: list[bool],
    ) -> None:
        """One call polled, each result reported with it or after it (as a hook sees them),
        some of them failures."""
        for result, after, failure in zip(results, late, failed, strict=False):
            reported = None if after else result
            steps: list[Event] = [
                ToolCallFinished(
                    agent, tool, arguments, result=reported, failed=failure and not after
                )
            ]
            if after:
                steps.append(ToolCallReturned(agent, tool, arguments, result, failure))
            for event in steps:
                got = fired(self.deliver(event))
                assert got == self.model.apply(event), f"after {event!r}"

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if isinstance(event, ToolCallFinished):
            self.check_admit(event)
        return super().deliver(event)

    def check_admit(self, call: ToolCallFinished) -> None:
        before = self.state
        verdict = admit(before, call)
        assert self.state is before
        assert isinstance(verdict, Admit) == self.model.admits(call), verdict
        if call.agent is None:
            return
        after, _ = reduce(before, replace(call, result=None, failed=False))
        config = before.config
        chain = after.chain(call.agent)
        repeats = chain.repeats if chain is not None and after is not before else 0
        tracked_now = config.tracks(call.tool)
        deny_at = config.policy(call.tool).deny_at
        over_repeats = deny_at is not None and tracked_now and repeats >= deny_at
        spent_before = before.memory(call.agent).spent or (0,) * len(config.budgets)
        spent_after = after.memory(call.agent).spent or (0,) * len(config.budgets)
        over_budget = any(
            spent_after[index] > max(limit, spent_before[index])
            for index, (_pattern, limit) in enumerate(config.budgets)
        )
        memory = after.memory(call.agent)
        limit = config.cycle_deny_at
        over_cycle = (
            limit is not None
            and tracked_now
            and any(
                run >= limit * period and len(set(memory.recent[-period:])) == period
                for period, run in enumerate(memory.runs, start=2)
            )
        )
        assert isinstance(verdict, Deny) == (over_repeats or over_budget or over_cycle)

    def check(self) -> None:
        super().check()
        assert set(self.state.memories) <= set(self.model.chains) | set(self.model.spent)
        decoded = decode_state(encode_state(self.state), self.state.config)
        assert decoded.unwrap() == self.state


PolicyMachine.TestCase.settings = settings(
    max_examples=examples(150), stateful_step_count=60, deadline=None
)
test_policy_machine = PolicyMachine.TestCase


class SmallLayersMachine(GuardMachine):
    """The same check with a small dict of 2 agents and shards of 1 on average, so the kit's 12
    agents pass between the two layers of the state and the shards double while they do."""

    def __init__(self) -> None:
        super().__init__()
        self.saved = (_state._RECENT_SLOTS, _state._MIDDLE_SLOTS, _state._SHARD_LOAD)
        _state._RECENT_SLOTS, _state._MIDDLE_SLOTS, _state._SHARD_LOAD = 2, 3, 1

    def teardown(self) -> None:
        _state._RECENT_SLOTS, _state._MIDDLE_SLOTS, _state._SHARD_LOAD = self.saved
        super().teardown()


SmallLayersMachine.TestCase.settings = settings(
    max_examples=examples(100), stateful_step_count=60, deadline=None
)
test_small_layers_machine = SmallLayersMachine.TestCase
