"""Tally shapes, each with and without, in one run.

The audit's per-session fold: 200,000 steps of 100,000 interleaved sessions of two calls,
counted one step at a time as sessions take turns, kept as a ``PackedTally`` per session
(``count_packed``, totalled by ``merge_packed``) or as a ``Tally`` per session (``tally_steps``,
totalled by ``merge_all_tallies``). And adding 100,000 tallies up with ``TallySums``
(``merge_all_tallies``) or by folding ``merge_tallies``. Each pair in alternating rounds, with
the collector held off (as the audit holds it) and on. Printed: microseconds a step (or a
tally) and the ratio without/with.
"""

from __future__ import annotations

import functools
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable

from repeat_guard import GuardState, ToolCallFinished, reduce
from repeat_guard.tally import (
    NO_COUNTS,
    PackedTally,
    Step,
    Tally,
    count_packed,
    merge_all_tallies,
    merge_packed,
    merge_tallies,
    tally_steps,
    unpack_tally,
)

ROUNDS = 5
TOOLS = ("grep", "read", "bash", "edit")


def _steps(sessions: int) -> list[tuple[int, Step]]:
    """Two calls a session: each session's first in order, then the seconds at random."""
    rng = random.Random(7)
    states: dict[int, GuardState] = {}
    steps: list[tuple[int, Step]] = []
    for index in range(2 * sessions):
        session = rng.randrange(sessions) if index >= sessions else index
        state = states.get(session) or GuardState.initial()
        event = ToolCallFinished("main", rng.choice(TOOLS), {"p": rng.randrange(3)})
        state, reminders = reduce(state, event)
        states[session] = state
        steps.append((session, (state, event, reminders)))
    return steps


def _packed_fold(steps: list[tuple[int, Step]]) -> Tally:
    sessions: dict[int, PackedTally] = {}
    for session, step in steps:
        sessions[session] = count_packed(sessions.get(session, NO_COUNTS), (step,))
    return unpack_tally(merge_packed(sessions.values()))


def _tally_fold(steps: list[tuple[int, Step]]) -> Tally:
    sessions: dict[int, Tally] = {}
    for session, step in steps:
        sessions[session] = tally_steps(sessions.get(session, Tally()), (step,))
    return merge_all_tallies(sessions.values())


def _compare(
    label: str, items: int, with_: Callable[[], Tally], without: Callable[[], Tally]
) -> None:
    assert with_() == without()
    for collector in ("off", "on"):
        times: dict[str, list[float]] = {"with": [], "without": []}
        for round_ in range(ROUNDS):
            pair = [("with", with_), ("without", without)]
            for name, run in pair if round_ % 2 else reversed(pair):
                gc.collect()
                if collector == "off":
                    gc.disable()
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
                gc.enable()
        fast, slow = (statistics.median(times[name]) for name in ("with", "without"))
        print(
            f"  {label}, collector {collector}: {fast / items * 1e6:.2f} us with, "
            f"{slow / items * 1e6:.2f} us without, {slow / fast:.2f}x"
        )


def main(sessions: int = 100_000) -> None:
    """Run both comparisons and print them."""
    steps = _steps(sessions)
    tallies = [tally_steps(Tally(), (step,)) for _, step in steps[:sessions]]
    print(f"tallies: each shape with and without, {ROUNDS} alternating rounds")
    _compare(
        f"a PackedTally per session, {len(steps):,} steps",
        len(steps),
        functools.partial(_packed_fold, steps),
        functools.partial(_tally_fold, steps),
    )
    _compare(
        f"TallySums adding {len(tallies):,} tallies up",
        len(tallies),
        functools.partial(merge_all_tallies, tallies),
        lambda: functools.reduce(merge_tallies, tallies, Tally()),
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
