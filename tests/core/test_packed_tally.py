"""The packed tally: ``count_packed`` over any split of a replay, unpacked, equals ``tally`` step
by step; a packed tally is invisible to the garbage collector; ``merge_all_tallies`` equals
folding ``merge_tallies``, and
``merge_packed`` equals it on packed tallies."""

from __future__ import annotations

import functools
import gc

from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

from repeat_guard import Event, GuardConfig, PromptSubmitted, ToolCallFinished
from repeat_guard.tally import (
    NO_COUNTS,
    PackedTally,
    Step,
    Tally,
    ToolTally,
    count_calls,
    count_packed,
    counted_call,
    merge_all_tallies,
    merge_packed,
    merge_tallies,
    unpack_tally,
)

from .test_tally_steps import CONFIGS, chunks, events, one_by_one, replayed

small = st.integers(min_value=0, max_value=20)
names = st.sampled_from(["a", "b", "c"])
tool_tallies = st.builds(ToolTally, small, small, small, small, small)
tallies = st.builds(
    Tally,
    small,
    small,
    small,
    small,
    small,
    small,
    st.dictionaries(st.sampled_from(["gentle", "detailed"]), small).map(pmap),
    st.dictionaries(names, tool_tallies).map(pmap),
)


def packed_in_chunks(steps: list[Step], cuts: list[int]) -> PackedTally:
    packed = NO_COUNTS
    for chunk in chunks(steps, cuts):
        packed = count_packed(packed, chunk)
    return packed


@given(
    st.lists(events, max_size=60),
    st.lists(st.integers(min_value=0), max_size=8),
    st.sampled_from(CONFIGS),
)
def test_packed_chunks_of_any_size_count_what_single_steps_count(
    script: list[Event], cuts: list[int], config: GuardConfig
) -> None:
    steps = replayed(script, config)
    assert unpack_tally(packed_in_chunks(steps, cuts)) == one_by_one(Tally(), steps)


def test_nothing_packed_is_the_empty_tally_and_steps_without_calls_change_nothing() -> None:
    assert unpack_tally(NO_COUNTS) == Tally()
    steps = replayed([ToolCallFinished("a", "grep", 1)], GuardConfig())
    packed = count_packed(NO_COUNTS, steps)
    assert count_packed(packed, []) is packed
    assert count_packed(packed, replayed([ToolCallFinished(None, "grep", 1)], GuardConfig())) is (
        packed
    )


def test_a_packed_tally_holds_rows_in_the_order_first_counted() -> None:
    grep, todo = ToolCallFinished("a", "grep", 1), ToolCallFinished("a", "todo", 1, denied=True)
    steps = replayed([grep, grep, todo, grep, todo], CONFIGS[2])
    packed = count_packed(count_packed(NO_COUNTS, steps[:2]), steps[2:])
    # todo is untracked, so grep's run goes on through it to 3 (a gentle reminder); the
    # second todo spends todo's budget of 2 (a budget reminder); both todo calls are denied.
    assert packed == (
        5,
        3,
        2,
        2,
        2,
        3,
        (("gentle", 1), ("budget", 1)),
        (("grep", 3, 3, 2, 1, 3), ("todo", 2, 0, 0, 1, 0)),
    )
    assert unpack_tally(packed).tools == pmap(
        {"grep": ToolTally(3, 3, 2, 1, 3), "todo": ToolTally(2, 0, 0, 1, 0)}
    )


def test_the_collector_stops_tracking_a_packed_tally() -> None:
    grep = ToolCallFinished("a", "grep", 1)
    packed = count_packed(NO_COUNTS, replayed([grep, grep, grep], GuardConfig()))
    # A collection stops tracking a tuple once what it holds is untracked: one collection for
    # each level of nesting (rows, the tuple of rows, the packed tally).
    for _ in range(3):
        gc.collect()
    assert not gc.is_tracked(packed)
    # A Tally, by contrast, is a named tuple holding persistent maps: always tracked.
    assert gc.is_tracked(unpack_tally(packed))


@given(st.lists(tallies, max_size=8))
def test_merging_all_at_once_equals_the_fold(items: list[Tally]) -> None:
    assert merge_all_tallies(items) == functools.reduce(merge_tallies, items, Tally())
    assert merge_all_tallies(iter(items)) == merge_all_tallies(reversed(items))


@given(st.lists(st.tuples(st.lists(events, max_size=20), st.sampled_from(CONFIGS)), max_size=6))
def test_merging_packed_tallies_equals_merging_them_unpacked(
    replays: list[tuple[list[Event], GuardConfig]],
) -> None:
    packs = [count_packed(NO_COUNTS, replayed(script, config)) for script, config in replays]
    merged = merge_packed(iter(packs))
    assert unpack_tally(merged) == merge_all_tallies(unpack_tally(packed) for packed in packs)
    assert unpack_tally(merge_packed(reversed(packs))) == unpack_tally(merged)
    # Packed again, it is a packed tally as count_packed builds them: exact tuples throughout.
    assert type(merged) is tuple
    assert all(type(row) is tuple for row in (*merged[6], *merged[7]))


def test_merged_packed_rows_keep_the_order_first_seen() -> None:
    grep, read = ToolCallFinished("a", "grep", 1), ToolCallFinished("a", "read", 1)
    first = count_packed(NO_COUNTS, replayed([grep, grep, grep], GuardConfig()))
    second = count_packed(NO_COUNTS, replayed([read, grep, grep, grep, grep], GuardConfig()))
    assert merge_packed([first, second]) == (
        8,
        8,
        5,
        0,
        2,
        4,
        (("gentle", 2),),
        (("grep", 7, 7, 5, 2, 4), ("read", 1, 1, 0, 0, 1)),
    )
    assert merge_packed([]) == NO_COUNTS


def test_a_call_is_counted_by_its_tool_run_denial_and_reminder_forms() -> None:
    grep = ToolCallFinished("a", "grep", 1, denied=True)
    steps = replayed([grep, grep], GuardConfig(thresholds=(2,)))
    (_, _, none), (_, _, gentle) = steps
    assert counted_call(grep, 1, none) == ("grep", 1, True, ())
    assert counted_call(grep, 2, gentle) == ("grep", 2, True, ("gentle",))
    assert counted_call(PromptSubmitted("a"), 0, ()) is None
    assert counted_call(ToolCallFinished(None, "grep", 1), 1, ()) is None


def test_calls_counted_many_times_count_as_that_many_steps() -> None:
    # Three untracked todo calls (run 0), a grep run of three with one reminder.
    todo, grep = ToolCallFinished("a", "todo", 1), ToolCallFinished("a", "grep", 1)
    config = CONFIGS[1]  # thresholds (2, 4), todo untracked
    steps = replayed([todo, grep, todo, grep, todo, grep], config)
    counted = {
        ("todo", 0, False, ()): 3,
        ("grep", 1, False, ()): 1,
        ("grep", 2, False, ("gentle",)): 1,
        ("grep", 3, False, ()): 1,
    }
    assert count_calls(NO_COUNTS, counted) == count_packed(NO_COUNTS, steps)
    assert count_calls(NO_COUNTS, counted)[:6] == (6, 3, 2, 0, 1, 3)
    assert count_calls(NO_COUNTS, {}) is NO_COUNTS
