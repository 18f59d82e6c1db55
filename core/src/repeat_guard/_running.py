"""Asking before a call runs: a refused attempt counts, and admitted calls count once finished.

``admit`` answers for one call. A harness that asks before every call also has to say what a
refusal and a wait mean, and those are decisions, kept here once:

* ``attempt``: a refused attempt is still an attempt. It is reduced at once as a denied call
  (``denied=True``, which counts like any other); an admitted call is counted when it finishes.
* ``Running``: a harness that starts several calls before the first finishes counts each when it
  finishes, so until then ``admit`` counts the admitted ones in, as if they had finished first.
  An admitted call joins them; its wait ends when it finishes, or when its agent's turn ends (a
  prompt, a disposal), so that a call whose finish never came does not count for ever.
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
    """Admitted calls still running, by (agent, call id): ``running`` for ``attempt``.

    ``call_id`` is the harness's id of the call, unique among an agent's calls running at once.
    """

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
    """Ask ``admit`` whether ``call`` may run, ``running`` counted in; a refusal counts.

    Returns the verdict, the next state and the reminders: for a ``Deny``, those of the refused
    attempt, reduced at once (by ``reducer``) as ``call`` with ``denied=True``; for an
    ``Admit``, ``state`` itself and none (the call counts when it finishes).
    """
    verdict = admit(state, call, () if running is None else running.calls())
    if isinstance(verdict, Deny):
        after, reminders = reducer(state, replace(call, denied=True))
        return verdict, after, reminders
    return verdict, state, ()
