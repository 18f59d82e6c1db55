"""The audit's counts over sessions, files and a whole run: what ``_fold`` computes for each
session (a ``SessionAudit``), added up into one ``Waste`` by ``merge_audits``.

An audit folds each session's events into a ``SessionAudit`` (the core's ``Tally``, packed,
plus where the runs were, which turns they cost, on which day and in which project), and adds
sessions up into files and files into one total. Files are independent, so the total must not
depend on how the work was split or in which order the pieces came back: ``merge_waste`` is
associative and commutative, and ``Waste()`` is its identity.

The core's definitions of a call, a tracked, wasted and denied call hold; these are added:

* a *run* is a maximal sequence of identical tracked calls by one agent (the chain the reducer
  keeps); a run of length 2 or more is a loop, and its length minus one is its waste;
* a *wasted turn* is a model turn (one assistant message, one response) that made at least one
  wasted call; ``wasted_tokens`` adds up the output tokens those turns recorded, once per
  turn, and ``wasted_input_tokens`` the input tokens (every token of the context the model
  read for the turn, cached or not);
* the *worst* runs are the longest, ties broken by file, first line, session, agent, tool and
  arguments, so any two ways of splitting the same work keep the same runs; the worst sessions
  are those with the most wasted calls, ties broken by calls, file and session;
* a day is the ``YYYY-MM-DD`` of the call's timestamp, ``"unknown"`` when it has none;
* a file *not a transcript* is one a folder walk found and did not read (no reader recognises
  it, it is not a regular file, or it went before its turn): counted in
  ``not_transcripts``, and the first ``NOT_TRANSCRIPTS_KEPT`` of their paths (in path order)
  kept in ``not_transcript_files``;
* a file that *held no call* is one read whole that yielded no call and no diagnostic but
  its no-call note (a session of prompts and answers alone, a file of summaries): counted in
  ``held_no_call``, and
  the first ``NOT_TRANSCRIPTS_KEPT`` of their paths (in path order) kept in
  ``held_no_call_files``;
* a file *written before since* is one found (walked or named) and left out because it was
  last written before the audit's ``since`` day: not read, not in ``files``, counted in
  ``written_before_since`` and the first ``NOT_TRANSCRIPTS_KEPT`` of their paths (in path
  order) kept in ``written_before_since_files``;
* the files *found* (``Waste.found``) are those audited, those not a transcript and those
  written before since: every file a report accounts for.

Only the best ``keep`` runs and sessions survive a merge: a total over a million files stays
as small as one over ten.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from pyrsistent import PMap, pmap

from repeat_guard.tally import (
    NO_COUNTS,
    PackedTally,
    Tally,
    TallySums,
    tally_to_json,
    unpack_tally,
)
from repeat_guard.tally import merge_tallies as _merge_tallies

__all__ = [
    "NOT_TRANSCRIPTS_KEPT",
    "UNKNOWN_DAY",
    "DayTally",
    "ProjectTally",
    "Run",
    "SessionAudit",
    "SessionWaste",
    "Waste",
    "merge_audits",
    "merge_waste",
    "waste_to_json",
    "worst_runs",
    "worst_sessions",
]

UNKNOWN_DAY = "unknown"


class Run(NamedTuple):
    """A loop: ``length`` identical calls in a row by ``agent``.

    ``arguments`` is the canonical argument text, cut to a preview by the caller; ``lines``
    holds the line of each call of the run in order: at most 50 (``RUN_LINES_KEPT``), the
    first 49 and the last when the run is longer (``length`` counts them all).
    """

    length: int
    tool: str
    arguments: str
    file: str
    session: str
    agent: str
    lines: tuple[int, ...]


class SessionWaste(NamedTuple):
    """One session's place in the ranking of sessions by waste."""

    wasted: int
    calls: int
    file: str
    session: str
    project: str


class DayTally(NamedTuple):
    """Calls and wasted calls made on one day."""

    calls: int = 0
    wasted: int = 0


class ProjectTally(NamedTuple):
    """What one project's sessions did."""

    sessions: int = 0
    calls: int = 0
    wasted: int = 0
    wasted_tokens: int = 0
    wasted_input_tokens: int = 0


NOT_TRANSCRIPTS_KEPT = 100
"""Paths of files that are not transcripts a total keeps (its count covers every one), and
paths of files that held no call, and of files written before since."""

_NO_DAYS: PMap[str, DayTally] = pmap()
_NO_PROJECTS: PMap[str, ProjectTally] = pmap()
_NO_TALLY = Tally()


class Waste(NamedTuple):
    """The audit's counts over some sessions (see the module's definitions).

    ``counts`` is the core tally of their events; ``files``, ``sessions``, ``diagnostics`` and
    ``bytes`` count what was read; ``worst`` and ``worst_sessions`` are ranked and cut to the
    ``keep`` the merge was given.
    """

    counts: Tally = _NO_TALLY
    files: int = 0
    sessions: int = 0
    diagnostics: int = 0
    bytes: int = 0
    wasted_turns: int = 0
    wasted_tokens: int = 0
    wasted_input_tokens: int = 0
    days: PMap[str, DayTally] = _NO_DAYS
    projects: PMap[str, ProjectTally] = _NO_PROJECTS
    worst: tuple[Run, ...] = ()
    worst_sessions: tuple[SessionWaste, ...] = ()
    not_transcripts: int = 0
    not_transcript_files: tuple[str, ...] = ()
    held_no_call: int = 0
    held_no_call_files: tuple[str, ...] = ()
    written_before_since: int = 0
    written_before_since_files: tuple[str, ...] = ()

    @property
    def found(self) -> int:
        """Every file counted: audited, not a transcript, or written before since."""
        return self.files + self.not_transcripts + self.written_before_since


class SessionAudit(NamedTuple):
    """What an audit keeps of one session, in exact tuples: a file may hold a hundred thousand
    sessions, and a ``Waste`` each (a score of objects: persistent maps, named tuples) cost more
    for every full garbage collection to walk, for a process pool to pickle and for the file's
    total to add up than reading the calls did.

    ``counts`` is the session's packed tally (``count_packed``), ``days`` holds
    ``(day, calls, wasted)`` rows, one per day, ``worst`` the session's worst runs, already
    ranked and cut, and ``ranked`` whether the session takes part in the ranking of sessions
    (a session with no wasted call never does). ``waste`` is the session's ``Waste``, with
    ``sessions == 1`` and the session in its project; ``merge_audits`` adds many up.
    """

    file: str
    session: str
    project: str
    counts: PackedTally = NO_COUNTS
    wasted_turns: int = 0
    wasted_tokens: int = 0
    wasted_input_tokens: int = 0
    days: tuple[tuple[str, int, int], ...] = ()
    worst: tuple[Run, ...] = ()
    ranked: bool = True

    @property
    def waste(self) -> Waste:
        """The session's counts as a ``Waste``."""
        return _session_waste(self)


def _session_waste(session: SessionAudit) -> Waste:
    """``SessionAudit.waste``: built directly, since most files hold one session and their
    total is this; ``merge_audits`` adds the same parts up without it."""
    counts = unpack_tally(session.counts)
    return Waste(
        counts=counts,
        sessions=1,
        wasted_turns=session.wasted_turns,
        wasted_tokens=session.wasted_tokens,
        wasted_input_tokens=session.wasted_input_tokens,
        days=pmap({day: DayTally(calls, wasted) for day, calls, wasted in session.days}),
        projects=pmap({session.project: _project_row(session, counts.calls, counts.wasted)}),
        worst=session.worst,
        worst_sessions=_ranking_entry(session, counts.calls, counts.wasted),
    )


def _project_row(session: SessionAudit, calls: int, wasted: int) -> ProjectTally:
    """What ``session`` adds to its project (it made ``calls`` calls, ``wasted`` wasted)."""
    return ProjectTally(1, calls, wasted, session.wasted_tokens, session.wasted_input_tokens)


def _ranking_entry(session: SessionAudit, calls: int, wasted: int) -> tuple[SessionWaste, ...]:
    """``session``'s place in the ranking of sessions: none unless it is ranked and wasted a
    call."""
    if session.ranked and wasted > 0:
        return (SessionWaste(wasted, calls, session.file, session.session, session.project),)
    return ()


def _run_rank(run: Run) -> tuple[object, ...]:
    first = run.lines[0] if run.lines else 0
    return (-run.length, run.file, first, run.session, run.agent, run.tool, run.arguments, run)


def _session_rank(session: SessionWaste) -> tuple[object, ...]:
    return (-session.wasted, -session.calls, session.file, session.session, session.project)


def worst_runs(runs: Iterable[Run], keep: int) -> tuple[Run, ...]:
    """Return the ``keep`` worst of ``runs``, worst first (see the module's definitions)."""
    return tuple(sorted(runs, key=_run_rank)[:keep])


def worst_sessions(sessions: Iterable[SessionWaste], keep: int) -> tuple[SessionWaste, ...]:
    """Return the ``keep`` sessions with the most waste, most first."""
    return tuple(sorted(sessions, key=_session_rank)[:keep])


def merge_waste(first: Waste, second: Waste, keep: int) -> Waste:
    """Return the counts of both, keeping the ``keep`` worst runs and sessions.

    Associative and commutative for a given ``keep``; ``Waste()`` is the identity whenever the
    other side already holds at most ``keep`` runs and sessions (as every merge's result does).
    """
    return Waste(
        _merge_tallies(first.counts, second.counts),
        first.files + second.files,
        first.sessions + second.sessions,
        first.diagnostics + second.diagnostics,
        first.bytes + second.bytes,
        first.wasted_turns + second.wasted_turns,
        first.wasted_tokens + second.wasted_tokens,
        first.wasted_input_tokens + second.wasted_input_tokens,
        _merge_days(first.days, second.days),
        _merge_projects(first.projects, second.projects),
        worst_runs(first.worst + second.worst, keep),
        worst_sessions(first.worst_sessions + second.worst_sessions, keep),
        first.not_transcripts + second.not_transcripts,
        _first_paths(first.not_transcript_files + second.not_transcript_files),
        first.held_no_call + second.held_no_call,
        _first_paths(first.held_no_call_files + second.held_no_call_files),
        first.written_before_since + second.written_before_since,
        _first_paths(first.written_before_since_files + second.written_before_since_files),
    )


def _first_paths(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(paths)[:NOT_TRANSCRIPTS_KEPT])


def merge_audits(parts: Iterable[SessionAudit | Waste], keep: int) -> Waste:
    """Return the counts of all of ``parts``, sessions' audits and wastes in any mix, keeping
    the ``keep`` worst runs and sessions.

    Equal to folding ``merge_waste`` over each part's ``Waste`` (a session's ``waste``) from
    ``Waste()``, and cheaper for many: the sums gather in plain counters (a session's packed
    counts and rows added directly, without its ``Waste``) and become one ``Waste`` at the end,
    and the rankings are cut to ``keep`` whenever ``4 * keep`` entries wait, so what is held
    stays bounded however many parts come. An audit of many files hands each file's sessions
    and a ``Waste`` of the file's own numbers (files, bytes, diagnostics) to one call, so no
    file's sessions are ever built into persistent maps.
    """
    sums = _WasteSums()
    for part in parts:
        if isinstance(part, SessionAudit):
            sums.add_session(part, keep)
        else:
            sums.add(part, keep)
    return sums.waste(keep)


class _WasteSums:
    """The mutable counters of one ``merge_audits`` call; never leaves it."""

    def __init__(self) -> None:
        # files, sessions, diagnostics, bytes, wasted_turns, wasted_tokens,
        # wasted_input_tokens, as in ``Waste``.
        self.numbers = [0] * 7
        self.counts = TallySums()
        self.days: dict[str, list[int]] = {}
        self.projects: dict[str, list[int]] = {}
        self.runs: list[Run] = []
        self.sessions: list[SessionWaste] = []
        self.not_transcripts = _NamedFiles()
        self.held_no_call = _NamedFiles()
        self.written_before_since = _NamedFiles()

    def add(self, waste: Waste, keep: int) -> None:
        _add_into(self.numbers, waste[1:8])
        self.counts.add(waste.counts)
        for day, both in waste.days.items():
            _add_into(self.days.setdefault(day, [0, 0]), both)
        for project, five in waste.projects.items():
            _add_into(self.projects.setdefault(project, [0] * 5), five)
        self.runs += waste.worst
        self.sessions += waste.worst_sessions
        self.not_transcripts.add(waste.not_transcripts, waste.not_transcript_files)
        self.held_no_call.add(waste.held_no_call, waste.held_no_call_files)
        self.written_before_since.add(waste.written_before_since, waste.written_before_since_files)
        self.cut(keep)

    def add_session(self, session: SessionAudit, keep: int) -> None:
        """Add the ``Waste`` that ``session`` stands for (``SessionAudit.waste``)."""
        counts = session.counts
        calls, wasted = counts[0], counts[2]
        numbers = self.numbers
        numbers[1] += 1
        numbers[4] += session.wasted_turns
        numbers[5] += session.wasted_tokens
        numbers[6] += session.wasted_input_tokens
        self.counts.add_packed(counts)
        for day, day_calls, day_wasted in session.days:
            _add_into(self.days.setdefault(day, [0, 0]), (day_calls, day_wasted))
        project = _project_row(session, calls, wasted)
        _add_into(self.projects.setdefault(session.project, [0] * 5), project)
        self.runs += session.worst
        self.sessions += _ranking_entry(session, calls, wasted)
        self.cut(keep)

    def cut(self, keep: int) -> None:
        """Cut the rankings waiting to ``keep`` once ``4 * keep`` entries wait."""
        if len(self.runs) >= 4 * keep:
            self.runs[:] = worst_runs(self.runs, keep)
        if len(self.sessions) >= 4 * keep:
            self.sessions[:] = worst_sessions(self.sessions, keep)

    def waste(self, keep: int) -> Waste:
        files, sessions, diagnostics, size, turns, tokens, input_tokens = self.numbers
        return Waste(
            self.counts.tally(),
            files,
            sessions,
            diagnostics,
            size,
            turns,
            tokens,
            input_tokens,
            pmap({day: DayTally(*both) for day, both in self.days.items()}),
            pmap({name: ProjectTally(*five) for name, five in self.projects.items()}),
            worst_runs(self.runs, keep),
            worst_sessions(self.sessions, keep),
            *self.not_transcripts.total(),
            *self.held_no_call.total(),
            *self.written_before_since.total(),
        )


class _NamedFiles:
    """The count of one kind of file a ``_WasteSums`` names, and the first of their paths
    (cut to ``NOT_TRANSCRIPTS_KEPT`` once four times that many wait)."""

    __slots__ = ("count", "paths")

    def __init__(self) -> None:
        self.count = 0
        self.paths: list[str] = []

    def add(self, count: int, paths: tuple[str, ...]) -> None:
        if count:
            self.count += count
            self.paths += paths
            if len(self.paths) >= 4 * NOT_TRANSCRIPTS_KEPT:
                self.paths[:] = _first_paths(self.paths)

    def total(self) -> tuple[int, tuple[str, ...]]:
        return self.count, _first_paths(self.paths)


def _add_into(sums: list[int], values: tuple[int, ...]) -> None:
    for index, value in enumerate(values):
        sums[index] += value


def _merge_days(first: PMap[str, DayTally], second: PMap[str, DayTally]) -> PMap[str, DayTally]:
    merged = first
    for day, theirs in second.items():
        mine = merged.get(day)
        both = theirs if mine is None else DayTally(mine[0] + theirs[0], mine[1] + theirs[1])
        merged = merged.set(day, both)
    return merged


def _merge_projects(
    first: PMap[str, ProjectTally], second: PMap[str, ProjectTally]
) -> PMap[str, ProjectTally]:
    merged = first
    for name, theirs in second.items():
        mine = merged.get(name)
        merged = merged.set(name, theirs if mine is None else _merge_project(mine, theirs))
    return merged


def _merge_project(first: ProjectTally, second: ProjectTally) -> ProjectTally:
    return ProjectTally(
        first.sessions + second.sessions,
        first.calls + second.calls,
        first.wasted + second.wasted,
        first.wasted_tokens + second.wasted_tokens,
        first.wasted_input_tokens + second.wasted_input_tokens,
    )


def waste_to_json(waste: Waste) -> dict[str, object]:
    """Return ``waste`` as JSON-ready values: maps sorted by key, rankings in rank order."""
    return {
        **tally_to_json(waste.counts),
        "files": waste.files,
        "sessions": waste.sessions,
        "diagnostics": waste.diagnostics,
        "bytes": waste.bytes,
        "wasted_turns": waste.wasted_turns,
        "wasted_tokens": waste.wasted_tokens,
        "wasted_input_tokens": waste.wasted_input_tokens,
        "days": {day: counts._asdict() for day, counts in sorted(waste.days.items())},
        "projects": {name: p._asdict() for name, p in sorted(waste.projects.items())},
        "worst_runs": [{**run._asdict(), "lines": list(run.lines)} for run in waste.worst],
        "worst_sessions": [session._asdict() for session in waste.worst_sessions],
        "not_transcripts": waste.not_transcripts,
        "not_transcript_files": list(waste.not_transcript_files),
        "held_no_call": waste.held_no_call,
        "held_no_call_files": list(waste.held_no_call_files),
        "written_before_since": waste.written_before_since,
        "written_before_since_files": list(waste.written_before_since_files),
        "files_found": waste.found,
    }
