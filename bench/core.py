"""Core benchmark: the reducer against plain mutable-dict baselines, scaling, each policy's cost.

Every figure is a ratio measured in one run: the sides being compared run in alternating rounds
and each side's time is the median of its rounds, so a noisy machine moves both sides together.
Each side builds its own inputs inside the timed loop: the argument dict of every call (a fresh
dict, so nothing can be cached by identity), and for the reducer the ``ToolCallFinished`` event
too; a plain-dict baseline needs no event object and does not pay for one.

The stream: 4 agents whose calls interleave at random; 30% of calls repeat the agent's previous
call, half of those with the argument keys in another order; 2% of calls carry a 4 KB string.
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from functools import partial

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    GuardState,
    ToolCallFinished,
    admit,
    canonical_arguments,
    reduce,
)

CALLS = 100_000
AGENTS = 4
ROUNDS = 7

# One planned call: agent, tool, the argument (key, value) pairs in the order the dict is built,
# and the result the tool returns (only the progress policy looks at it).
Planned = tuple[str, str, tuple[tuple[str, object], ...], object]


def planned_stream(calls: int = CALLS, agents: int = AGENTS, seed: int = 7) -> list[Planned]:
    """``calls`` calls of ``agents`` agents interleaving at random (see the module docstring)."""
    rng = random.Random(seed)
    big = "x" * 4096
    last: dict[str, Planned] = {}
    plan: list[Planned] = []
    for n in range(calls):
        agent = f"agent-{rng.randrange(agents)}"
        previous = last.get(agent)
        if previous is not None and rng.random() < 0.30:
            _, tool, pairs, _ = previous
            if rng.random() < 0.5:
                pairs = tuple(reversed(pairs))
        else:
            tool = rng.choice(["grep", "read", "edit"])
            pairs = (("path", f"src/m{n % 97}.py"), ("line", n % 13))
            if rng.random() < 0.02:
                pairs = (*pairs, ("body", big))
        planned = (agent, tool, pairs, f"out-{n % 2}" if n % 3 == 0 else None)
        last[agent] = planned
        plan.append(planned)
    return plan


def run_reducer(plan: Sequence[Planned], config: GuardConfig | None = None) -> int:
    """The reducer over ``plan``: the number of reminders it produced."""
    state = GuardState.initial(config)
    fired = 0
    for agent, tool, pairs, _result in plan:
        state, reminders = reduce(state, ToolCallFinished(agent, tool, dict(pairs)))
        fired += len(reminders)
    return fired


def run_dict(
    plan: Sequence[Planned],
    canonical: Callable[[object], str],
    chains: dict[str, tuple[str, str, int]] | None = None,
) -> int:
    """A plain mutable dict of (tool, text, count) per agent, with the default thresholds,
    starting from ``chains`` (empty if omitted).

    Counts the reminders the reducer would produce (it builds none, and tracks every tool: the
    stream holds no untracked one).
    """
    thresholds = GuardConfig().thresholds
    chains = {} if chains is None else chains
    fired = 0
    for agent, tool, pairs, _result in plan:
        text = canonical(dict(pairs))
        previous = chains.get(agent)
        if previous is not None and previous[0] == tool and previous[1] == text:
            count = previous[2] + 1
        else:
            count = 1
        chains[agent] = (tool, text, count)
        if count in thresholds:
            fired += 1
    return fired


def run_dict_on_events(plan: Sequence[Planned], canonical: Callable[[object], str]) -> int:
    """``run_dict``, fed the reducer's input: a ``ToolCallFinished`` built per call.

    Not a target's baseline (those take the planned calls as they are); printed beside them to
    show how much of the reducer's cost is building the event a harness builds anyway.
    """
    thresholds = GuardConfig().thresholds
    chains: dict[str, tuple[str, str, int]] = {}
    fired = 0
    for agent, tool, pairs, _result in plan:
        event = ToolCallFinished(agent, tool, dict(pairs))
        text = canonical(event.arguments)
        previous = chains.get(agent)
        if previous is not None and previous[0] == event.tool and previous[1] == text:
            count = previous[2] + 1
        else:
            count = 1
        chains[agent] = (event.tool, text, count)
        if count in thresholds:
            fired += 1
    return fired


json_sorted: Callable[[object], str] = partial(json.dumps, sort_keys=True)


def alternating(rounds: int, sides: Sequence[Callable[[], object]]) -> list[float]:
    """Run each side once per round, in turn; return each side's median time in seconds.

    A side that returns a float has timed itself (it had work to do first); any other side is
    timed whole.
    """
    timings: list[list[float]] = [[] for _ in sides]
    for _ in range(rounds):
        for index, side in enumerate(sides):
            start = time.perf_counter()
            timed = side()
            whole = time.perf_counter() - start
            timings[index].append(timed if isinstance(timed, float) else whole)
    return [statistics.median(times) for times in timings]


def retained_size() -> tuple[int, int, int]:
    """1,000,000 calls over 10,000 agents with disposals; (live agents, state entries, bytes)."""
    rng = random.Random(11)
    live: set[str] = set()
    tracemalloc.start()
    state = GuardState.initial()
    baseline = tracemalloc.get_traced_memory()[0]
    for n in range(1_000_000):
        agent = f"agent-{rng.randrange(10_000)}"
        event: Event = ToolCallFinished(agent, "grep", {"p": n % 3})
        if rng.random() < 0.05:
            event = AgentDisposed(agent)
            live.discard(agent)
        else:
            live.add(agent)
        state, _ = reduce(state, event)
    retained = tracemalloc.get_traced_memory()[0] - baseline
    tracemalloc.stop()
    return len(live), len(state), retained


def run_policy(plan: Sequence[Planned], config: GuardConfig, ask: bool) -> int:
    """The reducer with ``config``, every call carrying its result; ``ask``: admit first."""
    state = GuardState.initial(config)
    fired = 0
    for agent, tool, pairs, result in plan:
        event = ToolCallFinished(agent, tool, dict(pairs), result=result)
        if ask:
            admit(state, event)
        state, reminders = reduce(state, event)
        fired += len(reminders)
    return fired


def option_costs(plan: Sequence[Planned]) -> list[tuple[str, float]]:
    """Microseconds per event for the default config and each opt-in policy on its own.

    Every run gives a third of the calls a result (so half of those repeats changed it); only
    the progress run looks at it. The deny run also asks ``admit`` before every call, as a
    harness that refuses calls does.
    """
    configs = [
        ("default", GuardConfig(), False),
        ("cyclePeriod=3", GuardConfig(cycle_period=3), False),
        ("progress=result", GuardConfig(progress="result"), False),
        ("budgets", GuardConfig(budgets=(("grep", 1000), ("re*", 1000))), False),
        ("denyAt=10 + admit", GuardConfig(deny_at=10), True),
    ]
    sides = [partial(run_policy, plan, config, ask) for _name, config, ask in configs]
    medians = alternating(3, sides)
    return [
        (name, seconds / len(plan) * 1e6)
        for (name, _, _), seconds in zip(configs, medians, strict=True)
    ]


def scaling(calls: int = 200_000) -> list[tuple[int, float, float, float]]:
    """Microseconds per event on the stream above with 4, 1,000 and 100,000 live agents.

    Every agent holds a chain before timing. Each round starts from a freshly built state and
    the timed loop holds the only reference to the current state, as a harness does: a state
    that the loop replaces can then be freed. Also returns the median microseconds per event
    spent in the cyclic garbage collector (included in the first figure).
    """
    sizes = (4, 1_000, 100_000)
    collected: dict[int, list[float]] = {agents: [] for agents in sizes}
    sides = []
    for agents in sizes:
        plan = planned_stream(calls, agents, seed=agents)
        sides.append(partial(run_from_full_state, agents, plan, collected[agents]))
        sides.append(partial(run_dict_from_full, agents, plan))
    # The benchmark's own objects (the planned calls) are moved out of the collector's sight, so
    # a collection costs what the states hold, not what the benchmark holds.
    gc.collect()
    gc.freeze()
    try:
        medians = alternating(ROUNDS, sides)
    finally:
        gc.unfreeze()
    return [
        (
            agents,
            reducer / calls * 1e6,
            statistics.median(collected[agents]) / calls * 1e6,
            mutable / calls * 1e6,
        )
        for agents, reducer, mutable in zip(sizes, medians[::2], medians[1::2], strict=True)
    ]


def run_from_full_state(agents: int, plan: Sequence[Planned], collected: list[float]) -> float:
    """Build a state where all ``agents`` hold a chain, then time ``plan`` over it (seconds).

    Appends the seconds the cyclic garbage collector ran during the timed loop to ``collected``.
    """
    states = [GuardState.initial()]
    for n in range(agents):
        states[0], _ = reduce(states[0], ToolCallFinished(f"agent-{n}", "grep", {"p": 0}))
    pauses = [0.0, 0.0]  # start of the current pause, total

    def on_collection(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            pauses[0] = time.perf_counter()
        else:
            pauses[1] += time.perf_counter() - pauses[0]

    gc.callbacks.append(on_collection)
    start = time.perf_counter()
    current = states.pop()
    for agent, tool, pairs, _result in plan:
        current, _ = reduce(current, ToolCallFinished(agent, tool, dict(pairs)))
    elapsed = time.perf_counter() - start
    gc.callbacks.remove(on_collection)
    collected.append(pauses[1])
    return elapsed


def run_dict_from_full(agents: int, plan: Sequence[Planned]) -> float:
    """``run_dict`` with the same canonicaliser, timed (seconds) from a dict where all
    ``agents`` hold a chain: how a plain mutable dict's own cost grows with live agents."""
    chains = {f"agent-{n}": ("grep", canonical_arguments({"p": 0}), 1) for n in range(agents)}
    start = time.perf_counter()
    run_dict(plan, canonical_arguments, chains)
    return time.perf_counter() - start


def against(ratio: float, target: float) -> str:
    """``ratio`` and whether it meets a target of at least ``target``."""
    verdict = "meets it" if ratio >= target else "MISSES it"
    return f"{ratio:.2f}x (target >= {target}x: {verdict})"


def at_most(ratio: float, target: float) -> str:
    """``ratio`` and whether it meets a target of at most ``target``."""
    verdict = "meets it" if ratio <= target else "MISSES it"
    return f"{ratio:.2f}x (target <= {target}x: {verdict})"


def main() -> None:
    """Print the core figures."""
    plan = planned_stream()
    fired = run_reducer(plan)
    assert fired == run_dict(plan, canonical_arguments) == run_dict(plan, json_sorted), fired
    assert fired == run_dict_on_events(plan, canonical_arguments), fired
    reducer, same, dumps, on_events = alternating(
        ROUNDS,
        [
            partial(run_reducer, plan),
            partial(run_dict, plan, canonical_arguments),
            partial(run_dict, plan, json_sorted),
            partial(run_dict_on_events, plan, canonical_arguments),
        ],
    )
    print(
        f"core: {CALLS:,} calls, {AGENTS} agents interleaving at random, 30% repeats (half with "
        f"keys reordered), 2% 4 KB arguments; medians of {ROUNDS} alternating rounds"
    )
    print(f"  reducer                          {CALLS / reducer:10,.0f} calls/s")
    print(f"  dict + canonical_arguments       {CALLS / same:10,.0f} calls/s")
    print(f"  dict + json.dumps(sort_keys)     {CALLS / dumps:10,.0f} calls/s")
    print(f"  reducer / dict, same canonicaliser: {against(same / reducer, 0.4)}")
    print(f"  reducer / dict + json.dumps:        {against(dumps / reducer, 1.3)}")
    print(
        f"  (not a target: the same-canonicaliser dict fed a ToolCallFinished per call, as the "
        f"reducer is: {CALLS / on_events:,.0f} calls/s; reducer / it {on_events / reducer:.2f}x)"
    )
    scaled = scaling()
    few, few_dict = scaled[0][1], scaled[0][3]
    print(
        "  cost per event by live agents (same stream, default config; targets: 1,000 agents "
        "<= 1.5x 4 agents, 100,000 <= 1.2x what a plain dict grows):"
    )
    for agents, micros, collecting, mutable in scaled:
        grown, dict_grown = micros / few, mutable / few_dict
        print(
            f"    {agents:>7,} agents  {micros:6.2f} us  ({grown:.2f}x 4 agents; "
            f"{collecting:.2f} us of it in the garbage collector)"
        )
        print(
            f"    {'':>7} a plain dict (same canonicaliser) {mutable:6.2f} us "
            f"({dict_grown:.2f}x its 4 agents; the reducer grows {grown / dict_grown:.2f}x as much)"
        )
    print(f"  1,000 agents / 4:          {at_most(scaled[1][1] / few, 1.5)}")
    print(
        "  100,000 agents' growth / a plain dict's: "
        f"{at_most((scaled[2][1] / few) / (scaled[2][3] / few_dict), 1.2)}"
    )
    costs = option_costs(plan)
    default = costs[0][1]
    print("  cost per event, each opt-in policy alone (same stream, results on a third of calls):")
    for name, micros in costs:
        print(f"    {name:<18} {micros:6.2f} us  ({micros / default:.2f}x the default)")
    live, entries, retained = retained_size()
    print(
        f"  after 1,000,000 calls over 10,000 agents with disposals: {live:,} live agents, "
        f"{entries:,} chains, {retained / 1e6:.1f} MB retained "
        f"({retained / max(entries, 1):.0f} B/chain)"
    )
