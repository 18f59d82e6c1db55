"""Model check: ``reduce`` beside the dumb mutable model of the testing kit.

The reducer is checked the way an embedding harness checks itself (``repeat_guard_testing``),
with the kit's configs, events and ``ReferenceGuard``. Extra invariants here: every earlier
state still holds exactly the chains it held, an ignored event returns the very same state,
and the state holds chains only for agents that have one in the model (so it never grows with
agents that are gone).
"""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import settings

from repeat_guard import (
    Chain,
    Event,
    GuardConfig,
    GuardState,
    Reminder,
    ToolCallFinished,
    argument_key,
    reduce,
)
from repeat_guard_testing import HarnessMachine


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
        if isinstance(event, ToolCallFinished) and event.agent is None:
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


GuardMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=60, deadline=None)
test_guard_machine = GuardMachine.TestCase
