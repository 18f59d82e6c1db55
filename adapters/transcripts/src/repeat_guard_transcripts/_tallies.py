"""Each session's tally of one file, counted in bounded chunks by the core's ``count_packed``.

A replay and an audit both hand every step (the state ``reduce`` returned, the event, its
reminders) to ``SessionTallies.add``. Steps wait in one list while they come from the same
session and are counted together when the session changes, when ``CHUNK_STEPS`` are waiting,
or when a session's tally is asked for: one list for the whole file, so what waits stays
bounded however many sessions a file holds or interleaves. Each session's counts are the
core's ``PackedTally``, exact tuples: sessions that interleave call by call cost a chunk of
one step each, not a tally merged per call, and a hundred thousand sessions' counts give the
garbage collector nothing to walk.

A call that reports a result waits as a bare call (its agent, tool and ``denied``, all the tally
reads of a call; one per tool in a chunk, made again when the agent or ``denied`` differs), so
no result, however large, is kept alive until its chunk is counted; only a chunk's first call
waits whole, so at most one result waits, and sessions that interleave call by call, whose
chunks are one step each, pay nothing for it.
"""

from __future__ import annotations

from typing import Final

from repeat_guard import Event, GuardState, Reminder, ToolCallFinished
from repeat_guard.tally import NO_COUNTS, PackedTally, Step, count_packed

__all__ = ["CHUNK_STEPS", "SessionTallies"]

CHUNK_STEPS: Final = 256
"""The most steps waiting to be counted (each holds a state: a small dict of chains)."""


class SessionTallies:
    """The tally of each session of one file, fed step by step."""

    __slots__ = ("_bare", "_counts", "_pending", "_session")

    def __init__(self) -> None:
        self._counts: dict[str, PackedTally] = {}
        self._session = ""
        self._pending: list[Step] = []
        self._bare: dict[str, ToolCallFinished] = {}

    def add(
        self, session: str, state: GuardState, event: Event, reminders: tuple[Reminder, ...]
    ) -> None:
        """Count ``event`` in ``session``: ``state`` is what ``reduce`` returned for it and
        ``reminders`` what it gave."""
        if session != self._session or len(self._pending) >= CHUNK_STEPS:
            self._count()
            self._session = session
        elif type(event) is ToolCallFinished and event.result is not None:
            # Not the call: it would keep its result alive until the chunk is counted
            # (``CHUNK_STEPS`` results of a megabyte each). A bare call per tool rather than a
            # copy per call: a copy adds about 0.37 us a call here, a lookup by tool 0.07 (by
            # a tuple of agent, tool and ``denied``, 0.12).
            tool, agent, denied = event.tool, event.agent, event.denied
            bare = self._bare.get(tool)
            if bare is None or bare.agent != agent or bare.denied is not denied:
                bare = self._bare[tool] = ToolCallFinished(agent, tool, None, denied)
            event = bare
        self._pending.append((state, event, reminders))

    def packed(self, session: str) -> PackedTally:
        """Return the counts of every step of ``session`` added so far, as the core's
        ``PackedTally`` (``NO_COUNTS`` if none; ``unpack_tally`` reads it)."""
        self._count()
        return self._counts.get(session, NO_COUNTS)

    def _count(self) -> None:
        if self._pending:
            session = self._session
            self._counts[session] = count_packed(
                self._counts.get(session, NO_COUNTS), self._pending
            )
            self._pending = []
            self._bare.clear()
