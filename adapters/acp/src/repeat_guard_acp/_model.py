"""What a replay reports: reminders where the guard fires, diagnostics, and per-file totals."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from repeat_guard import Reminder

__all__ = [
    "Diagnostic",
    "FileSummary",
    "RecordedReminder",
    "ReplayItem",
    "ReplayReminder",
    "SessionTotals",
]


@dataclass(frozen=True, slots=True)
class ReplayReminder:
    """The guard fired at ``line`` of ``file`` for ACP session ``session``."""

    file: str
    line: int
    session: str
    reminder: Reminder


@dataclass(frozen=True, slots=True)
class RecordedReminder:
    """A reminder already present in the transcript (written by ``--annotate`` or a live guard)."""

    file: str
    line: int
    session: str
    tool: str
    count: int
    form: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A line that could not be used, and why. Replay goes on after it."""

    file: str
    line: int
    message: str


@dataclass(frozen=True, slots=True)
class SessionTotals:
    """Counts for one ACP session.

    ``wasted_calls`` counts the tracked calls that repeated the previous one (count 2 or more);
    ``weak_identity_calls`` counts calls without ``rawInput``, identified by title, kind and
    locations instead.
    """

    session: str
    tool_calls: int = 0
    tracked_calls: int = 0
    wasted_calls: int = 0
    reminders: int = 0
    weak_identity_calls: int = 0


@dataclass(frozen=True, slots=True)
class FileSummary:
    """Totals for one transcript; always the last item a replay yields for it.

    ``skipped`` counts messages the replay does not use because it does not know them
    (``"method <name>"`` or ``"update <kind>"``) or because they replay history
    (``"session/load history"``).
    """

    file: str
    lines: int
    sessions: tuple[SessionTotals, ...]
    tool_calls: int
    tracked_calls: int
    wasted_calls: int
    reminders: int
    weak_identity_calls: int
    skipped: Mapping[str, int]
    diagnostics: int
    recorded: tuple[RecordedReminder, ...]


ReplayItem = ReplayReminder | Diagnostic | FileSummary
