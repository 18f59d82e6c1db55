"""The tally in chunks: ``tally_steps`` over any split of a replay equals ``tally`` step by step,
and ``run_length`` says what ``tally`` counts a call as."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    reduce,
)
from repeat_guard.tally import (
    Step,
    Tally,
    ToolTally,
    merge_tallies,
    run_length,
    tally,
    tally_steps,
)

AGENTS = ["a", "b", None]
calls = st.builds(
    ToolCallFinished,
    st.sampled_from(AGENTS),
    st.sampled_from(["grep", "read", "todo"]),
    st.sampled_from([1, 2]),
    st.booleans(),
)
events: st.SearchStrategy[Event] = (
    calls
    | st.builds(PromptSubmitted, st.sampled_from(["a", "b"]))
    | st.builds(AgentDisposed, st.sampled_from(["a", "b"]))
)
# The default, one with an untracked tool, and one whose budget reminds on untracked calls.
CONFIGS = [
    GuardConfig(),
    GuardConfig(thresholds=(2, 4), exclude=("todo",)),
    GuardConfig(thresholds=(3,), exclude=("todo",), budgets=(("todo", 2),)),
]


def replayed(script: list[Event], config: GuardConfig) -> list[Step]:
    state, steps = GuardState.initial(config), []
    for event in script:
        state, reminders = reduce(state, event)
        steps.append((state, event, reminders))
    return steps


def one_by_one(counts: Tally, steps: list[Step]) -> Tally:
    for step in steps:
        counts = tally(counts, *step)
    return counts


def chunks(steps: list[Step], cuts: list[int]) -> Iterator[list[Step]]:
    """``steps`` cut at each of ``cuts`` (taken modulo the length), in order."""
    bounds = [0, *sorted({cut % (len(steps) + 1) for cut in cuts}), len(steps)]
    for start, end in itertools.pairwise(bounds):
        yield steps[start:end]


def in_chunks(counts: Tally, steps: list[Step], cuts: list[int]) -> Tally:
    for chunk in chunks(steps, cuts):
        counts = tally_steps(counts, chunk)
    return counts


@given(
    st.lists(events, max_size=60),
    st.lists(events, max_size=20),
    st.lists(st.integers(min_value=0), max_size=6),
    st.sampled_from(CONFIGS),
)
def test_chunks_of_any_size_count_what_single_steps_count(
    script: list[Event], earlier: list[Event], cuts: list[int], config: GuardConfig
) -> None:
    start = one_by_one(Tally(), replayed(earlier, config))
    steps = replayed(script, config)
    assert in_chunks(start, steps, cuts) == one_by_one(start, steps)
    assert tally_steps(start, steps) == merge_tallies(start, tally_steps(Tally(), steps))


def test_a_chunk_is_counted_like_the_steps_in_it() -> None:
    config = CONFIGS[2]
    grep = ToolCallFinished("a", "grep", 1)
    todo = ToolCallFinished("a", "todo", 1, denied=True)
    script: list[Event] = [grep, grep, todo, grep, todo, ToolCallFinished(None, "grep", 1)]
    counts = tally_steps(Tally(), replayed([*script, PromptSubmitted("a"), grep], config))
    assert counts == Tally(
        calls=6,
        tracked=4,
        wasted=2,
        denied=2,
        reminders=2,
        longest_run=3,
        reminders_by_form=pmap({"gentle": 1, "budget": 1}),
        tools=pmap({"grep": ToolTally(4, 4, 2, 1, 3), "todo": ToolTally(2, 0, 0, 1, 0)}),
    )


def test_reminders_add_up_within_a_chunk() -> None:
    # Agent a's grep reminds at 2 and 4 calls, agent b's at 2: three reminders for one tool
    # and two of one form, all in one chunk.
    first, second = ToolCallFinished("a", "grep", 1), ToolCallFinished("b", "grep", 2)
    steps = replayed([first, second, first, second, first, first], CONFIGS[1])
    counts = tally_steps(Tally(), steps)
    assert counts.reminders_by_form == pmap({"gentle": 2, "detailed": 1})
    assert counts.tools["grep"].reminders == 3
    assert counts == one_by_one(Tally(), steps)


def test_a_chunk_without_calls_changes_nothing() -> None:
    counts = tally_steps(Tally(), replayed([ToolCallFinished("a", "grep", 1)], GuardConfig()))
    steps = replayed([PromptSubmitted("a"), ToolCallFinished(None, "grep", 1)], GuardConfig())
    assert tally_steps(counts, steps) is counts
    assert tally_steps(counts, []) is counts


def test_the_run_length_is_the_chain_of_a_tracked_call_and_zero_otherwise() -> None:
    config = CONFIGS[1]
    grep, todo = ToolCallFinished("a", "grep", 1), ToolCallFinished("a", "todo", 1)
    lengths = [run_length(state, event) for state, event, _ in replayed([grep, grep, todo], config)]
    assert lengths == [1, 2, 0]
    state = GuardState.initial(config)
    assert run_length(state, grep) == 0  # no chain: the state is not the one reduce returned
    assert run_length(state, ToolCallFinished(None, "grep", 1)) == 0
    assert run_length(state, PromptSubmitted("a")) == 0
