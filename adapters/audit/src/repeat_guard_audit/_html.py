"""The audit as one self-contained HTML page: totals, every file found, waste per day and per tool,
the worst runs.

Nothing on the page comes from elsewhere: the style sheet is inline, the charts are inline SVG
drawn here, the runs expand with ``<details>``, and there is no script at all, so the page
opens the same offline, from a mail attachment or behind a strict content security policy
(which it declares). Every number a test may check carries a ``data-value`` attribute.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence
from typing import Literal

from ._render import before_since, clean, reminders_by_form, share
from ._waste import UNKNOWN_DAY, DayTally, Run, Waste

__all__ = ["html_page"]

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2rem auto;max-width:70rem;color:#222;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
.cards{display:flex;flex-wrap:wrap;gap:.75rem}
.card{border:1px solid #ddd;border-radius:6px;padding:.5rem .9rem;min-width:9rem}
.card .label{color:#666;font-size:.8rem}.card .value{font-size:1.3rem;font-weight:600}
table{border-collapse:collapse;width:100%}td,th{padding:.2rem .5rem;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}tr:nth-child(even){background:#f6f6f6}
details{border:1px solid #ddd;border-radius:6px;margin:.4rem 0;padding:.3rem .6rem}
summary{cursor:pointer}pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.4rem}
svg text{font:11px system-ui,sans-serif;fill:#444}.bar{fill:#c0392b}.muted{color:#777}
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _text(value: str) -> str:
    # Imported here: ``html`` loads its table of entities, which no other report needs.
    from html import escape  # noqa: PLC0415

    return escape(clean(value))


def _card(key: str, label: str, value: int, shown: str | None = None) -> str:
    shown = f"{value:,}" if shown is None else shown
    return (
        f'<div class="card"><div class="label">{label}</div>'
        f'<div class="value" id="total-{key}" data-value="{value}">{shown}</div></div>'
    )


def _cards(total: Waste, since: str | None) -> Iterator[str]:
    counts = total.counts
    yield '<div class="cards">'
    yield _card("files", "files", total.files)
    yield _card("sessions", "sessions", total.sessions)
    yield _card("calls", "tool calls", counts.calls)
    wasted_share = f"{counts.wasted:,} ({share(counts.wasted, counts.calls):.1%})"
    yield _card("wasted", "wasted calls", counts.wasted, wasted_share)
    yield _card("reminders", "reminders", counts.reminders)
    for form, count in reminders_by_form(counts).items():
        yield _card(f"reminders-{_text(form)}", f"{_text(form)} reminders", count)
    yield _card("longest_run", "longest run", counts.longest_run)
    yield _card("wasted_tokens", "output tokens on wasted turns", total.wasted_tokens)
    yield _card("wasted_input_tokens", "input tokens on wasted turns", total.wasted_input_tokens)
    yield _card("wasted_turns", "wasted turns", total.wasted_turns)
    yield _card("denied", "denied calls", counts.denied)
    yield _card("diagnostics", "diagnostics", total.diagnostics)
    yield _card("held_no_call", "files that held no tool call", total.held_no_call)
    yield _card("not_transcripts", "files not a transcript", total.not_transcripts)
    if _asked_since(total, since):
        label = f"files {_text(before_since(since))}"
        yield _card("written_before_since", label, total.written_before_since)
    yield "</div>"


def _asked_since(total: Waste, since: str | None) -> bool:
    """Whether the page accounts for files left out by ``since``: when it was given (a zero
    is then worth saying) or some were."""
    return since is not None or total.written_before_since > 0


def _file_list(key: str, what: str, count: int, named: Sequence[str]) -> Iterator[str]:
    """The ``count`` things of ``key``, collapsed under ``what`` they are and how many (worded
    so that no count of one reads as a plural): those ``named`` (the
    first files in path order, as the JSON names them; the first diagnostics), then how many
    more there are."""
    if not count:
        return
    items = "".join(f"<li><code>{_text(name)}</code></li>" for name in named)
    more = count - len(named)
    rest = f'<li class="muted">… and {more:,} more</li>' if more > 0 else ""
    yield (
        f'<details id="files-{key}" data-value="{count}"><summary>{what}</summary>'
        f"<ul>{items}{rest}</ul></details>"
    )


def _files(total: Waste, problems: Sequence[str], since: str | None) -> Iterator[str]:
    """Every file the audit found, accounted for as the JSON totals account for it, and the
    first ``problems`` (diagnostics) as the command printed them."""
    found = total.found
    older = total.written_before_since
    left_out = f"; {before_since(since)}, left out: {older:,}"
    yield "<h2>Files</h2>"
    yield (
        f'<p id="files-found" data-value="{found}">Files found: {found:,}; audited: '
        f"{total.files:,}, of which held no tool call: {total.held_no_call:,}; not a "
        f"transcript: {total.not_transcripts:,}"
        f"{_text(left_out) if _asked_since(total, since) else ''}. "
        f"Diagnostics: {total.diagnostics:,}.</p>"
    )
    held = (
        f"Held no tool call: {total.held_no_call:,} (read whole as a known format, no call "
        "and no diagnostic)"
    )
    yield from _file_list("held_no_call", held, total.held_no_call, total.held_no_call_files)
    others = (
        f"Not a transcript: {total.not_transcripts:,} (no reader recognises it, not a regular "
        "file, or gone before its turn)"
    )
    yield from _file_list(
        "not_transcripts", others, total.not_transcripts, total.not_transcript_files
    )
    wording = before_since(since)
    older_files = f"{wording[0].upper()}{wording[1:]}: {older:,} (found, not read)"
    yield from _file_list(
        "written_before_since", _text(older_files), older, total.written_before_since_files
    )
    said = (
        f"Diagnostics: {total.diagnostics:,} (files, lines or folders that could not be read, "
        "and why)"
    )
    yield from _file_list("diagnostics", said, total.diagnostics, problems)


# Bars the day chart draws at most: it groups calls by the finest of day, week, month or year
# that fits the span in this many bars (past four months, by week; past a little over two years,
# by month), so that no bar is a hairline; a span too long even for years shows its last years.
MAX_BARS = 120
Unit = Literal["day", "week", "month", "year"]
_UNITS: tuple[Unit, ...] = ("day", "week", "month", "year")


def _period(day: datetime.date, unit: Unit) -> datetime.date:
    """The first day of the ``unit`` holding ``day`` (a week starts on Monday)."""
    if unit == "day":
        return day
    if unit == "week":
        return day - datetime.timedelta(days=day.weekday())
    return day.replace(day=1) if unit == "month" else day.replace(month=1, day=1)


def _periods_between(first: datetime.date, last: datetime.date, unit: Unit) -> int:
    """How many ``unit`` periods there are from the one holding ``first`` to ``last``'s."""
    start, end = _period(first, unit), _period(last, unit)
    if unit in ("day", "week"):
        return (end - start).days // (1 if unit == "day" else 7) + 1
    months = (end.year - start.year) * 12 + end.month - start.month
    return (months if unit == "month" else end.year - start.year) + 1


def _before(start: datetime.date, unit: Unit) -> datetime.date:
    """The first day of the period before the one starting on ``start``."""
    if unit in ("day", "week"):
        return start - datetime.timedelta(days=1 if unit == "day" else 7)
    if unit == "year":
        return start.replace(year=start.year - 1)
    return (start - datetime.timedelta(days=1)).replace(day=1)


def _calendar(total: Waste) -> tuple[Unit, list[tuple[str, DayTally]]]:
    """The unit the chart groups by, and every period of it from the first dated call to the
    last, periods without calls included (the last ``MAX_BARS`` at most), each with its first
    day and its calls."""
    dated = {
        datetime.date.fromisoformat(day): item
        for day, item in total.days.items()
        if day != UNKNOWN_DAY
    }
    if not dated:
        return "day", []
    first, last = min(dated), max(dated)
    fitting = (unit for unit in _UNITS if _periods_between(first, last, unit) <= MAX_BARS)
    unit: Unit = next(fitting, "year")
    grouped: dict[datetime.date, DayTally] = {}
    for day, item in dated.items():
        start = _period(day, unit)
        calls, wasted = grouped.get(start, DayTally())
        grouped[start] = DayTally(calls + item.calls, wasted + item.wasted)
    starts = [_period(last, unit)]
    for _ in range(min(_periods_between(first, last, unit), MAX_BARS) - 1):
        starts.append(_before(starts[-1], unit))
    empty = DayTally()
    return unit, [(start.isoformat(), grouped.get(start, empty)) for start in reversed(starts)]


def _label(start: str, unit: Unit) -> str:
    return {"day": start, "week": f"week of {start}", "month": start[:7], "year": start[:4]}[unit]


def _day_chart(total: Waste) -> Iterator[str]:
    unit, periods = _calendar(total)
    yield f"<h2>Wasted calls per {unit}</h2>"
    peak = max((item.wasted for _, item in periods), default=0)
    if not periods:
        yield '<p class="muted">No call carried a date.</p>'
    elif not peak:
        yield '<p class="muted">No wasted call carried a date.</p>'
    else:
        width, height, gap = 900, 160, 2
        step = width / len(periods)
        yield (
            f'<svg id="chart-days" data-unit="{unit}" role="img" '
            f'aria-label="wasted calls per {unit}" viewBox="0 0 {width} {height + 30}" '
            'width="100%">'
        )
        for index, (start, item) in enumerate(periods):
            bar = height * item.wasted / peak
            yield (
                f'<rect class="bar" data-day="{start}" data-value="{item.wasted}" '
                f'x="{index * step:.1f}" y="{height - bar:.1f}" '
                f'width="{min(max(step - gap, 1), 48):.1f}" height="{bar:.1f}">'
                f"<title>{_label(start, unit)}: {item.wasted:,} wasted of {item.calls:,} calls"
                "</title></rect>"
            )
        yield f'<text x="0" y="{height + 20}">{_label(periods[0][0], unit)}</text>'
        yield (
            f'<text x="{width}" y="{height + 20}" text-anchor="end">'
            f"{_label(periods[-1][0], unit)}</text>"
        )
        yield f'<text x="{width}" y="12" text-anchor="end">peak {peak:,} wasted a {unit}</text>'
        yield "</svg>"
    unknown = total.days.get(UNKNOWN_DAY)
    if unknown is not None:
        yield (
            f'<p class="muted">Calls without a date: {unknown.calls:,}, of which '
            f'<span id="undated-wasted" data-value="{unknown.wasted}">{unknown.wasted:,}'
            "</span> wasted.</p>"
        )


def _tool_chart(total: Waste, top: int) -> Iterator[str]:
    tools = sorted(total.counts.tools.items(), key=lambda item: (-item[1].wasted, item[0]))[:top]
    yield "<h2>Wasted calls per tool</h2>"
    if not tools:
        yield '<p class="muted">No tool listed.</p>'
        return
    row, label_width, width = 22, 220, 900
    peak = max(tool.wasted for _, tool in tools) or 1
    yield (
        f'<svg id="chart-tools" role="img" aria-label="wasted calls per tool" '
        f'viewBox="0 0 {width} {row * len(tools)}" width="100%">'
    )
    for index, (name, tool) in enumerate(tools):
        y = index * row
        bar = (width - label_width - 120) * tool.wasted / peak
        yield (
            f'<text x="{label_width - 6}" y="{y + 15}" text-anchor="end">'
            f"{_text(name[:32])}</text>"
            f'<rect class="bar" data-tool="{_text(name)}" data-value="{tool.wasted}" '
            f'x="{label_width}" y="{y + 3}" width="{bar:.1f}" height="{row - 6}"></rect>'
            f'<text x="{label_width + bar + 6:.1f}" y="{y + 15}">{tool.wasted:,} of '
            f"{tool.calls:,}</text>"
        )
    yield "</svg>"


def _run_details(run: Run, rank: int) -> str:
    # The worst run starts open, so the page shows at once what a loop looks like.
    first = run.lines[0] if run.lines else 0
    call = _text(f"{run.tool} {run.arguments[:80]}{'…' if len(run.arguments) > 80 else ''}")
    calls = "".join(f"<li>line {line}: <code>{call}</code></li>" for line in run.lines)
    more = run.length - len(run.lines)
    rest = f'<li class="muted">… and {more:,} more</li>' if more > 0 else ""
    return (
        f'<details class="run" id="run-{rank}" data-value="{run.length}"'
        f"{' open' if rank == 1 else ''}>"
        f"<summary><strong>×{run.length:,}</strong> <code>{_text(run.tool)}</code> in "
        f"{_text(run.file)}:{first} (session {_text(run.session)}, agent "
        f"{_text(run.agent)})</summary>"
        f"<p>The repeated call, identical each time:</p><pre>{_text(run.tool)} "
        f"{_text(run.arguments)}</pre><ol>{calls}{rest}</ol></details>"
    )


def _runs(total: Waste, top: int) -> Iterator[str]:
    yield "<h2>Longest runs</h2>"
    runs = total.worst[:top]
    if not runs:
        yield '<p class="muted">No run listed.</p>'
    yield from (_run_details(run, rank) for rank, run in enumerate(runs, 1))


def _table(table_id: str, title: str, header: str, rows: list[str]) -> Iterator[str]:
    """A table under its heading, or a sentence instead of a table of headers only."""
    yield f"<h2>{title}</h2>"
    if not rows:
        yield f'<p class="muted">No {table_id} listed.</p>'
        return
    yield f'<table id="{table_id}"><tr>{header}</tr>'
    yield from rows
    yield "</table>"


def _sessions_table(total: Waste, top: int) -> Iterator[str]:
    header = '<th class="n">wasted</th><th class="n">calls</th><th>session</th><th>file</th>'
    rows = [
        f'<tr><td class="n">{item.wasted:,}</td><td class="n">{item.calls:,}</td>'
        f"<td>{_text(item.session)}</td><td>{_text(item.file)}</td></tr>"
        for item in total.worst_sessions[:top]
    ]
    return _table("sessions", "Sessions with the most waste", header, rows)


def _projects_table(total: Waste, top: int) -> Iterator[str]:
    projects = sorted(total.projects.items(), key=lambda item: (-item[1].wasted, item[0]))
    header = (
        '<th>project</th><th class="n">sessions</th><th class="n">calls</th>'
        '<th class="n">wasted</th><th class="n">output tokens</th><th class="n">input tokens</th>'
    )
    rows = [
        f'<tr><td>{_text(name) or "(none)"}</td><td class="n">{item.sessions:,}</td>'
        f'<td class="n">{item.calls:,}</td><td class="n">{item.wasted:,}</td>'
        f'<td class="n">{item.wasted_tokens:,}</td>'
        f'<td class="n">{item.wasted_input_tokens:,}</td></tr>'
        for name, item in projects[:top]
    ]
    return _table("projects", "Projects", header, rows)


def _waste(total: Waste, top: int) -> Iterator[str]:
    """Where the waste was; with none, one sentence saying so instead of empty charts."""
    if not total.counts.wasted:
        calls = total.counts.calls
        read = (
            f"none of the {calls:,} tool calls read repeated the one before it"
            if calls
            else "no tool call was read"
        )
        yield f'<p id="no-waste">No repeated calls: {read}, so nothing was wasted.</p>'
        return
    yield from _day_chart(total)
    yield from _tool_chart(total, top)
    yield from _runs(total, top)
    yield from _sessions_table(total, top)


def html_page(
    total: Waste,
    top: int,
    title: str = "repeat-guard audit",
    problems: Sequence[str] = (),
    since: str | None = None,
) -> str:
    """Return the page for ``total``, an audit of calls made on or after ``since``, listing
    ``top`` tools, sessions, projects and runs, and the first of its diagnostics,
    ``problems`` (``FILE:LINE: message`` each; the count of the rest is
    ``total.diagnostics`` less theirs)."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_text(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_text(title)}</h1>",
        "<p>Wasted calls are the repeats beyond the first of each run of identical tool calls;"
        " reminders are what the guard would have said.</p>",
        *_cards(total, since),
        *_files(total, problems, since),
        *_waste(total, top),
        *_projects_table(total, top),
        "</body></html>",
        "",
    ]
    return "\n".join(parts)
