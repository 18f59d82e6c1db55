"""A Hypothesis state machine that checks a harness against the reference model.

Subclass ``HarnessMachine``, say how to start the harness for a config and how to deliver one
core event to it, and every random interleaving of calls, prompts and disposals is compared
with ``ReferenceGuard``: the harness must give the same reminders, call for call. Besides
drawing events, the machine sends the last call again, 1 to 8 times in a row: runs of identical
calls are what the guard counts, and drawn events alone make long ones rare. A harness
that refuses calls (``denyAt``, name budgets) also says what it would decide for each call
before it is delivered, and that is compared with ``ReferenceGuard.admits``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from repeat_guard import Event, GuardConfig, Reminder, ToolCallFinished

from ._model import ReferenceGuard, fired
from ._strategies import configs, events

__all__ = ["HarnessMachine"]


class HarnessMachine(RuleBasedStateMachine):
    """Model-check a harness: override ``start`` and ``deliver`` (and optionally ``admit`` and
    ``check``); run ``TestCase`` with pytest.

    ``configs`` and ``events`` are the strategies drawn from; override them on the subclass
    to narrow or widen what is tried. ``model`` is the reference model after every step.
    """

    configs: ClassVar[st.SearchStrategy[GuardConfig]] = configs()
    events: ClassVar[st.SearchStrategy[Event]] = events()
    model: ReferenceGuard
    _last_call: ToolCallFinished | None = None

    def start(self, config: GuardConfig) -> None:
        """Build the harness under test for ``config`` (called once per run)."""
        raise NotImplementedError

    def deliver(self, event: Event) -> Iterable[Reminder]:
        """Feed ``event`` to the harness; return the reminders it gave for it."""
        raise NotImplementedError

    def admit(self, call: ToolCallFinished) -> bool | None:
        """Optional: whether the harness would let ``call`` run (``True``) or refuse it (``False``).

        Asked for every drawn call before it is delivered, and compared with
        ``model.admits(call)``; ``None`` (the default) means the harness does not report its
        decision, and nothing is compared. The call is then delivered as drawn, ``denied`` or
        not. Draw ``configs`` from ``policy_configs()`` for ``deny_at`` and budgets to occur.
        """
        return None

    def check(self) -> None:
        """Optional: assert more about the harness after every step (``self.model`` is current)."""

    @initialize(data=st.data())
    def _begin(self, data: st.DataObject) -> None:
        config = data.draw(self.configs, label="config")
        self._last_call = None
        self.model = ReferenceGuard(config)
        self.start(config)

    @rule(data=st.data())
    def _step(self, data: st.DataObject) -> None:
        self._compare(data.draw(self.events, label="event"))

    @precondition(lambda self: self._last_call is not None)
    @rule(times=st.integers(1, 8))
    def _repeat(self, times: int) -> None:
        call = self._last_call
        assert call is not None  # the precondition
        for _ in range(times):
            self._compare(call)

    def _compare(self, event: Event) -> None:
        if isinstance(event, ToolCallFinished):
            self._last_call = event
            admitted = self.admit(event)
            if admitted is not None:
                assert admitted == self.model.admits(event), f"admit({event!r})"
        got = fired(self.deliver(event))
        assert got == self.model.apply(event), f"after {event!r}"

    @invariant()  # Hypothesis checks invariants only once _begin has run (check_during_init)
    def _checked(self) -> None:
        self.check()
