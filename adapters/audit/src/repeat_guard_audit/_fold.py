"""One file's located events, folded into per-session ``Waste`` values.

Each session gets its own guard state: the core's ``reduce`` decides, the core's tally counts
(``SessionTallies``, in chunks, as a replay does), the core's ``run_length`` says what each
call was, and this module only remembers where things happened. A run is the chain the reducer
keeps for an agent: it starts when the chain's count is 1 and ends when the agent's next
tracked call starts another chain, when a prompt or a disposal drops the chain, or at the end
of the file. The arguments of a run are made canonical only once it is a loop.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

from pyrsistent import pmap

from repeat_guard import (
    UNKNOWN_DAY,
    DayTally,
    GuardState,
    ProjectTally,
    Run,
    SessionWaste,
    ToolCallFinished,
    Waste,
    canonical_arguments,
    merge_wastes,
    preview_arguments,
    reduce,
    run_length,
    worst_runs,
)
from repeat_guard_transcripts import Diagnostic, Item, Located, SessionSeen, SessionTallies

from ._model import AuditSettings, FileAudit, Problem, SessionAudit

__all__ = ["MAX_PROBLEMS_KEPT", "RUN_LINES_KEPT", "fold_file"]

# Lines listed per run: enough to find a loop, bounded when a loop ran a million times.
RUN_LINES_KEPT = 50
# Diagnostics kept per file; the count covers every one.
MAX_PROBLEMS_KEPT = 100
# Characters of a looping call's canonical arguments a run carries.
RUN_ARGUMENTS_CHARS = 500


@dataclass(slots=True)
class _OpenRun:
    event: ToolCallFinished
    lines: list[int]
    length: int = 1
    counted: bool = False


@dataclass(slots=True)
class _Step:
    """An agent's current model step (one response): what it cost and whether a wasted call
    has already charged it."""

    tokens: int
    charged: bool = False


@dataclass(slots=True)
class _Session:
    """The one mutable cell per session: the guard state and what has been counted."""

    name: str
    state: GuardState
    project: str | None = None
    days: dict[str, list[int]] = field(default_factory=dict)
    open_runs: dict[str, _OpenRun] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)
    steps: dict[str, _Step] = field(default_factory=dict)
    wasted_turns: int = 0
    wasted_tokens: int = 0


def _day(timestamp: str | None) -> str:
    """The ``YYYY-MM-DD`` a timestamp starts with, ``UNKNOWN_DAY`` when it starts with none."""
    if timestamp is None:
        return UNKNOWN_DAY
    return _valid_day(timestamp[:10])


@functools.lru_cache(maxsize=4096)
def _valid_day(prefix: str) -> str:
    # Cached: the timestamps of a transcript share a handful of days.
    try:
        day = datetime.date.fromisoformat(prefix)
    except ValueError:
        return UNKNOWN_DAY
    return day.isoformat() if day.isoformat() == prefix else UNKNOWN_DAY


class _Folder:
    def __init__(self, file: str, settings: AuditSettings) -> None:
        self.file = file
        self.settings = settings
        self.initial = GuardState.initial(settings.config)
        self.sessions: dict[str, _Session] = {}
        self.tallies = SessionTallies()
        self.problems: list[Problem] = []
        self.diagnostics = 0

    def session(self, name: str) -> _Session:
        found = self.sessions.get(name)
        if found is None:
            found = self.sessions[name] = _Session(name, self.initial)
        return found

    def located(self, item: Located) -> None:
        where = item.where
        session = self.session(where.session)
        if session.project is None:
            session.project = item.project
        event = item.event
        state, reminders = reduce(session.state, event)
        session.state = state
        since = self.settings.since
        day = _day(item.timestamp)
        # An undated call counts: its file was written on or after ``since`` to get here.
        counted = since is None or day == UNKNOWN_DAY or day >= since
        if counted:
            self.tallies.add(session.name, state, event, reminders)
        if not isinstance(event, ToolCallFinished):
            self.close_run(session, event.agent)
        elif event.agent is not None:
            self.call(session, item, event, event.agent, run_length(state, event), day, counted)

    def call(
        self,
        session: _Session,
        item: Located,
        event: ToolCallFinished,
        agent: str,
        run: int,
        day: str,
        counted: bool,
    ) -> None:
        """Follow a call with an agent: its day, its turn's cost, its run (``run`` is the
        core's ``run_length``: 0 untracked, 1 a run's first call, 2 or more wasted)."""
        if item.tokens is not None:
            session.steps[agent] = _Step(item.tokens)
        if counted:
            self.count_day(session, day, run >= 2)
            if run >= 2:
                self.count_turn(session, agent)
        if run:
            self.follow_run(session, event, agent, run, item.where.line, counted)

    def count_day(self, session: _Session, day: str, wasted: bool) -> None:
        counts = session.days.get(day)
        if counts is None:
            counts = session.days[day] = [0, 0]
        counts[0] += 1
        counts[1] += wasted

    def count_turn(self, session: _Session, agent: str) -> None:
        # Readers put a step's tokens on its first call only; the calls after it (parallel
        # calls of the same response) carry None and belong to the same step.
        step = session.steps.get(agent)
        if step is None or step.charged:
            return
        step.charged = True
        session.wasted_turns += 1
        session.wasted_tokens += step.tokens

    def follow_run(
        self,
        session: _Session,
        event: ToolCallFinished,
        agent: str,
        length: int,
        line: int,
        counted: bool,
    ) -> None:
        current = session.open_runs.get(agent)
        if length == 1 or current is None:
            self.close_run(session, agent)
            session.open_runs[agent] = _OpenRun(event, [line], 1, counted)
            return
        current.length = length
        current.counted = current.counted or counted
        if len(current.lines) < RUN_LINES_KEPT:
            current.lines.append(line)

    def close_run(self, session: _Session, agent: str) -> None:
        current = session.open_runs.pop(agent, None)
        if current is None or current.length < 2 or not current.counted:
            return
        event = current.event
        arguments = preview_arguments(canonical_arguments(event.arguments), RUN_ARGUMENTS_CHARS)
        run = Run(
            current.length,
            event.tool,
            arguments,
            self.file,
            session.name,
            agent,
            tuple(current.lines),
        )
        session.runs.append(run)
        if len(session.runs) >= 4 * self.settings.keep:
            session.runs[:] = worst_runs(session.runs, self.settings.keep)

    def diagnostic(self, item: Diagnostic) -> None:
        self.diagnostics += 1
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(Problem(item.file, item.line, item.message, item.severity))

    def finish_session(self, session: _Session, fmt: str) -> SessionAudit:
        for agent in list(session.open_runs):
            self.close_run(session, agent)
        counts = self.tallies.tally(session.name)
        project = session.project or ""
        keep = self.settings.keep
        waste = Waste(
            counts=counts,
            sessions=1,
            wasted_turns=session.wasted_turns,
            wasted_tokens=session.wasted_tokens,
            days=pmap({day: DayTally(*pair) for day, pair in session.days.items()}),
            projects=pmap(
                {project: ProjectTally(1, counts.calls, counts.wasted, session.wasted_tokens)}
            ),
            worst=worst_runs(session.runs, keep),
            worst_sessions=(
                (SessionWaste(counts.wasted, counts.calls, self.file, session.name, project),)
                if counts.wasted and keep
                else ()
            ),
        )
        return SessionAudit(self.file, fmt, session.name, project, waste)


def fold_file(
    file: str,
    fmt: str,
    items: Iterable[Item],
    size: int,
    settings: AuditSettings,
) -> FileAudit:
    """Return the audit of one file from the items its reader produced.

    ``size`` is the file's length in bytes. Sessions come out in the order they first
    appeared. Calls dated before ``settings.since`` are replayed (so chains stay right) but
    not counted; undated calls count (the caller skips files last written before ``since``);
    a session with nothing counted is left out when ``since`` is set.
    """
    folder = _Folder(file, settings)
    for item in items:
        if isinstance(item, Located):
            folder.located(item)
        elif isinstance(item, Diagnostic):
            folder.diagnostic(item)
        elif isinstance(item, SessionSeen):
            folder.session(item.where.session)
    sessions = tuple(
        folder.finish_session(session, fmt)
        for session in folder.sessions.values()
        if settings.since is None or folder.tallies.tally(session.name).calls
    )
    if len(sessions) == 1:
        # Most files hold one session; by the merge's identity its counts are the file's.
        total = sessions[0].waste
    else:
        total = merge_wastes((session.waste for session in sessions), settings.keep)
    total = total._replace(files=1, bytes=size, diagnostics=folder.diagnostics)
    return FileAudit(file, fmt, sessions, total, tuple(folder.problems))
