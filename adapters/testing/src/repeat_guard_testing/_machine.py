"""A Hypothesis state machine that checks a harness against the reference model.

Subclass ``HarnessMachine``, say how to start the harness for a config and how to deliver one
core event to it, and every random interleaving of calls, prompts and disposals is compared
with ``ReferenceGuard``: the harness must give the same reminders, call for call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from repeat_guard import Event, GuardConfig, Reminder

from ._model import ReferenceGuard, fired
from ._strategies import configs, events

__all__ = ["HarnessMachine"]


class HarnessMachine(RuleBasedStateMachine):
    """Model-check a harness: override ``start`` and ``deliver``; run ``TestCase`` with pytest.

    ``configs`` and ``events`` are the strategies drawn from; override them on the subclass
    to narrow or widen what is tried. ``model`` is the reference model after every step.
    """

    configs: ClassVar[st.SearchStrategy[GuardConfig]] = configs()
    events: ClassVar[st.SearchStrategy[Event]] = events()
    model: ReferenceGuard

    def start(self, config: GuardConfig) -> None:
        """Build the harness under test for ``config`` (called once per run)."""
        raise NotImplementedError

    def deliver(self, event: Event) -> Iterable[Reminder]:
        """Feed ``event`` to the harness; return the reminders it gave for it."""
        raise NotImplementedError

    def check(self) -> None:
        """Optional: assert more about the harness after every step (``self.model`` is current)."""

    @initialize(data=st.data())
    def _begin(self, data: st.DataObject) -> None:
        config = data.draw(self.configs, label="config")
        self.model = ReferenceGuard(config)
        self.start(config)

    @rule(data=st.data())
    def _step(self, data: st.DataObject) -> None:
        event = data.draw(self.events, label="event")
        got = fired(self.deliver(event))
        assert got == self.model.apply(event), f"after {event!r}"

    @invariant()  # Hypothesis checks invariants only once _begin has run (check_during_init)
    def _checked(self) -> None:
        self.check()
