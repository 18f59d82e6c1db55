"""The opt-in policies: cycles, result-aware progress, name budgets, and ``admit``.

Each is a pure function of an agent's ``Memory`` (what the policies remember about it) and one
call. They are off by default; with every one off no agent has a ``Memory`` and the reducer is
exactly the back-to-back rule. ``_state.reduce`` calls ``step`` for every call of an agent while
any policy is on; ``admit`` answers before a call runs and never changes anything.

* Cycles (``cycle_period = k``): the tracked calls' (tool, key) sequence is periodic with a
  period ``p`` from 2 to ``k`` over its last ``n * p`` calls, the block of ``p`` calls holds
  ``p`` distinct keys, and ``n`` is one of ``cycle_thresholds``: a ``cycle`` reminder naming
  the block. ``runs[p - 2]`` is the length of the longest suffix with period ``p``; it grows by
  one when a call repeats the call ``p`` back and falls to ``min(p, length)`` otherwise. A call
  repeats another when it has the same (tool, key) and, under ``progress = "result"``, made no
  progress over it by the run rule (``progressed``): both results known and different is
  progress; an unknown one (not reported yet, or a denied attempt's) is not. ``outcomes`` keeps
  the last ``cycle_period + 1`` result keys for that; a result reported after its call
  (``ToolCallReturned``) that is progress over the call ``p`` back shortens the run of period
  ``p`` to ``p`` then, as if it had come with the call (``cycle_returned``).
* Cycle refusal (``cycle_deny_at = n``): ``admit`` refuses a tracked call that would bring a
  cycle of ``p`` distinct calls to ``n * p`` calls or more (its ``n``-th repetition complete, or
  further), counting the call as making no progress (``cycle_denies``).
* Progress (``progress = "result"``): an identical call whose result key differs from the
  previous call's (both known: ``progressed``) is progress: the chain starts over at 1. A
  denied attempt's result is not known: the tool did not run. A result reported after its
  call (``ToolCallReturned``) is compared when it arrives, with ``earlier``. A
  failure (``failed``) is no progress over a failure (``progressed``).
* Budgets: calls to tools matching a pattern since the last prompt (``budget_scope =
  "prompt"``) or since the agent began (``"session"``: a prompt keeps ``spent``), tracked or
  not; the call that reaches the limit gets a ``budget`` reminder, and ``admit`` denies the
  calls after it.
* Deny (``deny_at = n``): ``admit`` denies a tracked call that would be the ``n``-th identical
  call in a row (counted as if it made no progress: its result is not known before it runs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ._config import GuardConfig

__all__ = [
    "FAILED",
    "UNKNOWN",
    "Admit",
    "Deny",
    "Memory",
    "cycle_denies",
    "cycle_of",
    "cycle_returned",
    "memory_fits",
    "progressed",
    "retry_of",
    "retry_returned",
    "spend",
]

Failure = tuple[str, str, str | None]
"""A tracked call as the retry window keeps it: (tool, argument key, the key of its failed
result's fingerprint, ``UNKNOWN`` while its result is not reported yet, or ``None`` when it did
not fail)."""

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
    ``failures``: under ``retry_window``, the last (up to ``retry_window``) tracked calls,
    oldest first, as ``Failure`` values; empty otherwise.
    ``outcomes``: under cycles and ``progress = "result"``, the result keys of the last (up to
    ``cycle_period + 1``) tracked calls, oldest first (``None`` where not reported); empty
    otherwise, when every result counts as unknown.
    """

    recent: tuple[Key, ...] = ()
    runs: tuple[int, ...] = ()
    result: str | None = None
    spent: tuple[int, ...] = ()
    earlier: str | None = None
    outcomes: tuple[str | None, ...] = ()
    failures: tuple[Failure, ...] = ()


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
        and len(memory.outcomes) <= (period + 1 if period else 0)
        and len(memory.runs) in (0, period - 1)  # none at all while cycles are off (period 0)
        and len(memory.spent) in (0, len(config.budgets))
        and len(memory.failures) <= config.retry_window
    )


def retry_of(
    config: GuardConfig, failures: tuple[Failure, ...], call: Failure, *, succeeded: bool
) -> tuple[tuple[Failure, ...], int]:
    """Return the retry window after the tracked ``call``, and how many of its calls failed as
    ``call`` did (0 when ``call`` did not fail).

    A call that ``succeeded`` clears the earlier failures of the same call from the window: it
    worked, so they are not a failure repeated. (A refused attempt neither failed nor worked,
    nor did a call whose result is not known yet: ``UNKNOWN``.)
    """
    tool, key, failed = call
    if succeeded:
        failures = tuple(
            (t, k, None) if (t, k) == (tool, key) else (t, k, f) for t, k, f in failures
        )
    window = (*failures, call)[-config.retry_window :]
    return window, (0 if failed is None or failed == UNKNOWN else window.count(call))


def retry_returned(
    config: GuardConfig, failures: tuple[Failure, ...], call: Failure, *, succeeded: bool
) -> tuple[tuple[Failure, ...], int] | None:
    """``retry_of`` for the last tracked call, whose result is reported after it (``call``
    with that result): the window as if the result had come with the call, and its count;
    ``None`` when the window's last call is not that call with its result unknown."""
    tool, key, _failed = call
    if not failures or failures[-1] != (tool, key, UNKNOWN):
        return None
    return retry_of(config, failures[:-1], call, succeeded=succeeded)


# A failed result's key starts with this, which no canonical text does (they are JSON): so a
# memory stored before failures were told apart reads as it did, every result a success.
FAILED = "!"
# A tracked call's place in the retry window while its result is not reported (a hook counts a
# call before it runs): no failure key (``FAILED`` + a key) nor any canonical text is this.
UNKNOWN = "?"


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


def _back(outcomes: tuple[str | None, ...], steps: int) -> str | None:
    """The result key ``steps`` calls back from the end of ``outcomes`` (``None``: unknown)."""
    return outcomes[-steps] if len(outcomes) >= steps else None


Fired = tuple[int, tuple[Key, ...]]
"""A cycle found: its repetitions and its block of distinct (tool, key) calls."""


def cycle_of(
    config: GuardConfig, memory: Memory, key: Key, result: str | None = None
) -> tuple[Memory, Fired | None]:
    """Return ``memory`` after the tracked call ``key`` with result key ``result``, and what fired.

    Updates ``recent``, ``runs`` and ``outcomes``. What fired is ``(repetitions, block)`` for
    the shortest period whose block of distinct keys just completed a threshold's number of
    repetitions, else ``None``.
    """
    grown = _grown(config, memory, key, result)
    after = (*memory.recent, key)[-config.cycle_period :]
    fired: Fired | None = None
    for period, run in enumerate(grown, start=2):
        complete = run % period == 0 and run // period in config.cycle_thresholds
        if complete and _distinct(after, period):
            fired = (run // period, after[-period:])
            break
    outcomes = memory.outcomes
    if config.reads_results:
        outcomes = (*outcomes, result)[-config.cycle_period - 1 :]
    return replace(memory, recent=after, runs=grown, outcomes=outcomes), fired


def _grown(config: GuardConfig, memory: Memory, key: Key, result: str | None) -> tuple[int, ...]:
    """Every period's run after the call ``key`` (see the module's docstring)."""
    recent, outcomes = memory.recent, memory.outcomes
    runs = memory.runs or (0,) * (config.cycle_period - 1)
    length = len(recent) + 1
    grown: list[int] = []
    for period, run in enumerate(runs, start=2):
        repeats = len(recent) >= period and recent[-period] == key
        if repeats and not progressed(_back(outcomes, period), result):
            grown.append(run + 1)
        else:
            grown.append(min(period, length))
    return tuple(grown)


def _distinct(after: tuple[Key, ...], period: int) -> bool:
    block = after[-period:]
    return len(block) == period and len(set(block)) == period


def cycle_returned(memory: Memory, result: str) -> Memory:
    """Return ``memory`` once the last tracked call's result, unknown until now, is ``result``:
    a run that grew with that call, over a call ``p`` back whose result differs, shrinks to
    ``p`` (the call was progress after all). Unchanged while no outcomes are kept."""
    outcomes = memory.outcomes
    if not outcomes:
        return memory
    runs = tuple(
        period if run > period and progressed(_back(outcomes, period + 1), result) else run
        for period, run in enumerate(memory.runs, start=2)
    )
    return replace(memory, runs=runs, outcomes=(*outcomes[:-1], result))


def cycle_denies(config: GuardConfig, memory: Memory, key: Key) -> Fired | None:
    """Whether ``cycle_deny_at`` refuses the tracked call ``key`` (its result not yet known):
    ``(calls, block)`` for the shortest period whose cycle it would bring to ``cycle_deny_at``
    repetitions or more (``calls``: the cycle's length in calls with it), else ``None``."""
    limit = config.cycle_deny_at
    if limit is None:
        return None
    after = (*memory.recent, key)[-config.cycle_period :]
    for period, run in enumerate(_grown(config, memory, key, None), start=2):
        if run >= limit * period and _distinct(after, period):
            return (run, after[-period:])
    return None


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
