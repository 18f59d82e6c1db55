"""Rendering replay results: the text report, the JSONL records and the ``--check`` diff.

Pure functions from the ACP library's values to lines of text; the command decides where they
go. JSON records use the library's field names; reminder records carry ``"type": "reminder"``
and the per-file record ``"type": "summary"``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence

from repeat_guard import Reminder
from repeat_guard_acp import Diagnostic, FileSummary, RecordedReminder, ReplayReminder

__all__ = [
    "check_lines",
    "diagnostic_line",
    "reminder_record",
    "summary_record",
    "text_report",
]


def diagnostic_line(diagnostic: Diagnostic) -> str:
    """Return ``FILE:LINE: message``, the form editors and CI logs link to."""
    return f"{diagnostic.file}:{diagnostic.line}: {diagnostic.message}"


def reminder_record(item: ReplayReminder) -> str:
    """Return the JSON line for one reminder."""
    record = {
        "type": "reminder",
        "file": item.file,
        "line": item.line,
        "session": item.session,
        **reminder_fields(item.reminder),
    }
    return json.dumps(record, ensure_ascii=False)


def reminder_fields(reminder: Reminder) -> dict[str, object]:
    """The reminder as the command writes it, in ``replay --format json`` and ``serve`` alike."""
    return {
        "agent": reminder.agent,
        "tool": reminder.tool,
        "count": reminder.count,
        "form": reminder.form,
        "summary": reminder.summary,
        "text": reminder.text,
    }


def summary_record(summary: FileSummary) -> str:
    """Return the JSON line summing up one file."""
    record = {
        "type": "summary",
        "file": summary.file,
        "lines": summary.lines,
        "tool_calls": summary.tool_calls,
        "tracked_calls": summary.tracked_calls,
        "wasted_calls": summary.wasted_calls,
        "reminders": summary.reminders,
        "weak_identity_calls": summary.weak_identity_calls,
        "skipped": dict(summary.skipped),
        "diagnostics": summary.diagnostics,
        "sessions": [
            {
                "session": totals.session,
                "tool_calls": totals.tool_calls,
                "tracked_calls": totals.tracked_calls,
                "wasted_calls": totals.wasted_calls,
                "reminders": totals.reminders,
                "weak_identity_calls": totals.weak_identity_calls,
            }
            for totals in summary.sessions
        ],
    }
    return json.dumps(record, ensure_ascii=False)


def text_report(summary: FileSummary, reminders: Sequence[ReplayReminder]) -> Iterator[str]:
    """Yield the lines reporting one file: each session's firing points and totals, then the
    file's totals."""
    sessions = len(summary.sessions)
    plural = "" if sessions == 1 else "s"
    yield f"{summary.file}: {summary.lines} lines, {sessions} session{plural}"
    for totals in summary.sessions:
        yield f"  session {totals.session}"
        for item in reminders:
            if item.session == totals.session:
                reminder = item.reminder
                yield f"    line {item.line}: {reminder.summary} ({reminder.form})"
        yield (
            f"    tool calls {totals.tool_calls}, tracked {totals.tracked_calls}, "
            f"wasted {totals.wasted_calls}, reminders {totals.reminders}, "
            f"weak identity {totals.weak_identity_calls}"
        )
    yield (
        f"  total: tool calls {summary.tool_calls}, tracked {summary.tracked_calls}, "
        f"wasted {summary.wasted_calls}, reminders {summary.reminders}, "
        f"weak identity {summary.weak_identity_calls}, "
        f"skipped {_skipped_text(summary)}, diagnostics {summary.diagnostics}"
    )


def _skipped_text(summary: FileSummary) -> str:
    total = sum(summary.skipped.values())
    if not total:
        return "0"
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(summary.skipped.items()))
    return f"{total} ({kinds})"


_Key = tuple[str, str, int, str]


def check_lines(summary: FileSummary, computed: Sequence[ReplayReminder]) -> list[str]:
    """Return the differences between the reminders recorded in a file and those computed
    now, compared by (session, tool, count, form) in order; empty when they agree."""
    recorded = summary.recorded
    old = [_recorded_key(item) for item in recorded]
    new = [_computed_key(item) for item in computed]
    lines: list[str] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            continue
        lines.extend(
            f"  - recorded {_where(summary.file, item.line, item.session)}: "
            f"{item.tool} × {item.count} ({item.form})"
            for item in recorded[old_start:old_end]
        )
        lines.extend(
            f"  + computed {_where(summary.file, item.line, item.session)}: "
            f"{item.reminder.summary} ({item.reminder.form})"
            for item in computed[new_start:new_end]
        )
    return lines


def _where(file: str, line: int, session: str) -> str:
    return f"{file}:{line} session {session}"


def _recorded_key(item: RecordedReminder) -> _Key:
    return (item.session, item.tool, item.count, item.form)


def _computed_key(item: ReplayReminder) -> _Key:
    reminder = item.reminder
    return (item.session, reminder.tool, reminder.count, reminder.form)
