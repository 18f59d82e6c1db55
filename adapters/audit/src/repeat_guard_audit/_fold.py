"""One file's located events, folded into per-session audits (each builds its ``Waste``).

The one replay (``steps``) runs each event through the core's ``reduce`` in its session's own
state and says what each call was (the core's ``run_length``); the core's tally counts
(``SessionTallies``, in chunks, as a replay does), and this module only remembers where things
happened. A run is the chain the reducer
keeps for an agent: it starts when the chain's count is 1 and ends when the agent's next
tracked call starts another chain, when a prompt or a disposal drops the chain, or at the end
of the file. The arguments of a run are made canonical only once it is a loop.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterable
from dataclasses import dataclass

from repeat_guard import (
    AgentDisposed,
    PromptSubmitted,
    ToolCallFinished,
    canonical_arguments,
    preview_arguments,
)
from repeat_guard.tally import WASTED_FROM, PackedTally
from repeat_guard_transcripts import (
    Diagnostic,
    Item,
    Located,
    SessionSeen,
    SessionTallies,
    Step,
    is_no_call_note,
    steps,
)

from ._model import AuditSettings, FileAudit
from ._waste import UNKNOWN_DAY, Run, SessionAudit, worst_runs

__all__ = ["MAX_PROBLEMS_KEPT", "RUN_LINES_KEPT", "fold_file"]

# Lines listed per run: enough to find a loop, bounded when a loop ran a million times. A longer
# run lists its first RUN_LINES_KEPT - 1 lines and its last.
RUN_LINES_KEPT = 50
# Diagnostics kept per file; the count covers every one.
MAX_PROBLEMS_KEPT = 100
# Characters of a looping call's canonical arguments a run carries.
RUN_ARGUMENTS_CHARS = 500


@dataclass(slots=True)
class _Loop:
    """An open run that is a loop (two calls or more): the tool and arguments of the call it
    repeats (not the call, whose result may be large) and its lines."""

    tool: str
    arguments: object
    lines: list[int]
    length: int
    counted: bool


_Open = tuple[int, bool] | _Loop
"""An agent's open run: ``(line, counted)`` while it is one call long, then a ``_Loop``. A
first call is most runs' only one, and an exact tuple of ints and bools is nothing for the
garbage collector to walk."""

_Step = tuple[int, int, bool]
"""An agent's current model step (one response): the output and input tokens it cost and
whether a wasted call has already charged them."""


@functools.lru_cache(maxsize=4096)
def _valid_day(prefix: str) -> str:
    """The ``YYYY-MM-DD`` day ``prefix`` (a timestamp's first ten characters) is,
    ``UNKNOWN_DAY`` when it is none. Cached: the timestamps of a transcript share a handful of
    days."""
    try:
        day = datetime.date.fromisoformat(prefix)
    except ValueError:
        return UNKNOWN_DAY
    return day.isoformat() if day.isoformat() == prefix else UNKNOWN_DAY


class _Folder:
    """The fold's mutable cells, in flat maps keyed by session (or by session and agent)
    rather than an object per session: with a hundred thousand sessions in a file, every
    object per session is one more for each full garbage collection to walk, and the keys and
    counts here are exact tuples of strings and ints, which it stops tracking."""

    def __init__(self, file: str, fmt: str, settings: AuditSettings) -> None:
        self.file = file
        self.format = fmt
        self.settings = settings
        # The note a file that held no call ends with (``read_items``' or its reader's own),
        # held until the end: counted and named in the report instead of printed, since a
        # folder of chat-only sessions would print one a file.
        self.no_call: Diagnostic | None = None
        self.sessions: dict[str, None] = {}  # every session seen, in order of appearance
        self.projects: dict[str, str] = {}
        self.days: dict[tuple[str, str], tuple[int, int]] = {}  # calls, wasted
        self.open: dict[tuple[str, str], _Open] = {}
        self.runs: dict[str, list[Run]] = {}
        self.steps: dict[tuple[str, str], _Step] = {}
        # Per session: wasted turns, their output tokens, their input tokens.
        self.turns: dict[str, tuple[int, int, int]] = {}
        self.tallies = SessionTallies()
        self.problems: list[Diagnostic] = []
        self.diagnostics = 0

    def session(self, name: str) -> None:
        self.sessions.setdefault(name)

    def located(self, step: Step) -> None:
        # Every call of every file comes here: the session noted and the day read inline,
        # and a call (most events) told first.
        item, _, reminders, run = step
        name = item.where.session
        self.sessions.setdefault(name)
        if item.project is not None and name not in self.projects:
            self.projects[name] = item.project
        event = item.event
        timestamp = item.timestamp
        day = UNKNOWN_DAY if timestamp is None else _valid_day(timestamp[:10])
        since = self.settings.since
        # An undated call counts: its file was written on or after ``since`` to get here.
        counted = since is None or day == UNKNOWN_DAY or day >= since
        if counted:
            self.tallies.add(name, event, run, reminders)
        if isinstance(event, ToolCallFinished):
            if event.agent is not None:
                self.call(name, item, event, event.agent, run, day, counted)
        elif isinstance(event, PromptSubmitted | AgentDisposed):
            self.close_run(name, event.agent)

    def call(
        self,
        name: str,
        item: Located,
        event: ToolCallFinished,
        agent: str,
        run: int,
        day: str,
        counted: bool,
    ) -> None:
        """Follow a call with an agent: its day, its turn's cost, its run (``run`` is the
        core's ``run_length``: 0 untracked, 1 a run's first call, ``WASTED_FROM`` or more
        wasted)."""
        if item.tokens is not None or item.input_tokens is not None:
            self.steps[name, agent] = (item.tokens or 0, item.input_tokens or 0, False)
        if counted:
            key = (name, day)
            calls, wasted = self.days.get(key, (0, 0))
            self.days[key] = (calls + 1, wasted + (run >= WASTED_FROM))
            if run >= WASTED_FROM:
                self.count_turn(name, agent)
        if run:
            self.follow_run(name, event, agent, run, item.where.line, counted)

    def count_turn(self, name: str, agent: str) -> None:
        # Readers put a step's tokens on its first call only; the calls after it (parallel
        # calls of the same response) carry None and belong to the same step.
        step = self.steps.get((name, agent))
        if step is None or step[2]:
            return
        tokens, input_tokens, _ = step
        self.steps[name, agent] = (tokens, input_tokens, True)
        turns, spent, read = self.turns.get(name, (0, 0, 0))
        self.turns[name] = (turns + 1, spent + tokens, read + input_tokens)

    def follow_run(
        self, name: str, event: ToolCallFinished, agent: str, length: int, line: int, counted: bool
    ) -> None:
        key = (name, agent)
        current = self.open.get(key)
        if length == 1 or current is None:
            # The agent's open run, if any, ends here (``close_run``, its entry replaced).
            if isinstance(current, _Loop) and current.counted:
                self.keep_run(name, agent, current)
            self.open[key] = (line, counted)
        elif isinstance(current, tuple):
            # The run's second call: its arguments are the first's, canonically (the chain's
            # key is the same), so this call stands for the loop.
            first, was_counted = current
            loop = _Loop(event.tool, event.arguments, [first, line], length, was_counted or counted)
            self.open[key] = loop
        else:
            current.length = length
            current.counted = current.counted or counted
            if len(current.lines) < RUN_LINES_KEPT:
                current.lines.append(line)
            else:  # the last line kept is always the run's last
                current.lines[-1] = line

    def close_run(self, name: str, agent: str) -> None:
        current = self.open.pop((name, agent), None)
        if isinstance(current, _Loop) and current.counted:
            self.keep_run(name, agent, current)

    def keep_run(self, name: str, agent: str, loop: _Loop) -> None:
        arguments = preview_arguments(canonical_arguments(loop.arguments), RUN_ARGUMENTS_CHARS)
        run = Run(loop.length, loop.tool, arguments, self.file, name, agent, tuple(loop.lines))
        runs = self.runs.setdefault(name, [])
        runs.append(run)
        if len(runs) >= 4 * self.settings.keep:
            runs[:] = worst_runs(runs, self.settings.keep)

    def diagnostic(self, item: Diagnostic) -> None:
        # A note (a transcript that starts mid-way, an update for a call never announced) is
        # shown but, as in the replay, is not a diagnostic: not counted, no exit status 3.
        if item.severity == "error":
            self.diagnostics += 1
        elif is_no_call_note(item, self.format):
            self.no_call = item
            return
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(item)

    def held_no_call(self) -> bool:
        """Whether the file held no call and said nothing else: its no-call note is then
        counted, as ``read_items``' own always is; beside other diagnostics (a reader adds its
        own note whatever else it found) it is shown with them."""
        if self.no_call is None:
            return False
        if not self.problems:
            return True
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(self.no_call)
        return False

    def finish(self) -> tuple[SessionAudit, ...]:
        """Close every open run and return each session's audit, in order of appearance."""
        for name, agent in list(self.open):
            self.close_run(name, agent)
        # The summaries need the sessions' names, not their model steps: let those go before
        # the summaries are built, so the two never take memory together.
        names = list(self.sessions)
        self.steps.clear()
        days: dict[str, list[tuple[str, int, int]]] = {}
        for (name, day), (calls, wasted) in self.days.items():
            days.setdefault(name, []).append((day, calls, wasted))
        self.days.clear()
        since = self.settings.since
        counted = ((name, self.tallies.packed(name)) for name in names)
        return tuple(
            self.finish_session(name, counts, tuple(days.get(name, ())))
            for name, counts in counted
            if since is None or counts[0]  # calls
        )

    def finish_session(
        self, name: str, counts: PackedTally, days: tuple[tuple[str, int, int], ...]
    ) -> SessionAudit:
        keep = self.settings.keep
        turns, tokens, input_tokens = self.turns.get(name, (0, 0, 0))
        return SessionAudit(
            self.file,
            name,
            self.projects.get(name, ""),
            counts,
            turns,
            tokens,
            input_tokens,
            days,
            worst_runs(self.runs.get(name, ()), keep),
            keep > 0,
        )


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
    folder = _Folder(file, fmt, settings)
    for item in steps(items, settings.config):
        if isinstance(item, Step):
            folder.located(item)
        elif isinstance(item, Diagnostic):
            folder.diagnostic(item)
        elif isinstance(item, SessionSeen):
            folder.session(item.where.session)
    sessions = folder.finish()
    no_call = folder.held_no_call()
    problems = tuple(folder.problems)
    return FileAudit(
        file,
        fmt,
        sessions,
        problems,
        1,
        size,
        folder.diagnostics,
        settings.keep,
        no_call=no_call,
    )
