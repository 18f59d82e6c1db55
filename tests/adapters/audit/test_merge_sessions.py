"""``SessionAudit``: a session's ``waste`` is what its packed counts and rows say (pinned, and
equal to the merge of it alone), and ``merge_sessions`` adds sessions up to what
``merge_wastes`` gives for their wastes; ``merge_audits`` adds sessions and wastes, mixed in
any order, up to the same."""

from __future__ import annotations

from random import Random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyrsistent import pmap

from repeat_guard.tally import NO_COUNTS, Tally, ToolTally, count_packed
from repeat_guard_audit import (
    DayTally,
    ProjectTally,
    Run,
    SessionAudit,
    SessionWaste,
    Waste,
    merge_audits,
    worst_runs,
)

from ...core.test_packed_tally import names, small
from ...core.test_tally_steps import CONFIGS, events, replayed
from .test_waste import KEEP, runs, wastes

packed_counts = st.builds(
    lambda script, config: count_packed(NO_COUNTS, replayed(script, config)),
    st.lists(events, max_size=12),
    st.sampled_from(CONFIGS),
)
session_audits = st.builds(
    SessionAudit,
    names,
    names,
    names,
    packed_counts,
    small,
    small,
    small,
    st.dictionaries(names, st.tuples(small, small)).map(
        lambda days: tuple((day, calls, wasted) for day, (calls, wasted) in days.items())
    ),
    st.lists(runs, max_size=5).map(lambda drawn: worst_runs(drawn, KEEP)),
    st.booleans(),
)


# Drawing replays is slow while other work loads the machine; the speed of drawing is not what
# these tests check.
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(session_audits)
def test_a_session_builds_the_waste_a_merge_of_it_alone_gives(session: SessionAudit) -> None:
    # Two ways to the same value: the session's own, built directly, and the merge's counters.
    assert session.waste == merge_audits((session,), max(len(session.worst), 1))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(session_audits, max_size=8), st.integers(min_value=0, max_value=4))
def test_merging_sessions_equals_merging_their_wastes(
    sessions: list[SessionAudit], keep: int
) -> None:
    expected = merge_audits((session.waste for session in sessions), keep)
    assert merge_audits(iter(sessions), keep) == expected
    assert merge_audits(reversed(sessions), keep) == expected


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(session_audits, wastes()), max_size=8),
    st.integers(min_value=0, max_value=4),
    st.randoms(use_true_random=False),
)
def test_merging_sessions_and_wastes_mixed_equals_merging_their_wastes(
    parts: list[SessionAudit | Waste], keep: int, rng: Random
) -> None:
    expected = merge_audits(
        (part.waste if isinstance(part, SessionAudit) else part for part in parts), keep
    )
    assert merge_audits(iter(parts), keep) == expected
    rng.shuffle(parts)
    assert merge_audits(parts, keep) == expected


def test_a_session_pinned() -> None:
    first = Run(3, "grep", '{"p":1}', "/home/dev/p/s.jsonl", "s1", "main", (7, 8, 9))
    second = first._replace(length=2, lines=(2, 3))
    session = SessionAudit(
        "/home/dev/p/s.jsonl",
        "s1",
        "/home/dev/p",
        # calls, tracked, wasted, denied, reminders, longest run, forms, tools
        (5, 5, 3, 0, 1, 4, (("gentle", 1),), (("grep", 5, 5, 3, 1, 4),)),
        wasted_turns=3,
        wasted_tokens=30,
        wasted_input_tokens=400,
        days=(("2026-12-01", 5, 3), ("2026-12-02", 0, 0)),
        worst=(first, second),
    )
    assert session.waste == Waste(
        Tally(
            calls=5,
            tracked=5,
            wasted=3,
            reminders=1,
            longest_run=4,
            reminders_by_form=pmap({"gentle": 1}),
            tools=pmap({"grep": ToolTally(5, 5, 3, 1, 4)}),
        ),
        sessions=1,
        wasted_turns=3,
        wasted_tokens=30,
        wasted_input_tokens=400,
        days=pmap({"2026-12-01": DayTally(5, 3), "2026-12-02": DayTally(0, 0)}),
        projects=pmap({"/home/dev/p": ProjectTally(1, 5, 3, 30, 400)}),
        worst=(first, second),
        worst_sessions=(SessionWaste(3, 5, "/home/dev/p/s.jsonl", "s1", "/home/dev/p"),),
    )
    # One wasted call is enough to take a place in the ranking of sessions;
    one = session._replace(counts=(5, 5, 1, 0, 0, 2, (), ()))
    assert one.waste.worst_sessions == (
        SessionWaste(1, 5, "/home/dev/p/s.jsonl", "s1", "/home/dev/p"),
    )
    # a session that keeps no ranking, or wasted nothing, takes none.
    assert session._replace(ranked=False).waste.worst_sessions == ()
    assert session._replace(counts=(5, 5, 0, 0, 0, 1, (), ())).waste.worst_sessions == ()
    assert merge_audits([], 3) == Waste()
