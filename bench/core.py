"""Core benchmark: reducer throughput against a mutable baseline, canonicalisation, retained size.

Figures are ratios measured in one run, so a noisy machine moves both sides together.
"""

from __future__ import annotations

import json
import random
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import replace

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

CALLS = 200_000
AGENTS = 4


def mixed_stream(seed: int = 7) -> list[ToolCallFinished]:
    """4 agents, about 30% repeats of the agent's previous call, 2% with a 4 KB string."""
    rng = random.Random(seed)
    big = "x" * 4096
    last: dict[str, ToolCallFinished] = {}
    stream = []
    for n in range(CALLS):
        agent = f"agent-{rng.randrange(AGENTS)}"
        previous = last.get(agent)
        if previous is not None and rng.random() < 0.30:
            event = previous
        else:
            arguments: dict[str, object] = {"path": f"src/m{n % 97}.py", "line": n % 13}
            if rng.random() < 0.02:
                arguments["body"] = big
            event = ToolCallFinished(agent, rng.choice(["grep", "read", "edit"]), arguments)
        last[agent] = event
        stream.append(event)
    return stream


def run_reducer(stream: Sequence[ToolCallFinished]) -> int:
    state = GuardState.initial()
    fired = 0
    for event in stream:
        state, reminders = reduce(state, event)
        fired += len(reminders)
    return fired


def run_baseline(stream: Sequence[ToolCallFinished]) -> int:
    """A plain dict of (key, count) per agent with the same canonicaliser and thresholds."""
    config = GuardConfig()
    thresholds = config.thresholds
    chains: dict[str, tuple[tuple[str, str], int]] = {}
    fired = 0
    for event in stream:
        if event.agent is None or not config.tracks(event.tool):
            continue
        key = (event.tool, canonical_arguments(event.arguments))
        previous = chains.get(event.agent)
        count = previous[1] + 1 if previous is not None and previous[0] == key else 1
        chains[event.agent] = (key, count)
        fired += count in thresholds
    return fired


def best_of(runs: int, work: Callable[[], object]) -> float:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        timings.append(time.perf_counter() - start)
    return min(timings)


def naive_canonical(value: object) -> str:
    """A correct alternative: normalise recursively, then json.dumps with sort_keys."""

    def walk(item: object) -> object:
        if isinstance(item, float) and item.is_integer():
            return int(item)
        if isinstance(item, dict):
            return {key: walk(inner) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [walk(inner) for inner in item]
        return item

    return json.dumps(walk(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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


def option_costs(stream: Sequence[ToolCallFinished]) -> list[tuple[str, float]]:
    """Microseconds per event for the default config and each opt-in policy on its own.

    The progress run gives every call a result (half of the repeats with a changed one); the
    deny run also asks ``admit`` before every call, as a harness that refuses calls does.
    """
    with_results = [
        replace(event, result=f"out-{n % 2}") if n % 3 == 0 else event
        for n, event in enumerate(stream)
    ]
    configs = [
        ("default", GuardConfig(), stream, False),
        ("cyclePeriod=3", GuardConfig(cycle_period=3), stream, False),
        ("progress=result", GuardConfig(progress="result"), with_results, False),
        ("budgets", GuardConfig(budgets=(("grep", 1000), ("re*", 1000))), stream, False),
        ("denyAt=10 + admit", GuardConfig(deny_at=10), stream, True),
    ]
    costs = []
    for name, config, events, ask in configs:

        def work(
            config: GuardConfig = config,
            events: Sequence[ToolCallFinished] = events,
            ask: bool = ask,
        ) -> int:
            return run_config(config, events, ask)

        costs.append((name, best_of(3, work) / len(events) * 1e6))
    return costs


def run_config(config: GuardConfig, stream: Sequence[ToolCallFinished], ask: bool) -> int:
    state = GuardState.initial(config)
    fired = 0
    for event in stream:
        if ask:
            admit(state, event)
        state, reminders = reduce(state, event)
        fired += len(reminders)
    return fired


def scaling() -> list[tuple[int, float]]:
    """Microseconds per event with 4, 1,000 and 100,000 live agents interleaving at random."""
    out = []
    for agents in (4, 1_000, 100_000):
        rng = random.Random(agents)
        events = [
            ToolCallFinished(f"agent-{rng.randrange(agents)}", "grep", {"p": rng.randrange(3)})
            for _ in range(200_000)
        ]
        state = GuardState.initial()
        for n in range(agents):  # every agent live before timing
            state, _ = reduce(state, ToolCallFinished(f"agent-{n}", "grep", {"p": 0}))

        def work(start: GuardState = state, stream: list[ToolCallFinished] = events) -> None:
            current = start
            for event in stream:
                current, _ = reduce(current, event)

        out.append((agents, best_of(3, work) / len(events) * 1e6))
    return out


def main() -> None:
    """Print the core figures."""
    stream = mixed_stream()
    assert run_reducer(stream) == run_baseline(stream), "reducer and baseline disagree"
    reducer = best_of(3, lambda: run_reducer(stream))
    baseline = best_of(3, lambda: run_baseline(stream))
    print(f"core: {CALLS:,} calls, {AGENTS} agents, ~30% repeats, 2% 4 KB arguments")
    print(f"  reducer   {CALLS / reducer:12,.0f} calls/s")
    print(f"  baseline  {CALLS / baseline:12,.0f} calls/s (mutable dict, same canonicaliser)")
    print(f"  ratio reducer/baseline: {baseline / reducer:.2f}x (target >= 0.5x)")
    arguments = [event.arguments for event in stream[:50_000]]
    ours = best_of(3, lambda: [canonical_arguments(a) for a in arguments])
    naive = best_of(3, lambda: [naive_canonical(a) for a in arguments])
    print(f"  canonical_arguments vs normalise+json.dumps: {naive / ours:.2f}x faster")
    live, entries, retained = retained_size()
    print(
        f"  after 1,000,000 calls over 10,000 agents with disposals: {live:,} live agents, "
        f"{entries:,} chains, {retained / 1e6:.1f} MB retained "
        f"({retained / max(entries, 1):.0f} B/chain)"
    )
    costs = option_costs(stream)
    default = costs[0][1]
    print("  cost per event, each opt-in policy alone (same stream):")
    for name, micros in costs:
        print(f"    {name:<18} {micros:6.2f} us  ({micros / default:.2f}x the default)")
    scaled = scaling()
    few = scaled[0][1]
    print("  cost per event by live agents (random interleaving, default config):")
    for agents, micros in scaled:
        print(f"    {agents:>7,} agents  {micros:6.2f} us  ({micros / few:.2f}x 4 agents)")
