"""Rendering replay outcomes: the text report, the JSONL records and the ``--check`` diff.

Pure functions from the transcripts package's values to lines of text; the command decides
where they go. Nothing here knows which format a file was in. Every line is made safe to write:
text that cannot be encoded (a lone surrogate decoded from a ``\\ud800`` escape, a file name
with undecodable bytes) is written as a backslash escape, which in JSON is the same escape.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence

from repeat_guard.tally import Tally, tally_to_json
from repeat_guard_transcripts import (
    Diagnostic,
    FileSummary,
    Fired,
    Recorded,
    Unfinished,
    counted,
    printable,
)

from ._reminder_json import reminder_fields

__all__ = [
    "check_lines",
    "diagnostic_line",
    "noted_line",
    "reminder_record",
    "safe",
    "summary_record",
    "text_report",
    "unfinished_record",
]


def safe(text: str) -> str:
    """``text`` fit for a terminal (``printable``): control characters and anything UTF-8
    cannot encode written as backslash escapes."""
    return printable(text)


def _json(record: dict[str, object]) -> str:
    return safe(json.dumps(record, ensure_ascii=False))


def diagnostic_line(diagnostic: Diagnostic) -> str:
    """Return ``FILE:LINE: message`` (``FILE:LINE: note: message`` for a note)."""
    note = "note: " if diagnostic.severity == "note" else ""
    return safe(f"{diagnostic.file}:{diagnostic.line}: {note}{diagnostic.message}")


def reminder_record(item: Fired) -> str:
    """Return the JSON line for one reminder."""
    where = item.where
    record = {
        "type": "reminder",
        "file": where.file,
        "line": where.line,
        "session": where.session,
        **reminder_fields(item.reminder),
    }
    return _json(record)


def unfinished_record(item: Unfinished) -> str:
    """Return the JSON line for a call that never finished."""
    where = item.where
    record = {
        "type": "unfinished",
        "file": where.file,
        "line": where.line,
        "session": where.session,
        "tool": item.tool,
    }
    return _json(record)


def summary_record(summary: FileSummary, lines: int) -> str:
    """Return the JSON line summing up one file of ``lines`` lines."""
    record: dict[str, object] = {
        "type": "summary",
        "file": summary.file,
        "lines": lines,
        **tally_to_json(summary.tally),
        "unfinished": summary.unfinished,
        "diagnostics": summary.errors,
        "notes": summary.notes,
        "sessions": [
            {
                "session": session.session,
                "agents": session.agents,
                **tally_to_json(session.tally),
                "unfinished": session.unfinished,
            }
            for session in summary.sessions
        ],
    }
    return _json(record)


def _counts(counts: Tally, unfinished: int) -> str:
    return (
        f"calls {counts.calls}, tracked {counts.tracked}, wasted {counts.wasted}, "
        f"denied {counts.denied}, reminders {counts.reminders}, "
        f"longest run {counts.longest_run}, unfinished {unfinished}"
    )


def noted_line(item: Fired | Unfinished) -> str:
    """Return the text report's line for a firing point or a call that never finished."""
    if isinstance(item, Fired):
        reminder = item.reminder
        return safe(f"    line {item.where.line}: {reminder.summary} ({reminder.form})")
    return safe(f"    line {item.where.line}: {item.tool} never finished")


def text_report(
    summary: FileSummary, lines: int, noted: Callable[[str], Iterable[str]]
) -> Iterator[str]:
    """Yield the lines reporting one file: each session's firing points and unfinished calls
    (``noted(session)``: its ``noted_line`` lines, in input order) and counts, then the
    file's totals."""
    sessions = len(summary.sessions)
    yield safe(f"{summary.file}: {counted(lines, 'line')}, {counted(sessions, 'session')}")
    for session in summary.sessions:
        yield safe(f"  session {session.session}, {counted(session.agents, 'agent')}")
        yield from noted(session.session)
        yield f"    {_counts(session.tally, session.unfinished)}"
    yield (
        f"  total: {_counts(summary.tally, summary.unfinished)}, "
        f"diagnostics {summary.errors}, notes {summary.notes}"
    )


_Key = tuple[str, str, int, str]


def check_lines(summary: FileSummary, computed: Sequence[Fired]) -> list[str]:
    """Return the differences between the reminders recorded in a file and those computed
    now, compared by (session, tool, count, form) in order; empty when they agree."""
    recorded = summary.recorded
    old = [_recorded_key(item) for item in recorded]
    new = [_computed_key(item) for item in computed]
    lines: list[str] = []
    import difflib  # noqa: PLC0415  # only --check compares: every report imports this module

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            continue
        lines.extend(
            safe(
                f"  - recorded {_where(item.where.file, item.where.line, item.where.session)}: "
                f"{item.tool} × {item.count} ({item.form})"
            )
            for item in recorded[old_start:old_end]
        )
        lines.extend(
            safe(
                f"  + computed {_where(item.where.file, item.where.line, item.where.session)}: "
                f"{item.reminder.summary} ({item.reminder.form})"
            )
            for item in computed[new_start:new_end]
        )
    return lines


def _where(file: str, line: int, session: str) -> str:
    return f"{file}:{line} session {session}"


def _recorded_key(item: Recorded) -> _Key:
    return (item.where.session, item.tool, item.count, item.form)


def _computed_key(item: Fired) -> _Key:
    reminder = item.reminder
    return (item.where.session, reminder.tool, reminder.count, reminder.form)
