"""The opt-in policies: cycles, result-aware progress, name budgets, and ``admit``.

Each is a pure function of an agent's ``Memory`` (what the policies remember about it) and one
call. They are off by default; with every one off no agent has a ``Memory`` and the reducer is
exactly the back-to-back rule. ``_state.reduce`` calls ``step`` for every call of an agent while
any policy is on; ``admit`` answers before a call runs and never changes anything.

* Cycles (``cycle_period = k``): the tracked calls' (tool, key) sequence is periodic with a
  period ``p`` from 2 to ``k`` over its last ``n * p`` calls, the block of ``p`` calls holds
  ``p`` distinct keys, and ``n`` is one of ``cycle_thresholds``: a ``cycle`` reminder naming
  the block. ``runs[p - 2]`` is the length of the longest suffix with period ``p``; it grows by
  one when a call equals the call ``p`` back and falls to ``min(p, length)`` otherwise.
* Progress (``progress = "result"``): an identical call whose result key differs from the
  previous call's (both known) is progress: the chain starts over at 1. A denied attempt's
  result is not known: the tool did not run. A result reported
  after its call (``ToolCallReturned``) is compared when it arrives, with ``earlier``. A
  failure (``failed``) is no progress over a failure (``progressed``).
* Budgets: calls to tools matching a pattern since the last prompt, tracked or not; the call
  that reaches the limit gets a ``budget`` reminder, and ``admit`` denies the calls after it.
* Deny (``deny_at = n``): ``admit`` denies a tracked call that would be the ``n``-th identical
  call in a row (counted as if it made no progress: its result is not known before it runs).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._config import GuardConfig

__all__ = ["FAILED", "Admit", "Deny", "Memory", "cycle_of", "memory_fits", "progressed", "spend"]

Key = tuple[str, str]
"""A tracked call as the policies compare it: (tool, argument key)."""


@dataclass(frozen=True, slots=True)
class Memory:
    """What the opt-in policies remember about one agent since its last prompt.

    ``recent``: the last (up to ``cycle_period``) tracked calls' (tool, argument key), oldest
    first. ``runs``: per period 2..``cycle_period``, the length of the longest periodic suffix.
    ``result``: the result key of the last tracked call (``None`` when not reported).
    ``spent``: calls per budget, in the config's order.
    ``earlier``: the result key of the tracked call before the last when both were the same
    call (``None`` otherwise, or when not reported), kept for a ``ToolCallReturned`` that
    reports the last call's result after it.
    """

    recent: tuple[Key, ...] = ()
    runs: tuple[int, ...] = ()
    result: str | None = None
    spent: tuple[int, ...] = ()
    earlier: str | None = None


EMPTY = Memory()


def memory_fits(config: GuardConfig, memory: Memory) -> bool:
    """Whether ``memory`` has the shape ``config``'s policies give one: no more recent calls
    than the cycle period, a run per period (or none yet), a count per budget (or none yet).

    The shape only: budgets reordered under the same count fit, and mean other tools; a stored
    memory travels with the settings it was made under (``encode_memory_settings``).
    """
    period = config.cycle_period
    return (
        len(memory.recent) <= period
        and len(memory.runs) in (0, period - 1)  # none at all while cycles are off (period 0)
        and len(memory.spent) in (0, len(config.budgets))
    )


# A failed result's key starts with this, which no canonical text does (they are JSON): so a
# memory stored before failures were told apart reads as it did, every result a success.
FAILED = "!"


def progressed(before: str | None, after: str | None) -> bool:
    """Whether a result keyed ``after`` is progress over the same call's earlier ``before``:
    both known and different, and not both failures (a failure is no news after a failure)."""
    if before is None or after is None or before == after:
        return False
    return not (before.startswith(FAILED) and after.startswith(FAILED))


@dataclass(frozen=True, slots=True)
class Admit:
    """The call may run."""


@dataclass(frozen=True, slots=True)
class Deny:
    """The call would pass a configured hard limit; ``reason`` says which, for the model."""

    reason: str


ADMIT = Admit()


def cycle_of(
    config: GuardConfig, memory: Memory, key: Key
) -> tuple[tuple[Key, ...], tuple[int, ...], tuple[int, tuple[Key, ...]] | None]:
    """Return the new ``recent`` and ``runs`` after the tracked call ``key``, and what fired.

    What fired is ``(repetitions, block)`` for the shortest period whose block of distinct
    keys just completed a threshold's number of repetitions, else ``None``.
    """
    period_max = config.cycle_period
    recent = memory.recent
    runs = memory.runs or (0,) * (period_max - 1)
    length = len(recent) + 1
    grown: list[int] = []
    for period, run in enumerate(runs, start=2):
        matches = len(recent) >= period and recent[-period] == key
        grown.append(run + 1 if matches else min(period, length))
    after = (*recent, key)[-period_max:]
    fired: tuple[int, tuple[Key, ...]] | None = None
    for period, run in enumerate(grown, start=2):
        block = after[-period:]
        complete = run % period == 0 and run // period in config.cycle_thresholds
        if complete and len(block) == period and len(set(block)) == period:
            fired = (run // period, block)
            break
    return after, tuple(grown), fired


def spend(
    config: GuardConfig, spent: tuple[int, ...], tool: str
) -> tuple[tuple[int, ...], int | None]:
    """Count a call to ``tool`` against every budget whose pattern matches it.

    Returns the counts (``spent`` itself when no pattern matches) and the index of the first
    budget this call brought exactly to its limit, or ``None``.
    """
    counts = list(spent or (0,) * len(config.budgets))
    matched = False
    reached: int | None = None
    for index, (_pattern, limit) in enumerate(config.budgets):
        if config.budget_matches(index, tool):
            matched = True
            counts[index] += 1
            if counts[index] == limit and reached is None:
                reached = index
    return (tuple(counts) if matched else spent), reached
