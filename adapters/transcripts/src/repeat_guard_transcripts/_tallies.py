"""Each session's tally of one file, counted in bounded chunks by the core's ``tally_steps``.

A replay and an audit both hand every step (the state ``reduce`` returned, the event, its
reminders) to ``SessionTallies.add``. Counting a step at a time with ``tally`` builds a new
tally per call; here steps wait in one list while they come from the same session and are
counted together when the session changes, when ``CHUNK_STEPS`` are waiting, or when a
session's tally is asked for. One list for the whole file: what waits stays bounded however
many sessions a file holds or interleaves.
"""

from __future__ import annotations

from typing import Final

from repeat_guard import Event, GuardState, Reminder, Step, Tally, tally_steps

__all__ = ["CHUNK_STEPS", "SessionTallies"]

CHUNK_STEPS: Final = 256
"""The most steps waiting to be counted (each holds a state: a small dict of chains)."""

_NOTHING = Tally()


class SessionTallies:
    """The tally of each session of one file, fed step by step."""

    __slots__ = ("_counts", "_pending", "_session")

    def __init__(self) -> None:
        self._counts: dict[str, Tally] = {}
        self._session = ""
        self._pending: list[Step] = []

    def add(
        self, session: str, state: GuardState, event: Event, reminders: tuple[Reminder, ...]
    ) -> None:
        """Count ``event`` in ``session``: ``state`` is what ``reduce`` returned for it and
        ``reminders`` what it gave."""
        if session != self._session or len(self._pending) >= CHUNK_STEPS:
            self._count()
            self._session = session
        self._pending.append((state, event, reminders))

    def tally(self, session: str) -> Tally:
        """Return the tally of every step of ``session`` added so far (``Tally()`` if none)."""
        self._count()
        return self._counts.get(session, _NOTHING)

    def _count(self) -> None:
        if self._pending:
            session = self._session
            self._counts[session] = tally_steps(self._counts.get(session, _NOTHING), self._pending)
            self._pending = []
