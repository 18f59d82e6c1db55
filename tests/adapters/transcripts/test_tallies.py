"""SessionTallies: each session's steps counted in bounded chunks, as ``tally`` counts them one
by one, however the sessions interleave."""

from __future__ import annotations

import gc
import weakref

from hypothesis import given
from hypothesis import strategies as st

from repeat_guard import GuardConfig, GuardState, PromptSubmitted, ToolCallFinished, reduce
from repeat_guard.tally import Tally, run_length, unpack_tally
from repeat_guard.tally import tally as tally_one
from repeat_guard_transcripts import CHUNK_STEPS, SessionTallies

CONFIG = GuardConfig(thresholds=(2, 5))


def feed(script: list[tuple[str, ToolCallFinished | PromptSubmitted]]) -> dict[str, Tally]:
    """Feed ``script`` to a ``SessionTallies`` and, beside it, to ``tally`` step by step;
    return the step-by-step tallies after checking that the two agree."""
    tallies = SessionTallies()
    states: dict[str, GuardState] = {}
    expected: dict[str, Tally] = {}
    for session, event in script:
        state, reminders = reduce(states.get(session, GuardState.initial(CONFIG)), event)
        states[session] = state
        tallies.add(session, event, run_length(state, event), reminders)
        expected[session] = tally_one(expected.get(session, Tally()), state, event, reminders)
    for session, counts in expected.items():
        assert unpack_tally(tallies.packed(session)) == counts, session
    return expected


steps = st.tuples(
    st.sampled_from(["s", "t"]),
    st.builds(
        ToolCallFinished,
        st.just("a"),
        st.sampled_from(["grep", "read"]),
        st.sampled_from([1, 2]),
        st.booleans(),
        st.sampled_from([None, "queued", "passed"]),
    )
    | st.builds(PromptSubmitted, st.just("a")),
)


@given(st.lists(steps, max_size=40))
def test_interleaved_sessions_are_counted_apart(
    script: list[tuple[str, ToolCallFinished | PromptSubmitted]],
) -> None:
    feed(script)


def test_a_long_session_is_counted_in_chunks_and_read_at_any_time() -> None:
    grep = ToolCallFinished("a", "grep", 1)
    counts = feed([("s", grep)] * (2 * CHUNK_STEPS + 3))
    assert (counts["s"].calls, counts["s"].wasted) == (2 * CHUNK_STEPS + 3, 2 * CHUNK_STEPS + 2)
    # Reading a tally counts what waits; steps added after it are counted on top.
    tallies = SessionTallies()
    tallies.add("s", grep, 1, ())
    assert tallies.packed("s")[0] == 1  # calls
    _, reminders = reduce(reduce(GuardState.initial(CONFIG), grep)[0], grep)
    tallies.add("s", grep, 2, reminders)
    assert unpack_tally(tallies.packed("s"))[:5] == (2, 2, 1, 0, 1)  # ..., reminders
    assert unpack_tally(tallies.packed("unseen")) == Tally()


def test_sessions_taking_turns_are_counted_apart_across_chunks() -> None:
    # Three sessions call in turn, more steps than two chunks hold.
    grep, read = ToolCallFinished("a", "grep", 1), ToolCallFinished("a", "read", 1)
    calls = 2 * CHUNK_STEPS + 5
    counts = feed([(f"s{n % 3}", grep if n % 6 < 3 else read) for n in range(calls)])
    assert sum(session.calls for session in counts.values()) == calls
    # Each session alternates grep and read, so none of its calls is wasted.
    assert [session.wasted for session in counts.values()] == [0, 0, 0]


class _Output:
    """A tool's result that a weak reference can follow."""


def test_no_call_waits_with_its_arguments_or_result() -> None:
    outputs = [_Output() for _ in range(3)]
    alive = [weakref.ref(output) for output in outputs]
    calls = [ToolCallFinished("a", "grep", n, result=output) for n, output in enumerate(outputs)]
    tallies = SessionTallies()
    state = GuardState.initial(CONFIG)
    for call in calls:
        state, reminders = reduce(state, call)
        tallies.add("s", call, run_length(state, call), reminders)
    del calls, call, outputs, state
    gc.collect()
    assert [output() is None for output in alive] == [True, True, True]
    assert tallies.packed("s")[:3] == (3, 3, 0)  # calls, tracked, wasted: other arguments


def test_calls_that_read_the_same_wait_as_one_count() -> None:
    # A run of one call waits as one entry per run length; a long run fills the chunk with
    # lengths, and every call is counted.
    grep = ToolCallFinished("a", "grep", 1)
    tallies = SessionTallies()
    for _ in range(3):
        tallies.add("s", grep, 1, ())
    assert unpack_tally(tallies.packed("s"))[:3] == (3, 3, 0)
    for run in range(1, CHUNK_STEPS + 2):
        tallies.add("t", grep, run, ())
    counts = unpack_tally(tallies.packed("t"))
    assert (counts.calls, counts.wasted, counts.longest_run) == (
        CHUNK_STEPS + 1,
        CHUNK_STEPS,
        CHUNK_STEPS + 1,
    )
