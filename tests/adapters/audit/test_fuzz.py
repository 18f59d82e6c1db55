"""The audit's page fuzzed: any totals, dates of any span, nothing or everything wasted, give a
page that draws a bounded number of bars, never a table of headers only, never a peak of
nothing, and says so when no call was wasted; and files of any name are listed as they are
named, escaped. ``make test`` draws 300 cases, ``make fuzz`` a
tenth of ``FUZZ_TRANSCRIPTS`` (5,000)."""

from __future__ import annotations

import datetime
import os
import re

from hypothesis import event, given
from hypothesis import strategies as st
from pyrsistent import pmap

from repeat_guard.tally import Tally, ToolTally
from repeat_guard_audit import DayTally, ProjectTally, Run, SessionWaste, Waste, clean, html_page
from repeat_guard_audit._html import MAX_BARS

from ..transcripts.fuzzing import fuzz_settings
from .page import PageItems

EXAMPLES = int(os.environ.get("REPEAT_GUARD_FUZZ", "3000")) // 10

_COUNT = st.integers(0, 50)
_DAY = st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31)).map(str)
_DAYS = st.dictionaries(
    _DAY | st.just("unknown"),
    st.builds(DayTally, _COUNT, _COUNT),
    max_size=6,
)


@st.composite
def _totals(draw: st.DrawFn) -> Waste:
    wasted = draw(_COUNT)
    tools = draw(
        st.dictionaries(
            st.text(max_size=4),
            st.builds(ToolTally, _COUNT, _COUNT, _COUNT, _COUNT, _COUNT),
            max_size=3,
        )
    )
    run = Run(3, "Bash", "{}", "f", "s", "a", (1, 2, 3))
    return Waste(
        Tally(calls=draw(_COUNT) + wasted, wasted=wasted, tools=pmap(tools)),
        days=pmap(draw(_DAYS)),
        projects=pmap(
            draw(
                st.dictionaries(
                    st.text(max_size=4), st.builds(ProjectTally, _COUNT, _COUNT, _COUNT), max_size=2
                )
            )
        ),
        worst=draw(st.lists(st.just(run), max_size=2).map(tuple)),
        worst_sessions=draw(
            st.lists(st.just(SessionWaste(2, 3, "f", "s", "p")), max_size=2).map(tuple)
        ),
    )


@fuzz_settings(EXAMPLES)
@given(_totals(), st.integers(0, 3))
def test_any_totals_give_a_page_without_empty_charts_or_tables(total: Waste, top: int) -> None:
    page = html_page(total, top)
    assert page.count("data-day=") <= MAX_BARS
    assert not re.search(r"<table[^>]*><tr>.*?</tr>\n</table>", page)
    assert not re.search(r"peak 0 ", page)
    if total.counts.wasted:
        event("wasted")
        assert 'id="no-waste"' not in page
    else:
        assert "No repeated calls: " in page
        assert "<svg" not in page


_PATHS = st.lists(st.text(max_size=8), max_size=4).map(lambda paths: tuple(sorted(paths)))


@fuzz_settings(EXAMPLES)
@given(_PATHS, st.integers(0, 3), _PATHS, st.integers(0, 3), _PATHS, st.integers(0, 3))
def test_files_of_any_name_are_listed_as_named(
    held: tuple[str, ...],
    held_more: int,
    others: tuple[str, ...],
    others_more: int,
    older: tuple[str, ...],
    older_more: int,
) -> None:
    total = Waste(
        held_no_call=len(held) + held_more,
        held_no_call_files=held,
        not_transcripts=len(others) + others_more,
        not_transcript_files=others,
        written_before_since=len(older) + older_more,
        written_before_since_files=older,
    )
    page = html_page(total, 10, since="2026-12-01")
    page.encode("utf-8")
    items = PageItems()
    items.feed(page)
    tags = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "div"}
    assert set(items.tags) <= {*tags, "details", "summary", "ul", "li", "code"}
    for key, paths, more in (
        ("held_no_call", held, held_more),
        ("not_transcripts", others, others_more),
        ("written_before_since", older, older_more),
    ):
        listed = [clean(path) for path in paths] + ([f"… and {more} more"] if more else [])
        assert items.lists.get(f"files-{key}", []) == listed
