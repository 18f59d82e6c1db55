"""Each session's tally of one file, counted in bounded chunks by the core's ``count_calls``.

A replay and an audit both hand every step (the event, its run as the core's ``run_length``
gave it, the reminders ``reduce`` gave) to ``SessionTallies.add``. What the tally reads of a
call (``counted_call``: its tool, run, ``denied`` and reminder forms) waits in one map, with how
many calls read the same, while the steps come from the same session; the map is counted when
the session changes, when ``CHUNK_STEPS`` different calls wait, or when a session's tally is
asked for: one map for the whole file, so what waits stays bounded however many sessions a
file holds or interleaves, and no call's arguments or result is kept alive by it. Each
session's counts are the core's ``PackedTally``, exact tuples: sessions that interleave call by
call cost a chunk of one call each, not a tally merged per call, and a hundred thousand
sessions' counts give the garbage collector nothing to walk.
"""

from __future__ import annotations

from typing import Final

from repeat_guard import Event, Reminder
from repeat_guard.tally import NO_COUNTS, CountedCall, PackedTally, count_calls, counted_call

__all__ = ["CHUNK_STEPS", "SessionTallies"]

CHUNK_STEPS: Final = 256
"""The most different calls waiting to be counted."""


class SessionTallies:
    """The tally of each session of one file, fed step by step."""

    __slots__ = ("_counts", "_pending", "_session")

    def __init__(self) -> None:
        self._counts: dict[str, PackedTally] = {}
        self._session = ""
        self._pending: dict[CountedCall, int] = {}

    def add(self, session: str, event: Event, run: int, reminders: tuple[Reminder, ...]) -> None:
        """Count ``event`` in ``session``: ``run`` is its ``run_length`` in the state ``reduce``
        returned for it, ``reminders`` what it gave."""
        if session != self._session or len(self._pending) >= CHUNK_STEPS:
            self._count()
            self._session = session
        call = counted_call(event, run, reminders)
        if call is not None:
            self._pending[call] = self._pending.get(call, 0) + 1

    def packed(self, session: str) -> PackedTally:
        """Return the counts of every step of ``session`` added so far, as the core's
        ``PackedTally`` (``NO_COUNTS`` if none; ``unpack_tally`` reads it)."""
        self._count()
        return self._counts.get(session, NO_COUNTS)

    def _count(self) -> None:
        if self._pending:
            session = self._session
            self._counts[session] = count_calls(self._counts.get(session, NO_COUNTS), self._pending)
            self._pending = {}
