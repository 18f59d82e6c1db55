"""One replay for every format: a reader's items through the core, written once.

``steps`` feeds each located event to the core's ``reduce``, in its session's own state, and
yields it as a ``Step`` (the event where it was seen, the state ``reduce`` returned, the
reminders it gave and the run the call extends); every fold consumes steps and none calls
``reduce`` itself. ``replay`` is the command's fold: it counts each step with the core's tally
(through ``SessionTallies``, as the audit does) and passes the rest through, so the command's
reports, ``--check`` and ``--annotate`` never know which format they read. Counts are kept per
session, packed; the file's totals are their merge (``merge_packed``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple, assert_never

from repeat_guard import GuardConfig, GuardState, Reminder, ToolCallFinished, reduce
from repeat_guard.tally import PackedTally, Tally, merge_packed, run_length, unpack_tally

from ._items import Diagnostic, Item, Located, Location, Recorded, SessionSeen, Unfinished
from ._tallies import SessionTallies

__all__ = [
    "FileSummary",
    "Fired",
    "Outcome",
    "SessionSummary",
    "Step",
    "Stepped",
    "replay",
    "steps",
]


class Step(NamedTuple):
    """A located event after the core's ``reduce``: ``state`` is what it returned for the
    event's session, ``reminders`` what it gave, and ``run`` the core's ``run_length`` of the
    event (0 untracked or not a call, 1 a run's first call, ``WASTED_FROM`` or more wasted).

    A tuple: one is built per event, and only ever read."""

    located: Located
    state: GuardState
    reminders: tuple[Reminder, ...]
    run: int


Stepped = Step | Diagnostic | Unfinished | Recorded | SessionSeen
"""What ``steps`` yields: a ``Step`` for each ``Located`` item, every other item as it came."""


def steps(items: Iterable[Item], config: GuardConfig) -> Iterator[Stepped]:
    """Yield each item of ``items``, a ``Located`` one as its ``Step``: the one replay.

    Each session has its own ``GuardState`` (readers qualify agent ids by their session, so no
    chain is ever shared), so a session's state holds its own agents' chains only, however
    many sessions a file holds."""
    initial = GuardState.initial(config)
    states: dict[str, GuardState] = {}
    for item in items:
        if isinstance(item, Located):
            # No name for the event: held while the next item is read, it would keep its
            # result alive (the item's name is rebound to that item).
            name = item.where.session
            state, reminders = reduce(states.get(name, initial), item.event)
            states[name] = state
            yield Step(item, state, reminders, run_length(state, item.event))
        else:
            yield item


@dataclass(frozen=True, slots=True)
class Fired:
    """The guard fired at ``where``: ``reminder`` would reach the agent's next request."""

    where: Location
    reminder: Reminder


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session's counts: its agents, the core's tally, and its calls that never finished.

    The tally is kept packed (``counts``, the core's ``PackedTally``) and unpacked when asked
    for: a file may hold a hundred thousand sessions, and a ``Tally`` each is a handful of
    persistent maps for every full garbage collection to walk.
    """

    session: str
    agents: int
    counts: PackedTally
    unfinished: int

    @property
    def tally(self) -> Tally:
        """The session's tally."""
        return unpack_tally(self.counts)


@dataclass(frozen=True, slots=True)
class FileSummary:
    """Totals for one file; always the last outcome of its replay.

    ``sessions`` lists every session seen, in order of first appearance, calls or not;
    ``tally`` is the merge of theirs. ``errors`` and ``notes`` count diagnostics by severity;
    ``recorded`` lists the reminders already in the file.
    """

    file: str
    sessions: tuple[SessionSummary, ...]
    tally: Tally
    unfinished: int
    errors: int
    notes: int
    recorded: tuple[Recorded, ...]


Outcome = Fired | Diagnostic | Unfinished | Recorded | FileSummary


class _Replay:
    """The replay's mutable cells: each session's counts so far, in order of appearance.

    Kept in flat maps rather than an object per session: with a hundred thousand sessions in
    a file, every object per session is one more for each full garbage collection to walk (a
    session's agents are ``(session, agent)`` pairs in one set, exact tuples of strings that
    the collector stops tracking).
    """

    def __init__(self) -> None:
        self.sessions: dict[str, None] = {}
        self.agents: set[tuple[str, str]] = set()
        self.unfinished: dict[str, int] = {}
        self.tallies = SessionTallies()
        self.recorded: list[Recorded] = []
        self.errors = 0
        self.notes = 0

    def session(self, name: str) -> None:
        self.sessions.setdefault(name)

    def on_step(self, step: Step) -> Iterator[Fired]:
        located, _, reminders, run = step
        name = located.where.session
        event = located.event
        self.session(name)
        self.tallies.add(name, event, run, reminders)
        if isinstance(event, ToolCallFinished) and event.agent is not None:
            self.agents.add((name, event.agent))
        for reminder in reminders:
            yield Fired(located.where, reminder)

    def on_item(self, item: Stepped) -> Iterator[Outcome]:
        match item:
            case Step():
                yield from self.on_step(item)
            case Diagnostic():
                self.errors += item.severity == "error"
                self.notes += item.severity == "note"
                yield item
            case Unfinished():
                name = item.where.session
                self.session(name)
                self.unfinished[name] = self.unfinished.get(name, 0) + 1
                yield item
            case Recorded():
                self.session(item.where.session)
                self.recorded.append(item)
                yield item
            case SessionSeen():
                self.session(item.where.session)
            case _:
                assert_never(item)

    def summary(self, file: str) -> FileSummary:
        agents = Counter(name for name, _ in self.agents)
        summaries = tuple(
            SessionSummary(
                name, agents[name], self.tallies.packed(name), self.unfinished.get(name, 0)
            )
            for name in self.sessions
        )
        total = unpack_tally(merge_packed(summary.counts for summary in summaries))
        unfinished = sum(self.unfinished.values())
        return FileSummary(
            file, summaries, total, unfinished, self.errors, self.notes, tuple(self.recorded)
        )


def replay(items: Iterable[Item], config: GuardConfig, *, file: str) -> Iterator[Outcome]:
    """Replay one file's items; yield, in input order, every reminder the guard fires (as
    ``Fired``), the diagnostics, unfinished calls and recorded reminders, then the file's
    ``FileSummary``. Never raises for any items a reader yields."""
    replayer = _Replay()
    for item in steps(items, config):
        yield from replayer.on_item(item)
    yield replayer.summary(file)
