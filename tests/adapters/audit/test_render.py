"""The reports: JSON lines with the contract's keys, CSV rows, a 100-column text summary and a
self-contained HTML page, all safe for any text a transcript holds."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from pyrsistent import pmap

from repeat_guard import FORMS
from repeat_guard.tally import Tally, ToolTally
from repeat_guard_audit import (
    CSV_FIELDS,
    DayTally,
    ProjectTally,
    Run,
    SessionAudit,
    SessionWaste,
    Waste,
    clean,
    csv_header,
    csv_session_row,
    csv_totals_row,
    html_page,
    json_session_line,
    json_totals_line,
    text_summary,
)
from repeat_guard_audit._html import MAX_BARS
from repeat_guard_transcripts import Diagnostic

from .page import PageItems

LONG = "x" * 300
RUN = Run(7, "Bash", '{"command":"ls"}', "/home/dev/p/s.jsonl", "s1", "main", (3, 4, 5))
TOTAL = Waste(
    Tally(
        calls=40,
        tracked=38,
        wasted=12,
        denied=1,
        reminders=5,
        longest_run=7,
        reminders_by_form=pmap({"gentle": 3, "detailed": 2}),
        tools=pmap({"Bash": ToolTally(30, 30, 10, 4, 7), LONG: ToolTally(10, 8, 2, 1, 3)}),
    ),
    files=3,
    sessions=4,
    diagnostics=2,
    bytes=12_345_678,
    wasted_turns=9,
    wasted_tokens=123_456,
    wasted_input_tokens=7_654_321,
    days=pmap(
        {
            "2026-11-29": DayTally(10, 2),
            "2026-12-01": DayTally(20, 10),
            "unknown": DayTally(10, 0),
        }
    ),
    projects=pmap(
        {
            "/home/dev/p": ProjectTally(3, 30, 12, 123_456, 7_654_321),
            "": ProjectTally(1, 10, 0, 0),
        }
    ),
    worst=(RUN, Run(3, LONG, LONG, "/" + LONG, LONG, "a", (9, 10, 11))),
    worst_sessions=(SessionWaste(10, 30, "/home/dev/p/s.jsonl", "s1", "/home/dev/p"),),
)
SESSION = SessionAudit(
    "/home/dev/p/s.jsonl",
    "s1",
    "/home/dev/p",
    # calls, tracked, wasted, denied, reminders, longest run, forms, tools
    (5, 5, 3, 0, 1, 4, (("gentle", 1),), (("grep", 5, 5, 3, 1, 4),)),
    wasted_turns=3,
    wasted_tokens=30,
    wasted_input_tokens=4_000,
    days=(("2026-12-01", 5, 3),),
    worst=(RUN,),
)


def test_session_lines_carry_the_contract_keys() -> None:
    record = json.loads(json_session_line(SESSION, "claude-code"))
    contract = {"type", "file", "format", "session", "calls", "wasted", "reminders"}
    assert contract <= set(record)
    assert record["type"] == "session"
    assert (record["file"], record["format"], record["session"]) == (
        "/home/dev/p/s.jsonl",
        "claude-code",
        "s1",
    )
    assert (record["calls"], record["wasted"], record["reminders"]) == (5, 3, 1)
    assert record["reminders_by_form"] == {"gentle": 1, "detailed": 0}
    assert record["wasted_share"] == 0.6
    assert record["wasted_tokens"] == 30
    assert record["wasted_input_tokens"] == 4_000
    assert record["runs"][0]["lines"] == [3, 4, 5]


def test_the_totals_line_carries_the_contract_keys() -> None:
    record = json.loads(json_totals_line(TOTAL))
    assert record["type"] == "totals"
    assert {key: record[key] for key in ("files", "sessions", "calls", "wasted", "reminders")} == {
        "files": 3,
        "sessions": 4,
        "calls": 40,
        "wasted": 12,
        "reminders": 5,
    }
    assert record["reminders_by_form"] == {"gentle": 3, "detailed": 2}
    assert record["wasted_share"] == 0.3
    assert record["wasted_tokens"] == 123_456
    assert record["wasted_input_tokens"] == 7_654_321
    assert record["worst_runs"][0]["length"] == 7
    assert record["days"]["2026-12-01"] == {"calls": 20, "wasted": 10}


def test_an_empty_audit_reports_zeros() -> None:
    record = json.loads(json_totals_line(Waste()))
    assert (record["calls"], record["wasted_share"]) == (0, 0.0)
    assert record["reminders_by_form"] == {"gentle": 0, "detailed": 0}
    lines = list(text_summary(Waste(), 10))
    assert lines[0].startswith("audited 0 files")


def test_lone_surrogates_are_escaped_never_fatal() -> None:
    odd = SESSION._replace(session="bad\ud800id", file="f\udcff.jsonl")
    line = json_session_line(odd, "acp")
    line.encode("utf-8")
    assert json.loads(line)["session"] == "bad\ud800id"
    assert clean("bad\ud800id") == "bad\\ud800id"
    assert clean("fine") == "fine"
    row = csv_session_row(odd, "acp")
    row.encode("utf-8")
    assert "bad\\ud800id" in row


def test_csv_escapes_control_characters_so_each_record_is_one_line() -> None:
    # Escaped as the text output escapes them (not quoted): no raw line break or escape
    # sequence reaches the file, and a line-oriented tool sees one line per record.
    odd = SESSION._replace(file="a\nb\x1b[31m.jsonl", session="s\r\t1", project="p\x85")
    text = "\n".join([csv_header(), csv_session_row(odd, "acp"), csv_totals_row(TOTAL)])
    assert not [char for char in text if char != "\n" and not char.isprintable()]
    assert len(text.splitlines()) == 3
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 3
    assert rows[1][1:5] == ["a\\nb\\x1b[31m.jsonl", "acp", "p\\x85", "s\\r\\t1"]


def test_csv_has_one_header_then_rows_of_the_same_width() -> None:
    text = "\n".join([csv_header(), csv_session_row(SESSION, "claude-code"), csv_totals_row(TOTAL)])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == list(CSV_FIELDS)
    assert [len(row) for row in rows] == [len(CSV_FIELDS)] * 3
    session = dict(zip(rows[0], rows[1], strict=True))
    totals = dict(zip(rows[0], rows[2], strict=True))
    assert session == {
        "type": "session",
        "file": "/home/dev/p/s.jsonl",
        "format": "claude-code",
        "project": "/home/dev/p",
        "session": "s1",
        "files": "0",
        "sessions": "1",
        "calls": "5",
        "tracked": "5",
        "wasted": "3",
        "denied": "0",
        "reminders": "1",
        "gentle": "1",
        "detailed": "0",
        "cycle": "0",
        "budget": "0",
        "retry": "0",
        "longest_run": "4",
        "wasted_turns": "3",
        "wasted_tokens": "30",
        "wasted_input_tokens": "4000",
        "diagnostics": "0",
    }
    assert totals == {
        **dict.fromkeys(("file", "format", "project", "session"), ""),
        "type": "totals",
        "files": "3",
        "sessions": "4",
        "calls": "40",
        "tracked": "38",
        "wasted": "12",
        "denied": "1",
        "reminders": "5",
        "gentle": "3",
        "detailed": "2",
        "cycle": "0",
        "budget": "0",
        "retry": "0",
        "longest_run": "7",
        "wasted_turns": "9",
        "wasted_tokens": "123456",
        "wasted_input_tokens": "7654321",
        "diagnostics": "2",
    }


def test_csv_has_a_column_for_every_form_the_core_defines() -> None:
    forms = pmap({"gentle": 1, "cycle": 2, "budget": 3})
    total = Waste(Tally(calls=9, reminders=6, reminders_by_form=forms))
    session = SESSION._replace(
        counts=(9, 9, 5, 0, 6, 3, tuple(sorted(forms.items())), (("grep", 9, 9, 5, 6, 3),))
    )
    rows = list(csv.reader(io.StringIO(f"{csv_header()}\n{csv_totals_row(total)}")))
    rows.append(next(csv.reader([csv_session_row(session, "codex")])))
    assert set(FORMS) <= set(rows[0])
    for row in rows[1:]:
        by_form = {form: row[rows[0].index(form)] for form in FORMS}
        assert by_form == {
            "gentle": "1",
            "detailed": "0",
            "cycle": "2",
            "budget": "3",
            "retry": "0",
        }
    # The JSON names the same counts.
    record = json.loads(json_totals_line(total))
    assert record["reminders_by_form"] == {"gentle": 1, "detailed": 0, "budget": 3, "cycle": 2}


def test_the_text_summary_fits_100_columns_and_names_the_worst() -> None:
    lines = list(text_summary(TOTAL, 10))
    assert max(len(line) for line in lines) <= 100
    text = "\n".join(lines)
    assert "audited 3 files (12.3 MB), 4 sessions, 2 diagnostics" in text
    assert "wasted 12 (30.0%)" in text
    assert "reminders 5 (gentle 3, detailed 2)   longest run 7" in text
    assert (
        "tokens of the turns that made wasted calls: 123,456 output, 7,654,321 input, over 9 turns"
    ) in text
    # The projects table's last two columns.
    assert "    wasted  output tokens   input tokens" in text
    assert "        123,456      7,654,321" in text
    assert '×7      Bash {"command":"ls"}' in text
    assert "/home/dev/p/s.jsonl:3  session s1" in text
    assert "(none)" in text


def test_the_sessions_table_lines_up_its_file_column() -> None:
    sessions = tuple(
        SessionWaste(9 - n, 20, f"/f{n}.jsonl", name, "/home/dev/p")
        for n, name in enumerate(("s1", "0192f3a4-5b6c-7d8e-9f00-112233445566", LONG))
    )
    lines = list(text_summary(Waste(worst_sessions=sessions), 10))
    header, *rows = lines[lines.index("top sessions by waste") + 1 :][:4]
    assert [row.index(f"/f{n}.jsonl") for n, row in enumerate(rows)] == [header.index("file")] * 3
    assert rows[2].count("x") == 35  # the long session cut to its column, with an ellipsis
    assert max(len(line) for line in lines) <= 100


def test_the_text_summary_lists_at_most_top_rows() -> None:
    lines = list(text_summary(TOTAL, 1))
    assert not any(LONG[:30] in line for line in lines)


class _Page(PageItems):
    """Collects what a page would load and the numbers it shows, and its lists."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self.loads: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.loads.extend(
            value for key, value in attrs if key in ("src", "href") and value is not None
        )
        if "id" in found and "data-value" in found:
            self.values[str(found["id"])] = str(found["data-value"])
        super().handle_starttag(tag, attrs)


def test_the_page_is_self_contained_and_shows_the_totals() -> None:
    page = _Page()
    page.feed(html_page(TOTAL, 10))
    assert page.loads == []
    assert "script" not in page.tags
    assert "link" not in page.tags
    assert page.values["total-calls"] == "40"
    assert page.values["total-wasted"] == "12"
    assert page.values["total-reminders-gentle"] == "3"
    assert page.values["total-wasted_tokens"] == "123456"
    assert page.values["total-wasted_input_tokens"] == "7654321"
    assert '<div class="label">output tokens on wasted turns</div>' in html_page(TOTAL, 10)
    assert '<th class="n">output tokens</th>' in html_page(TOTAL, 10)
    assert '<div class="label">input tokens on wasted turns</div>' in html_page(TOTAL, 10)
    assert '<td class="n">123,456</td><td class="n">7,654,321</td>' in html_page(TOTAL, 10)
    assert page.values["run-1"] == "7"
    assert page.values["undated-wasted"] == "0"


def test_the_day_chart_fills_the_days_between() -> None:
    page = html_page(TOTAL, 10)
    for day, wasted in (("2026-11-29", 2), ("2026-11-30", 0), ("2026-12-01", 10)):
        assert f'data-day="{day}" data-value="{wasted}"' in page


@pytest.mark.parametrize(
    ("first", "unit", "bars", "label"),
    [
        ("2026-08-04", "day", 120, "2026-08-04"),  # 120 days: still one bar a day
        ("2026-08-03", "week", 18, "week of 2026-08-03"),  # 121 days: a bar a week
        ("2024-12-01", "week", 106, "week of 2024-11-25"),  # two years: weeks, not hairlines
        ("2023-12-01", "month", 37, "2023-12"),
        ("2000-01-01", "year", 27, "2000"),
        ("1800-06-01", "year", 120, "1907"),  # too long even for years: the last 120
    ],
)
def test_the_day_chart_groups_a_long_span_into_at_most_max_bars(
    first: str, unit: str, bars: int, label: str
) -> None:
    days = pmap({first: DayTally(3, 1), "2026-12-01": DayTally(5, 2), "unknown": DayTally(1, 1)})
    page = html_page(Waste(Tally(calls=9, wasted=4), days=days), 10)
    assert f"<h2>Wasted calls per {unit}</h2>" in page
    assert f'data-unit="{unit}"' in page
    assert page.count("data-day=") == bars <= MAX_BARS
    assert f'<text x="0" y="180">{label}</text>' in page
    values = [int(value) for value in re.findall(r'data-day="[^"]+" data-value="(\d+)"', page)]
    assert values[-1] == 2
    assert sum(values) == (3 if bars < 120 or unit == "day" else 2)  # a period cut off: not shown


def test_a_week_bar_adds_up_its_days_and_starts_on_monday() -> None:
    # 2026-11-30 is a Monday; the span (about five months) is drawn by week.
    days = pmap(
        {
            "2026-07-01": DayTally(1, 1),
            "2026-11-30": DayTally(4, 1),
            "2026-12-03": DayTally(6, 2),
        }
    )
    page = html_page(Waste(Tally(calls=11, wasted=4), days=days), 10)
    assert 'data-day="2026-11-30" data-value="3"' in page
    assert "<title>week of 2026-11-30: 3 wasted of 10 calls</title>" in page
    assert 'data-day="2026-06-29" data-value="1"' in page


def test_an_empty_page_says_so() -> None:
    page = html_page(Waste(), 10)
    assert "No repeated calls: no tool call was read, so nothing was wasted." in page
    assert "<table" not in page
    assert "<svg" not in page


def test_a_page_with_nothing_wasted_says_no_repeated_calls_and_draws_no_empty_chart() -> None:
    calm = Waste(
        Tally(calls=12, tracked=12, tools=pmap({"Bash": ToolTally(12, 12, 0, 0, 1)})),
        files=1,
        sessions=1,
        days=pmap({"2026-12-01": DayTally(12, 0)}),
        projects=pmap({"/p": ProjectTally(1, 12, 0, 0, 0)}),
    )
    page = html_page(calm, 10)
    assert (
        '<p id="no-waste">No repeated calls: none of the 12 tool calls read repeated the one '
        "before it, so nothing was wasted.</p>"
    ) in page
    assert "peak" not in page
    assert "<svg" not in page
    assert "Longest runs" not in page
    assert '<table id="projects">' in page  # a project with calls is still a row
    assert "<table" not in html_page(calm._replace(projects=pmap()), 10)


def test_waste_without_a_date_or_rows_says_so_instead_of_empty_charts_and_tables() -> None:
    days = pmap({"2026-12-01": DayTally(1, 0), "unknown": DayTally(3, 2)})
    undated = Waste(Tally(calls=4, wasted=2), days=days)
    page = html_page(undated, 10)
    assert "No wasted call carried a date." in page
    assert "peak" not in page
    for what in ("tool", "run", "sessions", "projects"):
        assert f"No {what} listed." in page
    assert "<table" not in page
    assert "No call carried a date." in html_page(undated._replace(days=pmap()), 10)


def test_the_page_escapes_what_transcripts_hold() -> None:
    hostile = Run(2, "<script>x</script>", "\ud800", "a&b", "s", "a", (1, 2))
    tools = pmap({"<b>": ToolTally(2, 2, 1, 0, 2)})
    page = html_page(Waste(Tally(calls=2, wasted=1, tools=tools), worst=(hostile,)), 10)
    page.encode("utf-8")
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert "a&amp;b" in page
    assert "\\ud800" in page


def test_files_that_are_not_transcripts_are_counted_and_named() -> None:
    paths = tuple(f"/home/dev/p/notes-{n:02}.txt" for n in range(12))
    total = Waste(files=3, not_transcripts=14, not_transcript_files=paths)
    lines = list(text_summary(total, 10))
    start = lines.index("17 files found, 14 not a transcript:")
    assert lines[start + 1 : start + 12] == [
        *(f"  /home/dev/p/notes-{n:02}.txt" for n in range(10)),
        "  and 4 more",
    ]
    record = json.loads(json_totals_line(total))
    assert (record["not_transcripts"], record["not_transcript_files"]) == (14, list(paths))
    # None found: no line about them, and the JSON says zero.
    assert not any("not a transcript" in line for line in text_summary(Waste(files=3), 10))
    assert json.loads(json_totals_line(Waste()))["not_transcript_files"] == []


def test_files_that_held_no_call_are_counted_on_the_first_line_and_named_in_json() -> None:
    paths = ("/home/dev/p/chat-1.jsonl", "/home/dev/p/chat-2.jsonl")
    total = Waste(files=3, sessions=3, held_no_call=2, held_no_call_files=paths)
    lines = list(text_summary(total, 10))
    assert lines[0] == "audited 3 files (0.0 MB), 3 sessions, 0 diagnostics, 2 held no tool call"
    assert lines[1].startswith("calls 0 ")
    # And named, as the files that are not transcripts are.
    start = lines.index("3 files audited, 2 held no tool call:")
    assert lines[start + 1 : start + 3] == [f"  {path}" for path in paths]
    assert lines[start + 3] == ""
    record = json.loads(json_totals_line(total))
    assert (record["held_no_call"], record["held_no_call_files"]) == (2, list(paths))
    page = _Page()
    page.feed(html_page(total, 10))
    assert page.values["total-held_no_call"] == "2"
    # None: the first line as before, no list, and the JSON and the page say zero.
    assert next(text_summary(Waste(files=3), 10)).endswith(", 0 diagnostics")
    assert not any("held no tool call" in line for line in text_summary(Waste(files=3), 10))
    assert json.loads(json_totals_line(Waste()))["held_no_call_files"] == []
    page.feed(html_page(Waste(files=3), 10))
    assert page.values["total-held_no_call"] == "0"


def test_a_count_of_files_that_held_no_call_too_long_for_the_first_line_has_its_own() -> None:
    big = 123_456_789
    total = Waste(files=big, sessions=big, diagnostics=big, bytes=big * 10**6, held_no_call=big)
    lines = list(text_summary(total, 10))
    assert lines[:2] == [
        "audited 123,456,789 files (123,456,789.0 MB), 123,456,789 sessions, "
        "123,456,789 diagnostics,",
        "123,456,789 held no tool call",
    ]
    assert max(len(line) for line in lines) <= 100
    # Counted past what the totals name: the count alone, as "and N more".
    assert lines[lines.index("123,456,789 files audited, 123,456,789 held no tool call:") + 1] == (
        "  and 123,456,789 more"
    )


def test_the_page_accounts_for_every_file_as_the_json_totals_do() -> None:
    held = tuple(f"/home/dev/p/chat-{n:03}.jsonl" for n in range(100))
    hostile = ("/p/<script>alert(1)</script>.txt", '/p/a&b"c.txt', "/p/\ud800.txt")
    total = Waste(
        files=130,
        diagnostics=2,
        held_no_call=105,
        held_no_call_files=held,
        not_transcripts=3,
        not_transcript_files=hostile,
    )
    text = html_page(total, 10, problems=["/p/<x>.jsonl:3: invalid JSON"])
    text.encode("utf-8")
    assert "<script>" not in text
    assert "<x>" not in text
    page = _Page()
    page.feed(text)
    record = json.loads(json_totals_line(total))
    # The diagnostics given, as the command printed them, then how many more were counted.
    assert page.values["total-diagnostics"] == page.values["files-diagnostics"] == "2"
    assert page.lists["files-diagnostics"] == ["/p/<x>.jsonl:3: invalid JSON", "… and 1 more"]
    assert page.values["files-found"] == "133"
    assert page.values["total-held_no_call"] == page.values["files-held_no_call"] == "105"
    assert page.values["total-not_transcripts"] == page.values["files-not_transcripts"] == "3"
    # Named as the JSON names them (its first 100, in path order), then how many more.
    assert page.lists["files-held_no_call"] == [*record["held_no_call_files"], "… and 5 more"]
    assert page.lists["files-not_transcripts"] == [clean(path) for path in hostile]
    assert record["not_transcript_files"] == list(hostile)
    assert (
        "Files found: 133; audited: 130, of which held no tool call: 105; not a transcript: 3. "
        "Diagnostics: 2."
    ) in text
    assert "<summary>Not a transcript: 3 (no reader recognises it," in text
    assert "<details" not in text.split("<h2>Files</h2>")[0]


def test_a_page_without_such_files_says_zero_and_lists_none() -> None:
    text = html_page(Waste(files=3, sessions=3), 10)
    assert (
        "Files found: 3; audited: 3, of which held no tool call: 0; not a transcript: 0. "
        "Diagnostics: 0."
    ) in text
    assert "<details" not in text
    page = _Page()
    page.feed(text)
    assert page.values["total-not_transcripts"] == "0"
    # Counted past what the totals name: the count alone, as "and N more".
    page.feed(html_page(Waste(not_transcripts=2), 10))
    assert page.lists["files-not_transcripts"] == ["… and 2 more"]


def test_files_written_before_since_are_counted_and_named_in_every_report() -> None:
    paths = tuple(f"/home/dev/p/old-{n:02}.jsonl" for n in range(11))
    total = Waste(files=2, written_before_since=12, written_before_since_files=paths)
    lines = list(text_summary(total, 10, since="2030-01-01"))
    start = lines.index("14 files found, 12 last written before 2030-01-01 (--since), left out:")
    assert lines[start + 1 : start + 12] == [
        *(f"  /home/dev/p/old-{n:02}.jsonl" for n in range(10)),
        "  and 2 more",
    ]
    record = json.loads(json_totals_line(total, since="2030-01-01"))
    assert record["since"] == "2030-01-01"
    assert (record["written_before_since"], record["written_before_since_files"]) == (
        12,
        list(paths),
    )
    assert record["files_found"] == 14
    text = html_page(total, 10, since="2030-01-01")
    assert (
        "Files found: 14; audited: 2, of which held no tool call: 0; not a transcript: 0; last "
        "written before 2030-01-01 (--since), left out: 12. Diagnostics: 0."
    ) in text
    assert "<summary>Last written before 2030-01-01 (--since): 12 (found, not read)" in text
    page = _Page()
    page.feed(text)
    assert page.values["files-found"] == "14"
    assert page.values["total-written_before_since"] == page.values["files-written_before_since"]
    assert page.values["total-written_before_since"] == "12"
    assert page.lists["files-written_before_since"] == [*paths, "… and 1 more"]


def test_since_asked_and_no_file_left_out_says_zero_and_lists_none() -> None:
    total = Waste(files=2)
    assert not any("--since" in line for line in text_summary(total, 10, since="2026-01-01"))
    record = json.loads(json_totals_line(total, since="2026-01-01"))
    assert (record["written_before_since"], record["written_before_since_files"]) == (0, [])
    text = html_page(total, 10, since="2026-01-01")
    assert "last written before 2026-01-01 (--since), left out: 0. " in text
    assert "<details" not in text
    page = _Page()
    page.feed(text)
    assert page.values["total-written_before_since"] == "0"
    # Without --since, the page does not speak of it at all and the JSON says null.
    assert "--since" not in html_page(total, 10)
    assert json.loads(json_totals_line(total))["since"] is None
    # Counted without the day (a caller that did not pass it): still said.
    assert "last written before the --since day (--since), left out: 1" in html_page(
        Waste(written_before_since=1), 10
    )


def test_the_json_totals_list_the_diagnostics_given_and_count_them_all() -> None:
    problems = [Diagnostic("/p/a.jsonl", 3, "invalid JSON"), Diagnostic("/p/\ud800.jsonl", 0, "x")]
    record = json.loads(json_totals_line(Waste(files=2, diagnostics=7), problems=problems))
    assert record["diagnostics"] == 7
    assert record["first_diagnostics"] == [
        {"file": "/p/a.jsonl", "line": 3, "message": "invalid JSON", "severity": "error"},
        {"file": "/p/\ud800.jsonl", "line": 0, "message": "x", "severity": "error"},
    ]
    assert json.loads(json_totals_line(Waste(diagnostics=7)))["first_diagnostics"] == []
