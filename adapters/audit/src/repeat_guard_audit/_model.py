"""The values an audit passes between its worker processes and its renderers.

They are plain named tuples of core values and strings so that they pickle cheaply across a
process pool or a Dask cluster.
"""

from __future__ import annotations

from typing import NamedTuple

from pyrsistent import pmap

from repeat_guard import (
    NO_COUNTS,
    DayTally,
    GuardConfig,
    PackedTally,
    ProjectTally,
    Run,
    SessionWaste,
    Waste,
    unpack_tally,
)

__all__ = ["AuditSettings", "FileAudit", "FileJob", "Problem", "SessionAudit"]


class AuditSettings(NamedTuple):
    """What every worker needs besides the file: the guard's configuration, ``since`` (a
    ``YYYY-MM-DD`` day: calls before it are replayed but not counted) and how many worst runs
    and sessions to keep."""

    config: GuardConfig
    since: str | None = None
    keep: int = 10


class FileJob(NamedTuple):
    """One file to audit: its path, the format to read it as (``None``: no reader knows it)
    and its size when listed."""

    path: str
    format: str | None
    size: int


class Problem(NamedTuple):
    """A diagnostic as the audit reports it: ``FILE:LINE: message``."""

    file: str
    line: int
    message: str
    severity: str = "error"


class SessionAudit(NamedTuple):
    """One session's counts and where it came from.

    The counts are kept in exact tuples, and ``waste`` builds the session's ``Waste`` from
    them when it is asked for: a file may hold a hundred thousand sessions, and a ``Waste``
    each (a score of objects: persistent maps, named tuples) was more for every full garbage
    collection to walk and for a process pool to pickle than reading the calls cost. ``counts``
    is the core's packed tally, ``days`` holds ``(day, calls, wasted)`` rows, ``worst`` the
    session's worst runs, already cut, and ``ranked`` says whether the session takes part in
    the ranking of sessions (which keeps none when asked to keep none).
    """

    file: str
    format: str
    session: str
    project: str
    counts: PackedTally = NO_COUNTS
    wasted_turns: int = 0
    wasted_tokens: int = 0
    days: tuple[tuple[str, int, int], ...] = ()
    worst: tuple[Run, ...] = ()
    ranked: bool = True

    @property
    def waste(self) -> Waste:
        """The session's counts as the core's ``Waste`` (``sessions == 1``)."""
        counts = unpack_tally(self.counts)
        project = self.project
        ranked = self.ranked and counts.wasted
        return Waste(
            counts=counts,
            sessions=1,
            wasted_turns=self.wasted_turns,
            wasted_tokens=self.wasted_tokens,
            days=pmap({day: DayTally(calls, wasted) for day, calls, wasted in self.days}),
            projects=pmap(
                {project: ProjectTally(1, counts.calls, counts.wasted, self.wasted_tokens)}
            ),
            worst=self.worst,
            worst_sessions=(
                (SessionWaste(counts.wasted, counts.calls, self.file, self.session, project),)
                if ranked
                else ()
            ),
        )


class FileAudit(NamedTuple):
    """One file's result: its sessions, their merged counts (with ``files == 1``, the file's
    bytes and diagnostics) and the first diagnostics, ``waste.diagnostics`` counting all."""

    file: str
    format: str | None
    sessions: tuple[SessionAudit, ...]
    waste: Waste
    problems: tuple[Problem, ...]
