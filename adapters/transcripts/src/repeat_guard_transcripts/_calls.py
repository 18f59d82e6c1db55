"""Open calls awaiting their results, for formats that pair a call with its result by id.

Claude Code, Codex and OpenHands write a call and, later, its result; a call counts when its
result arrives. ``OpenCalls`` holds what a call needs until then, at most ``OPEN_CALLS`` of
them (the oldest beyond that is reported unfinished), and remembers the most recent
``DONE_MARKS`` finished ids so a duplicated result is not a second call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterator
from typing import Final, Generic, NamedTuple, TypeVar

from ._items import Diagnostic, Item, Location, Unfinished

__all__ = ["DONE_MARKS", "OPEN_CALLS", "OpenCall", "OpenCalls", "RecentMarks"]

OPEN_CALLS: Final = 4096
DONE_MARKS: Final = 4096

_Key = TypeVar("_Key", bound=Hashable)


class RecentMarks(Generic[_Key]):
    """The ``limit`` keys marked most recently, for asking whether a key was marked lately
    (a reader's finished calls: a repeated result is no news).

    A set and a queue, not one insertion-ordered dict: taking the oldest key of a dict that
    keeps losing its oldest keys walks past every deleted slot since the dict last resized
    (4 us a call against 0.45 us here, timeit)."""

    __slots__ = ("_keys", "_limit", "_order")

    def __init__(self, limit: int) -> None:
        self._keys: set[_Key] = set()
        self._order: deque[_Key] = deque()
        self._limit = limit

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def mark(self, key: _Key) -> None:
        """Mark ``key``, which is not marked (so each key is queued once)."""
        self._keys.add(key)
        self._order.append(key)
        if len(self._order) > self._limit:
            self._keys.remove(self._order.popleft())


class OpenCall(NamedTuple):
    """A call made at ``where`` by ``agent``: what the guard needs when its result comes.

    A tuple, not a frozen dataclass: one is built per call and never leaves the reader, and a
    tuple is much cheaper to build."""

    where: Location
    agent: str
    tool: str
    arguments: object
    turn: str | None = None
    tokens: int | None = None
    timestamp: str | None = None
    project: str | None = None
    input_tokens: int | None = None


class OpenCalls(Generic[_Key]):
    """Calls by id, from the call's line to its result's (an id is a string, or a key of the
    reader's own, such as a session and an id)."""

    def __init__(self) -> None:
        self._open: dict[_Key, OpenCall] = {}
        self._done: RecentMarks[_Key] = RecentMarks(DONE_MARKS)

    def __len__(self) -> int:
        return len(self._open)

    def add(self, ident: _Key, call: OpenCall) -> tuple[Unfinished, ...]:
        """Hold ``call`` until its result; a known id is ignored. Returns the call pushed out
        when too many are open (a tuple, which a reader extends its items with)."""
        if ident in self._open or ident in self._done:
            return ()
        self._open[ident] = call
        if len(self._open) > OPEN_CALLS:
            return (self._unfinished(next(iter(self._open))),)
        return ()

    def finish(self, ident: _Key) -> OpenCall | None:
        """Take the call ``ident`` out, marked finished; ``None`` when it is not open."""
        call = self._open.pop(ident, None)
        if call is not None:
            self._mark(ident)
        return call

    def finish_or_note(
        self, key: _Key, items: list[Item], where: tuple[str, int], unknown: tuple[str, str]
    ) -> OpenCall | None:
        """``finish(key)``; when the call is neither open nor finished lately (a repeated
        result is no news), add to ``items`` a note at ``where`` (file, line):
        ``"<what> '<id>' that is not in this file"`` for ``unknown``, ``(what, id)``."""
        call = self._open.pop(key, None)
        if call is not None:
            self._mark(key)
        elif not self.is_finished(key):
            what, ident = unknown
            message = f"{what} {ident!r} that is not in this file"
            items.append(Diagnostic(*where, message, "note"))
        return call

    def charge(self, ident: _Key, tokens: int, input_tokens: int | None) -> None:
        """Give the call ``ident`` its model step's output and input tokens, if it is still
        open."""
        call = self._open.get(ident)
        if call is not None:
            self._open[ident] = call._replace(tokens=tokens, input_tokens=input_tokens)

    def is_finished(self, ident: _Key) -> bool:
        """Whether ``ident`` finished recently (a repeated result is no news)."""
        return ident in self._done

    def drop_agent(self, agent: str) -> Iterator[Unfinished]:
        """Report every open call of ``agent`` unfinished (its turn ended without them)."""
        for ident in [ident for ident, call in self._open.items() if call.agent == agent]:
            yield self._unfinished(ident)

    def finish_all(self) -> list[OpenCall]:
        """Take every open call out, marked finished, oldest first (a run that ended in them)."""
        calls = list(self._open.values())
        for ident in list(self._open):
            self.finish(ident)
        return calls

    def drop_all(self) -> Iterator[Unfinished]:
        """Report every open call unfinished (the file ended)."""
        for ident in list(self._open):
            yield self._unfinished(ident)

    def _unfinished(self, ident: _Key) -> Unfinished:
        call = self._open.pop(ident)
        self._mark(ident)
        return Unfinished(call.where, call.tool)

    def _mark(self, ident: _Key) -> None:
        # Only an open id is marked, and an open id is never in ``_done`` (``add`` refuses it).
        self._done.mark(ident)
