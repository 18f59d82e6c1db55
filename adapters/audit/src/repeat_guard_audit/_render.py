"""Rendering an audit: JSON lines, CSV rows and the text summary.

Pure functions from audit values to text. Session records stream out as files finish; the
totals come last. Text that came from transcripts (paths, tool names, arguments) may hold lone
surrogates: JSON escapes them, the text and CSV forms show them as ``\\udXXX`` escapes, so no
output can fail to encode. Control characters (a line break, an escape) in such text are
escaped the same way in the text and CSV forms, so each CSV record is one line.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence

from repeat_guard import FORMS, Form
from repeat_guard.tally import Tally, unpack_tally
from repeat_guard_transcripts import Diagnostic, printable

from ._waste import Run, SessionAudit, Waste, waste_to_json

__all__ = [
    "CSV_FIELDS",
    "NAMED_FORMS",
    "WIDTH",
    "clean",
    "csv_header",
    "csv_session_row",
    "csv_totals_row",
    "json_session_line",
    "json_totals_line",
    "reminders_by_form",
    "share",
    "text_summary",
]

# The escalation's forms, which the JSON and text reports name even when none was given; the
# opt-in policies' forms (cycle, budget) join them when given. CSV has a column for every form
# the core defines, given or not: a spreadsheet wants the same header from every run.
NAMED_FORMS: tuple[Form, ...] = ("gentle", "detailed")
WIDTH = 100


def clean(text: str) -> str:
    """Return ``text`` with any lone surrogate written as a ``\\udXXX`` escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _dumps(record: dict[str, object]) -> str:
    text = json.dumps(record, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(record)
    return text


def reminders_by_form(counts: Tally) -> dict[str, int]:
    """Return reminders per form: the standard forms always, any other form the core gave."""
    forms: dict[str, int] = dict.fromkeys(NAMED_FORMS, 0)
    forms.update(sorted(counts.reminders_by_form.items()))
    return forms


def share(part: int, whole: int) -> float:
    """Return ``part / whole`` rounded to 4 decimals, 0.0 for an empty whole."""
    return round(part / whole, 4) if whole else 0.0


def _counts_record(
    counts: Tally, wasted_turns: int, wasted_tokens: int, wasted_input_tokens: int
) -> dict[str, object]:
    return {
        "calls": counts.calls,
        "tracked": counts.tracked,
        "wasted": counts.wasted,
        "wasted_share": share(counts.wasted, counts.calls),
        "denied": counts.denied,
        "reminders": counts.reminders,
        "reminders_by_form": reminders_by_form(counts),
        "longest_run": counts.longest_run,
        "wasted_turns": wasted_turns,
        "wasted_tokens": wasted_tokens,
        "wasted_input_tokens": wasted_input_tokens,
    }


def json_session_line(session: SessionAudit, fmt: str) -> str:
    """Return the ``{"type": "session", ...}`` JSON line for one session read as ``fmt``.

    Read from the session's own fields: its ``Waste`` (maps of days and projects, its place in
    the rankings) would cost more to build than the line, for nothing the line shows."""
    counts = unpack_tally(session.counts)
    record: dict[str, object] = {
        "type": "session",
        "file": session.file,
        "format": fmt,
        "session": session.session,
        "project": session.project,
        **_counts_record(
            counts, session.wasted_turns, session.wasted_tokens, session.wasted_input_tokens
        ),
        "tools": {name: tool._asdict() for name, tool in sorted(counts.tools.items())},
        "runs": [_run_record(run) for run in session.worst],
    }
    return _dumps(record)


def _run_record(run: Run) -> dict[str, object]:
    return {**run._asdict(), "lines": list(run.lines)}


def json_totals_line(
    total: Waste, since: str | None = None, problems: Sequence[Diagnostic] = ()
) -> str:
    """Return the ``{"type": "totals", ...}`` JSON line closing the report of an audit of
    calls made on or after ``since`` (a ``YYYY-MM-DD`` day, ``null`` in the line when
    ``None``), listing the first of its diagnostics, ``problems``, in ``first_diagnostics``
    (``total.diagnostics`` counts them all)."""
    record: dict[str, object] = {"type": "totals", "since": since, **waste_to_json(total)}
    record["first_diagnostics"] = [_diagnostic_record(problem) for problem in problems]
    record.update(
        _counts_record(
            total.counts, total.wasted_turns, total.wasted_tokens, total.wasted_input_tokens
        )
    )
    return _dumps(record)


def _diagnostic_record(problem: Diagnostic) -> dict[str, object]:
    return {
        "file": problem.file,
        "line": problem.line,
        "message": problem.message,
        "severity": problem.severity,
    }


CSV_FIELDS = (
    "type",
    "file",
    "format",
    "project",
    "session",
    "files",
    "sessions",
    "calls",
    "tracked",
    "wasted",
    "denied",
    "reminders",
    *FORMS,
    "longest_run",
    "wasted_turns",
    "wasted_tokens",
    "wasted_input_tokens",
    "diagnostics",
)


def _csv_line(values: list[object]) -> str:
    # Escaped as the text output escapes them, not quoted: a line break or an escape sequence
    # in a file name or session id would otherwise reach the file raw, and a tool that reads a
    # line as a record (wc, grep, a terminal) would see two rows, or its colours changed.
    import csv  # noqa: PLC0415  # only the csv format needs it, and the audit's start pays

    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(
        printable(value) if isinstance(value, str) else value for value in values
    )
    return buffer.getvalue()[:-1]


def csv_header() -> str:
    """Return the CSV header line."""
    return _csv_line(list(CSV_FIELDS))


def _csv_counts(counts: Tally, files: int, sessions: int) -> list[object]:
    """The counting columns from ``calls`` to ``longest_run``, after ``files`` and ``sessions``."""
    forms = reminders_by_form(counts)
    return [
        files,
        sessions,
        counts.calls,
        counts.tracked,
        counts.wasted,
        counts.denied,
        counts.reminders,
        *(forms.get(form, 0) for form in FORMS),
        counts.longest_run,
    ]


def csv_session_row(session: SessionAudit, fmt: str) -> str:
    """Return the CSV row for one session read as ``fmt``."""
    head: list[object] = ["session", session.file, fmt, session.project, session.session]
    counts = _csv_counts(unpack_tally(session.counts), 0, 1)
    tokens = [session.wasted_tokens, session.wasted_input_tokens]
    return _csv_line([*head, *counts, session.wasted_turns, *tokens, 0])


def csv_totals_row(total: Waste) -> str:
    """Return the CSV row of the totals (empty file, format, project and session)."""
    counts = _csv_counts(total.counts, total.files, total.sessions)
    tail = [total.wasted_turns, total.wasted_tokens, total.wasted_input_tokens, total.diagnostics]
    return _csv_line(["totals", "", "", "", "", *counts, *tail])


def _fit(text: str, width: int) -> str:
    """``text`` cut on the right to ``width`` characters, marked with an ellipsis."""
    text = printable(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _fit_left(text: str, width: int) -> str:
    """``text`` cut on the left (paths keep their informative end)."""
    text = printable(text)
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


def _first_lines(total: Waste) -> Iterator[str]:
    """What was read: files, sessions, diagnostics and, when some did, how many files held no
    tool call (on the first line when it fits, else on a line of its own)."""
    first = (
        f"audited {total.files:,} files ({total.bytes / 1e6:,.1f} MB), "
        f"{total.sessions:,} sessions, {total.diagnostics:,} diagnostics"
    )
    if not total.held_no_call:
        yield first
        return
    held = f"{total.held_no_call:,} held no tool call"
    if len(first) + 2 + len(held) <= WIDTH:
        yield f"{first}, {held}"
    else:
        yield f"{first},"
        yield held


def _headline(total: Waste) -> Iterator[str]:
    counts = total.counts
    forms = reminders_by_form(counts)
    by_form = ", ".join(f"{form} {count:,}" for form, count in forms.items())
    yield from _first_lines(total)
    yield (
        f"calls {counts.calls:,}   tracked {counts.tracked:,}   "
        f"wasted {counts.wasted:,} ({share(counts.wasted, counts.calls):.1%})   "
        f"denied {counts.denied:,}"
    )
    yield f"reminders {counts.reminders:,} ({by_form})   longest run {counts.longest_run:,}"
    yield (
        f"tokens of the turns that made wasted calls: {total.wasted_tokens:,} output, "
        f"{total.wasted_input_tokens:,} input, over {total.wasted_turns:,} turns"
    )


FILES_SHOWN = 10
"""Paths of each kind of file the text summary names (held no tool call, not a transcript,
last written before ``since``); a count says the rest."""


def before_since(since: str | None) -> str:
    """How every report words a file that ``since`` left out."""
    return f"last written before {since or 'the --since day'} (--since)"


def _named(head: str, count: int, paths: tuple[str, ...]) -> Iterator[str]:
    """``head`` and the first ``FILES_SHOWN`` of ``paths``, then how many more of ``count``;
    nothing when ``count`` is 0."""
    if not count:
        return
    yield head
    shown = paths[:FILES_SHOWN]
    for path in shown:
        yield f"  {_fit_left(path, WIDTH - 2)}"
    if count > len(shown):
        yield f"  and {count - len(shown):,} more"


def _files_named(total: Waste, since: str | None) -> Iterator[str]:
    """The files counted apart, each kind under a line saying how many of how many, named as
    the JSON totals name them."""
    held, others, older = total.held_no_call, total.not_transcripts, total.written_before_since
    yield from _named(
        f"{total.files:,} files audited, {held:,} held no tool call:",
        held,
        total.held_no_call_files,
    )
    yield from _named(
        f"{total.found:,} files found, {others:,} not a transcript:",
        others,
        total.not_transcript_files,
    )
    yield from _named(
        f"{total.found:,} files found, {older:,} {before_since(since)}, left out:",
        older,
        total.written_before_since_files,
    )


def _tools_table(total: Waste, top: int) -> Iterator[str]:
    tools = sorted(total.counts.tools.items(), key=lambda item: (-item[1].wasted, item[0]))
    yield f"  {'tool':<38}{'calls':>12}{'wasted':>12}{'share':>8}{'reminders':>12}{'longest':>9}"
    for name, tool in tools[:top]:
        yield (
            f"  {_fit(name, 37):<38}{tool.calls:>12,}{tool.wasted:>12,}"
            f"{share(tool.wasted, tool.calls):>8.1%}{tool.reminders:>12,}{tool.longest_run:>9,}"
        )


def _sessions_table(total: Waste, top: int) -> Iterator[str]:
    yield f"  {'wasted':>8}{'calls':>10}  {'session':<36}  file"
    for item in total.worst_sessions[:top]:
        where = f"{_fit(item.session, 36):<36}  {_fit_left(item.file, 40)}"
        yield f"  {item.wasted:>8,}{item.calls:>10,}  {where}"


def _projects_table(total: Waste, top: int) -> Iterator[str]:
    projects = sorted(total.projects.items(), key=lambda item: (-item[1].wasted, item[0]))
    yield (
        f"  {'project':<34}{'sessions':>10}{'calls':>10}{'wasted':>10}"
        f"{'output tokens':>15}{'input tokens':>15}"
    )
    for name, project in projects[:top]:
        label = _fit_left(name or "(none)", 33)
        yield (
            f"  {label:<34}{project.sessions:>10,}{project.calls:>10,}{project.wasted:>10,}"
            f"{project.wasted_tokens:>15,}{project.wasted_input_tokens:>15,}"
        )


def _runs_table(total: Waste, top: int) -> Iterator[str]:
    for run in total.worst[:top]:
        line = run.lines[0] if run.lines else 0
        call = f"{run.tool} {run.arguments}"
        yield f"  ×{run.length:<6,} {_fit(call, 89)}"
        yield f"           {_fit_left(f'{run.file}:{line}', 52)}  session {_fit(run.session, 26)}"


def text_summary(total: Waste, top: int, since: str | None = None) -> Iterator[str]:
    """Yield the lines of the terminal summary of an audit of calls made on or after
    ``since``, each at most ``WIDTH`` characters."""
    yield from _headline(total)
    yield from _files_named(total, since)
    sections = (
        ("top tools by waste", _tools_table),
        ("top sessions by waste", _sessions_table),
        ("top projects by waste", _projects_table),
        ("longest runs", _runs_table),
    )
    for title, table in sections:
        yield ""
        yield title
        yield from table(total, top)
