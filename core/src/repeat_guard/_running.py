"""Asking before a call runs, decided once: a refusal counts, a running call is counted in.

``attempt``: a refused attempt is reduced at once as a denied call (it counts like any other);
an admitted one counts when it finishes. ``Running``: the admitted calls that have not finished,
which ``admit`` counts in as if they had finished first; a call's wait ends when it finishes or
its agent's turn ends (a prompt, a disposal), so a finish that never came does not count for ever.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from pyrsistent import PMap, pmap

from ._events import Event, ToolCallFinished
from ._policies import Admit, Deny
from ._reminders import Reminder
from ._state import GuardState, admit, reduce

__all__ = ["Reducer", "Running", "attempt"]

Reducer = Callable[[GuardState, Event], tuple[GuardState, tuple[Reminder, ...]]]
"""The shape of ``reduce``: what an adapter calls for every event (injectable in its tests)."""


@dataclass(frozen=True, slots=True)
class Running:
    """Admitted calls still running, by agent and the harness's call id."""

    _calls: PMap[tuple[str, str], ToolCallFinished] = field(default_factory=pmap)

    def calls(self) -> Iterable[ToolCallFinished]:
        """The running calls, in no particular order (``admit`` looks at each agent's alone)."""
        return self._calls.values()

    def admitted(self, call_id: str, call: ToolCallFinished) -> Running:
        """Return these with ``call`` running (these themselves for a call outside any agent)."""
        if call.agent is None:
            return self
        return Running(self._calls.set((call.agent, call_id), call))

    def finished(self, agent: str | None, call_id: str) -> Running:
        """Return these without ``agent``'s call ``call_id``: it finished, or failed."""
        return Running(self._calls.discard((agent, call_id))) if agent is not None else self

    def ended(self, agent: str) -> Running:
        """Return these without ``agent``'s calls: a prompt or a disposal ended its turn."""
        return Running(pmap({key: call for key, call in self._calls.items() if key[0] != agent}))


def attempt(
    state: GuardState,
    call: ToolCallFinished,
    running: Running | None = None,
    *,
    reducer: Reducer = reduce,
) -> tuple[Admit | Deny, GuardState, tuple[Reminder, ...]]:
    """``admit``'s verdict on ``call`` (``running`` counted in), the next state and reminders:
    for a ``Deny``, the refused attempt's, reduced at once by ``reducer`` as ``denied=True``;
    for an ``Admit``, ``state`` itself and none (the call counts when it finishes)."""
    verdict = admit(state, call, () if running is None else running.calls())
    if isinstance(verdict, Deny):
        after, reminders = reducer(state, replace(call, denied=True))
        return verdict, after, reminders
    return verdict, state, ()
