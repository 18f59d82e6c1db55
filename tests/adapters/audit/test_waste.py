"""The audit's counts: the merge is associative and commutative with ``Waste()`` as identity,
and the rankings keep the worst whatever the split."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyrsistent import pmap

from repeat_guard.tally import Tally, ToolTally, tally_to_json
from repeat_guard_audit import (
    DayTally,
    ProjectTally,
    Run,
    SessionWaste,
    Waste,
    merge_waste,
    waste_to_json,
    worst_runs,
    worst_sessions,
)

from ...core.test_packed_tally import names, small, tallies

KEEP = 3
runs = st.builds(
    Run,
    st.integers(min_value=2, max_value=6),
    names,
    names,
    names,
    names,
    names,
    st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=3).map(tuple),
)
sessions = st.builds(SessionWaste, small, small, names, names, names)


@st.composite
def wastes(draw: st.DrawFn) -> Waste:
    """A Waste as a merge produces it: rankings sorted and cut to KEEP, the paths of files that
    are not transcripts sorted (and counted at least once each)."""
    not_transcripts = tuple(sorted(set(draw(st.lists(names, max_size=3)))))
    held_no_call = tuple(sorted(set(draw(st.lists(names, max_size=3)))))
    before_since = tuple(sorted(set(draw(st.lists(names, max_size=3)))))
    return Waste(
        draw(tallies),
        draw(small),
        draw(small),
        draw(small),
        draw(small),
        draw(small),
        draw(small),
        draw(small),
        pmap(draw(st.dictionaries(names, st.builds(DayTally, small, small)))),
        pmap(
            draw(st.dictionaries(names, st.builds(ProjectTally, small, small, small, small, small)))
        ),
        worst_runs(draw(st.lists(runs, max_size=5)), KEEP),
        worst_sessions(draw(st.lists(sessions, max_size=5)), KEEP),
        len(not_transcripts) + draw(small),
        not_transcripts,
        len(held_no_call) + draw(small),
        held_no_call,
        len(before_since) + draw(small),
        before_since,
    )


@settings(suppress_health_check=[HealthCheck.too_slow])  # a loaded machine draws slowly
@given(wastes(), wastes(), wastes())
def test_merge_is_associative(a: Waste, b: Waste, c: Waste) -> None:
    left = merge_waste(merge_waste(a, b, KEEP), c, KEEP)
    right = merge_waste(a, merge_waste(b, c, KEEP), KEEP)
    assert left == right


@settings(suppress_health_check=[HealthCheck.too_slow])  # a loaded machine draws slowly
@given(wastes(), wastes())
def test_merge_is_commutative(a: Waste, b: Waste) -> None:
    assert merge_waste(a, b, KEEP) == merge_waste(b, a, KEEP)


@settings(suppress_health_check=[HealthCheck.too_slow])  # a loaded machine draws slowly
@given(wastes())
def test_the_empty_waste_is_the_identity(a: Waste) -> None:
    assert merge_waste(Waste(), a, KEEP) == a
    assert merge_waste(a, Waste(), KEEP) == a


@settings(suppress_health_check=[HealthCheck.too_slow])  # a loaded machine draws slowly
@given(st.lists(wastes(), max_size=6), st.randoms(use_true_random=False))
def test_any_order_and_grouping_gives_the_same_total(
    parts: list[Waste], rnd: random.Random
) -> None:
    def total(items: list[Waste]) -> Waste:
        merged = Waste()
        for item in items:
            merged = merge_waste(merged, item, KEEP)
        return merged

    shuffled = list(parts)
    rnd.shuffle(shuffled)
    half = len(shuffled) // 2
    grouped = merge_waste(total(shuffled[:half]), total(shuffled[half:]), KEEP)
    assert grouped == total(parts)


@given(st.lists(runs, max_size=12), st.lists(runs, max_size=12))
def test_the_worst_runs_of_a_split_are_the_worst_runs_of_the_whole(
    first: list[Run], second: list[Run]
) -> None:
    a = Waste(worst=worst_runs(first, KEEP))
    b = Waste(worst=worst_runs(second, KEEP))
    assert merge_waste(a, b, KEEP).worst == worst_runs(first + second, KEEP)


@given(st.lists(sessions, max_size=12), st.lists(sessions, max_size=12))
def test_the_worst_sessions_of_a_split_are_the_worst_sessions_of_the_whole(
    first: list[SessionWaste], second: list[SessionWaste]
) -> None:
    a = Waste(worst_sessions=worst_sessions(first, KEEP))
    b = Waste(worst_sessions=worst_sessions(second, KEEP))
    assert merge_waste(a, b, KEEP).worst_sessions == worst_sessions(first + second, KEEP)


def test_counts_add_up_and_maps_merge_pointwise() -> None:
    a = Waste(
        Tally(calls=4, wasted=2, reminders_by_form=pmap({"gentle": 1})),
        files=1,
        sessions=2,
        diagnostics=1,
        bytes=100,
        wasted_turns=2,
        wasted_tokens=30,
        wasted_input_tokens=700,
        days=pmap({"2026-12-01": DayTally(4, 2)}),
        projects=pmap({"p": ProjectTally(2, 4, 2, 30, 700)}),
    )
    b = Waste(
        Tally(calls=1, wasted=1, reminders_by_form=pmap({"gentle": 2})),
        files=2,
        days=pmap({"2026-12-01": DayTally(1, 1), "2026-12-02": DayTally(3, 0)}),
        wasted_input_tokens=9,
        projects=pmap({"p": ProjectTally(1, 1, 1, 5, 9), "q": ProjectTally(1, 0, 0, 0)}),
    )
    merged = merge_waste(a, b, KEEP)
    assert (merged.counts.calls, merged.counts.wasted) == (5, 3)
    assert merged.counts.reminders_by_form == pmap({"gentle": 3})
    assert (merged.files, merged.sessions, merged.diagnostics, merged.bytes) == (3, 2, 1, 100)
    assert (merged.wasted_turns, merged.wasted_tokens, merged.wasted_input_tokens) == (2, 30, 709)
    assert merged.days == pmap({"2026-12-01": DayTally(5, 3), "2026-12-02": DayTally(3, 0)})
    assert merged.projects == pmap(
        {"p": ProjectTally(3, 5, 3, 35, 709), "q": ProjectTally(1, 0, 0, 0, 0)}
    )


def test_rankings_put_the_worst_first_and_break_ties_by_place() -> None:
    short = Run(2, "grep", "x", "b.jsonl", "s", "a", (9,))
    long = Run(5, "grep", "x", "z.jsonl", "s", "a", (1, 2, 3, 4, 5))
    tie_late = Run(2, "grep", "x", "a.jsonl", "s", "a", (7,))
    tie_early = Run(2, "grep", "x", "a.jsonl", "s", "a", (3,))
    assert worst_runs([short, long, tie_late, tie_early], 3) == (long, tie_early, tie_late)
    loud = SessionWaste(5, 9, "f", "s2", "p")
    quiet = SessionWaste(1, 2, "f", "s1", "p")
    busy = SessionWaste(1, 7, "f", "s3", "p")
    assert worst_sessions([quiet, loud, busy], 5) == (loud, busy, quiet)
    assert worst_sessions([quiet, loud, busy], 0) == ()


def test_json_is_plain_and_sorted() -> None:
    waste = Waste(
        Tally(calls=2, wasted=1, tools=pmap({"grep": ToolTally(2, 2, 1, 0, 2)})),
        files=1,
        sessions=1,
        diagnostics=3,
        bytes=4,
        wasted_turns=5,
        wasted_tokens=6,
        wasted_input_tokens=7,
        days=pmap({"2026-12-02": DayTally(1, 1), "2026-12-01": DayTally(1, 0)}),
        projects=pmap({"p": ProjectTally(1, 2, 1, 0, 8)}),
        worst=(Run(2, "grep", '{"p":1}', "f", "s", "a", (1, 2)),),
        worst_sessions=(SessionWaste(1, 2, "f", "s", "p"),),
    )
    encoded = waste_to_json(waste)
    assert json.loads(json.dumps(encoded)) == encoded
    assert list(encoded["days"]) == ["2026-12-01", "2026-12-02"]  # type: ignore[call-overload]
    assert encoded["worst_runs"] == [
        {
            "length": 2,
            "tool": "grep",
            "arguments": '{"p":1}',
            "file": "f",
            "session": "s",
            "agent": "a",
            "lines": [1, 2],
        }
    ]
    assert encoded["worst_sessions"] == [
        {"wasted": 1, "calls": 2, "file": "f", "session": "s", "project": "p"}
    ]
    assert encoded["calls"] == 2
    assert {key: value for key, value in encoded.items() if key not in tally_to_json(Tally())} == {
        "files": 1,
        "sessions": 1,
        "diagnostics": 3,
        "bytes": 4,
        "wasted_turns": 5,
        "wasted_tokens": 6,
        "wasted_input_tokens": 7,
        "days": {
            "2026-12-01": {"calls": 1, "wasted": 0},
            "2026-12-02": {"calls": 1, "wasted": 1},
        },
        "projects": {
            "p": {
                "sessions": 1,
                "calls": 2,
                "wasted": 1,
                "wasted_tokens": 0,
                "wasted_input_tokens": 8,
            }
        },
        "worst_runs": encoded["worst_runs"],
        "worst_sessions": encoded["worst_sessions"],
        "not_transcripts": 0,
        "not_transcript_files": [],
        "held_no_call": 0,
        "held_no_call_files": [],
        "written_before_since": 0,
        "written_before_since_files": [],
        "files_found": 1,
    }
    assert encoded["tools"] == {
        "grep": {"calls": 2, "tracked": 2, "wasted": 1, "reminders": 0, "longest_run": 2}
    }


def test_a_run_without_lines_ranks_as_if_it_began_at_line_zero() -> None:
    bare = Run(2, "t", "x", "f", "s2", "a", ())
    later = Run(2, "t", "x", "f", "s1", "a", (1,))
    assert worst_runs([later, bare], 2) == (bare, later)
    earlier = Run(2, "t", "x", "f", "s3", "a", (0,))
    assert worst_runs([earlier, bare], 2) == (bare, earlier)
