"""The guard's state and its one transition function, ``reduce``.

Theory of operation: the state maps each live agent to its chain, the (tool, argument key) of
its last tracked call and how many times in a row that key was seen. The argument key is the
canonical argument text when it is short and a fixed-size digest of it otherwise
(``argument_key``), so a chain costs the same whatever the calls carry and holds no long
argument text; two calls compare equal exactly when their canonical texts do, up to the
collisions of a 128-bit BLAKE2b digest.
Everything that decides what the guard does lives in this file:

* a tracked call with the chain's key increments the count; any other tracked call starts a
  new chain at 1; untracked calls and agentless calls change nothing;
* a count equal to a threshold produces one reminder, gentle at the first threshold and
  detailed at the later ones;
* a prompt or a disposal drops the agent's chain.

The opt-in policies (cycles, result-aware progress, name budgets; see ``_policies``) keep a
``Memory`` per agent beside its chain, and ``admit`` answers before a call whether a hard limit
(``deny_at``, a spent budget) refuses it. With every policy off no agent has a ``Memory`` and
``reduce`` takes exactly the path above; ``admit`` never changes a state.

Representation (a performance choice, invisible through the API): three layers, an entry in
each hiding the same agent's entries in the layers below it. The chains of the agents that
called most recently sit in a small dict, copied (never changed) on every call. When a new
agent finds it full, its chains move into a middle dict, copied (by C code, a few nanoseconds
an entry) only then. When that one is full, its chains are written in one batch into a
``PVector`` of shards: a shard is a small dict of the agents whose hash falls on it, copied
(never changed) when one of them is written, so a write copies a handful of entries and the
vector's path to that shard. The number of shards doubles as agents arrive, keeping shards
small. A loop of a handful of agents never pays for more than a small dict copy, a few hundred
agents never pay for a shard write, and beyond that each new agent pays for one batched write.

Inside the state a chain is an exact ``(tool, key, repeats)`` tuple, never a ``Chain``: the
garbage collector stops tracking an exact tuple of strings and ints once it has seen it, but
never a tuple subclass, so a hundred thousand ``Chain`` values would be walked by every full
collection. ``chain`` and ``chains`` hand out ``Chain`` values. Equality and hashing look at the
merged mapping only, so two states with the same config and chains are equal however they were
reached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple, assert_never

from pyrsistent import PMap, PVector, pmap, pvector

from ._canonical import argument_key, canonical_arguments
from ._config import GuardConfig
from ._events import AgentDisposed, Event, PromptSubmitted, ToolCallFinished, ToolCallReturned
from ._policies import (
    ADMIT,
    EMPTY,
    FAILED,
    UNKNOWN,
    Admit,
    Deny,
    Memory,
    cycle_denies,
    cycle_of,
    cycle_returned,
    memory_fits,
    progressed,
    retry_of,
    retry_returned,
    spend,
)
from ._reminders import (
    BUDGET_SPANS,
    Form,
    Reminder,
    deny_budget_reason,
    deny_cycle_reason,
    deny_repeat_reason,
    render_budget,
    render_cycle,
    render_reminder,
    render_retry,
)

__all__ = ["Chain", "GuardState", "admit", "reduce"]

# How many agents' chains the small dict holds (it is copied on every call) before they move
# into the middle dict; how many the middle dict holds before they are written into the shards;
# how many chains a shard holds on average before the number of shards doubles (a shard is
# copied whenever one of its agents is written).
#
# Each new agent's chain is an allocation that outlives its call until the batch write frees
# the chain it replaced. The collector starts a young collection once such allocations outrun
# frees by 700 (its default threshold), and a young collection that finds the shards' vector
# young walks every shard (milliseconds with 100,000 agents). A middle dict of 512 keeps a
# stream of new agents under that count between two batch writes.
_RECENT_SLOTS = 32
_MIDDLE_SLOTS = 512
_SHARD_LOAD = 8
_FIRST_SHARDS = 8  # a power of two, as every shard count is


class Chain(NamedTuple):
    """An agent's current run of identical tracked calls.

    ``key`` is ``argument_key`` of the calls' canonical arguments: compare keys, not texts.
    """

    tool: str
    key: str
    repeats: int


Stored = tuple[str, str, int]
"""A chain as the state keeps it: ``(tool, key, repeats)`` in an exact tuple (see above)."""


Shards = PVector[dict[str, Stored]]  # each dict never changed once in the vector
Parts = tuple[GuardConfig, dict[str, Stored], dict[str, Stored], Shards, int, PMap[str, Memory]]
"""What a state holds: config, recent, middle, shards, stored, memories.

``recent`` maps the agents that called last to their chains (at most ``_RECENT_SLOTS``),
``middle`` the agents before them (fewer than ``_MIDDLE_SLOTS``), and ``shards`` holds the
others' chains, ``stored`` says how many; ``memories`` is the policies' memory per agent. The
dicts are never changed once a state holds them.
"""

_NO_CHAINS: dict[str, Stored] = {}
_NO_MEMORY: PMap[str, Memory] = pmap()
_NO_SHARDS: Shards = pvector([_NO_CHAINS] * _FIRST_SHARDS)


@dataclass(frozen=True, slots=True, eq=False, init=False)
class GuardState:
    """The guard's immutable state: its config and one chain per agent that has one.

    Build the first state with ``GuardState.initial(config)`` (or ``GuardState(config)``);
    every later one comes from ``reduce``.
    """

    _parts: Parts  # one slot, set once: see Parts

    def __init__(self, config: GuardConfig | None = None) -> None:
        """The state with no chains for ``config`` (the default config if omitted)."""
        config = GuardConfig() if config is None else config
        object.__setattr__(
            self, "_parts", (config, _NO_CHAINS, _NO_CHAINS, _NO_SHARDS, 0, _NO_MEMORY)
        )

    @classmethod
    def initial(cls, config: GuardConfig | None = None) -> GuardState:
        """Return the state with no chains, for ``config`` (the default config if omitted)."""
        return cls(config)

    @classmethod
    def from_chains(
        cls,
        config: GuardConfig,
        chains: Mapping[str, Chain],
        memories: Mapping[str, Memory] | None = None,
    ) -> GuardState:
        """Return the state holding exactly ``chains`` (and the policies' ``memories``).

        The inverse of ``chains`` and ``memories``:
        ``GuardState.from_chains(s.config, s.chains, s.memories) == s``. Raises ``ValueError``
        when a memory does not have the shape ``config``'s policies give one (``memory_fits``): one
        made under other cycle or budget settings would make ``reduce`` read past its counts.
        """
        stored = {agent: _stored(chain) for agent, chain in chains.items()}
        shards = _sharded(stored)
        memories = pmap(memories or {})
        for agent, memory in memories.items():
            if not memory_fits(config, memory):
                raise ValueError(f"the memory of {agent!r} was not made under this config")
        return _new_state((config, _NO_CHAINS, _NO_CHAINS, shards, len(stored), memories))

    @property
    def config(self) -> GuardConfig:
        """The config this state follows."""
        return self._parts[0]

    @property
    def memories(self) -> PMap[str, Memory]:
        """What the opt-in policies remember, per agent (empty while they are all off)."""
        return self._parts[5]

    def memory(self, agent: str) -> Memory:
        """Return what the policies remember about ``agent`` (the empty ``Memory`` if nothing)."""
        return self._parts[5].get(agent, EMPTY)

    @property
    def chains(self) -> PMap[str, Chain]:
        """Every agent's chain, keyed by agent id."""
        return pmap({agent: Chain._make(stored) for agent, stored in self._merged().items()})

    def chain(self, agent: str) -> Chain | None:
        """Return ``agent``'s chain, or ``None`` when it has none."""
        stored = self._stored(agent)
        return None if stored is None else Chain._make(stored)

    def __len__(self) -> int:
        """The number of agents holding a chain."""
        recent, middle, shards, stored = self._parts[1:5]
        above = recent.keys() | middle.keys()
        return stored + len(above) - sum(agent in _shard_of(shards, agent) for agent in above)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GuardState):
            return NotImplemented
        return (
            self.config == other.config
            and self._merged() == other._merged()
            and self.memories == other.memories
        )

    def __hash__(self) -> int:
        return hash((self.config, frozenset(self._merged().items()), self.memories))

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle the chains and memories, not the shards: where an agent's chain sits depends
        on ``hash(agent)``, which differs between processes (``PYTHONHASHSEED``), so the
        receiving process places every chain again."""
        return (GuardState.from_chains, (self.config, dict(self.chains), dict(self.memories)))

    def __repr__(self) -> str:
        memories = self.memories
        memory = f", memories={dict(memories)!r}" if memories else ""
        return f"GuardState(config={self.config!r}, chains={dict(self.chains)!r}{memory})"

    def _stored(self, agent: str) -> Stored | None:
        """``agent``'s stored chain, from the topmost layer holding one."""
        # Asked twice for every call a replay counts (``run_length``): the parts indexed, not
        # sliced into a new tuple.
        parts = self._parts
        stored = parts[1].get(agent)
        if stored is None:
            stored = parts[2].get(agent)
            if stored is None:
                stored = _shard_of(parts[3], agent).get(agent)
        return stored

    def _merged(self) -> dict[str, Stored]:
        """Every agent's stored chain in one new dict."""
        recent, middle, shards = self._parts[1:4]
        merged: dict[str, Stored] = {}
        for shard in shards:
            merged.update(shard)
        merged.update(middle)
        merged.update(recent)
        return merged

    def _with_chain(self, agent: str, chain: Stored) -> GuardState:
        """Return this state with ``agent``'s chain set."""
        return _with(self._parts, agent, chain, agent in self._parts[1])

    def _with_memory(self, agent: str, memory: Memory) -> GuardState:
        """Return this state with ``agent``'s memory set (itself when nothing changed)."""
        config, recent, middle, shards, stored, memories = self._parts
        if memory == memories.get(agent, EMPTY):
            return self
        return _new_state((config, recent, middle, shards, stored, memories.set(agent, memory)))

    def _without(self, agent: str) -> GuardState:
        """Return this state with no chain or memory for ``agent`` (itself when it had none)."""
        config, recent, middle, shards, stored, memories = self._parts
        index = hash(agent) & (len(shards) - 1)
        shard = shards[index]
        if not any(agent in held for held in (recent, middle, shard, memories)):
            return self
        if agent in shard:
            shard = {key: chain for key, chain in shard.items() if key != agent}
            shards, stored = shards.set(index, shard), stored - 1
        recent = {key: chain for key, chain in recent.items() if key != agent}
        middle = {key: chain for key, chain in middle.items() if key != agent}
        if agent in memories:  # pyrsistent's discard of a missing key raises and catches
            memories = memories.discard(agent)
        return _new_state((config, recent, middle, shards, stored, memories))


def _with(parts: Parts, agent: str, chain: Stored, recent_holds: bool) -> GuardState:
    """The state of ``parts`` with ``agent``'s chain set; ``recent_holds``: the small dict
    already holds one for ``agent`` (else, when full, its chains move down first)."""
    config, recent, middle, shards, stored, memories = parts
    if not recent_holds and len(recent) >= _RECENT_SLOTS:
        middle, shards, stored = _spilled(recent, middle, shards, stored)
        recent = _NO_CHAINS
    fresh = recent.copy()
    fresh[agent] = chain
    state: GuardState = _object_new(GuardState)  # _new_state, inline: every call comes here
    _set_parts(state, (config, fresh, middle, shards, stored, memories))
    return state


def _shard_of(shards: Shards, agent: str) -> Mapping[str, Stored]:
    """The shard that holds ``agent``'s chain if the shards hold one."""
    return shards[hash(agent) & (len(shards) - 1)]


def _spilled(
    recent: dict[str, Stored], middle: dict[str, Stored], shards: Shards, stored: int
) -> tuple[dict[str, Stored], Shards, int]:
    """Move ``recent``'s chains down: return the new middle dict, shards and their count.

    The middle dict takes them (a copy of it, which C code makes at a few nanoseconds an
    entry); once it holds ``_MIDDLE_SLOTS`` chains they are all written into the shards.
    """
    middle = {**middle, **recent}
    if len(middle) >= _MIDDLE_SLOTS:
        shards, stored = _written(shards, stored, middle)
        if stored > _SHARD_LOAD * len(shards):
            shards = _resharded(shards)
        middle = _NO_CHAINS
    return middle, shards, stored


def _written(shards: Shards, stored: int, chains: Mapping[str, Stored]) -> tuple[Shards, int]:
    """Return ``shards`` with every chain of ``chains`` written in, and how many they hold."""
    mask = len(shards) - 1
    copies: dict[int, dict[str, Stored]] = {}
    for agent, chain in chains.items():
        index = hash(agent) & mask
        copy = copies.get(index)
        if copy is None:
            copy = copies[index] = shards[index].copy()
        copy[agent] = chain
    evolver = shards.evolver()
    for index, copy in copies.items():
        stored += len(copy) - len(shards[index])
        evolver[index] = copy
    written: Shards = evolver.persistent()
    return written, stored


def _resharded(shards: Shards) -> Shards:
    """The chains of ``shards`` in twice as many shards."""
    merged: dict[str, Stored] = {}
    for shard in shards:
        merged.update(shard)
    return _sharded(merged)


def _sharded(chains: Mapping[str, Stored]) -> Shards:
    """``chains`` in the fewest shards (a power of two, ``_FIRST_SHARDS`` or more) that keep
    them ``_SHARD_LOAD`` a shard or fewer on average."""
    count = _FIRST_SHARDS
    while count * _SHARD_LOAD < len(chains):
        count *= 2
    shards: list[dict[str, Stored]] = [{} for _ in range(count)]
    for agent, chain in chains.items():
        shards[hash(agent) & (count - 1)][agent] = chain
    return pvector(shards)


def _stored(chain: Iterable[object]) -> Stored:
    """``chain`` as an exact tuple."""
    tool, key, repeats = chain
    return (tool, key, repeats)  # type: ignore[return-value]  # a Chain's fields


# A state is built on every call: setting its slot directly skips the frozen dataclass's
# __setattr__, which refuses (see the README's Performance).
_object_new = object.__new__
_set_parts: Callable[[GuardState, object], None] = vars(GuardState)["_parts"].__set__


def _new_state(parts: Parts) -> GuardState:
    state: GuardState = _object_new(GuardState)
    _set_parts(state, parts)
    return state


def _count(previous: Stored | None, tool: str, key: str) -> int:
    """The same-call rule: a tracked call with the chain's (tool, key) is one more in a row;
    any other starts a new chain at 1."""
    if previous is not None and previous[0] == tool and previous[1] == key:
        return previous[2] + 1
    return 1


def reduce(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
    """Apply ``event`` to ``state``.

    Returns the next state and the reminders the event produced: none, or one with the
    default config; with the opt-in policies, the chain's, then a cycle's, then a budget's.
    Never raises for well-typed events and never mutates its inputs.
    """
    match event:
        case ToolCallFinished():
            return _on_call(state, event)
        case ToolCallReturned():
            return _on_returned(state, event)
        case PromptSubmitted(agent=agent):
            return _on_prompt(state, agent), ()
        case AgentDisposed(agent=agent):
            return state._without(agent), ()
        case _:
            assert_never(event)


def _on_prompt(state: GuardState, agent: str) -> GuardState:
    # A prompt drops the agent's chain and memory, but for budgets counted over the session.
    spent = state.memory(agent).spent
    after = state._without(agent)
    if state.config.budget_scope == "session" and spent:
        return after._with_memory(agent, Memory(spent=spent))
    return after


def _on_call(state: GuardState, event: ToolCallFinished) -> tuple[GuardState, tuple[Reminder, ...]]:
    # Every call a harness makes comes here: written against the layers, and answering before
    # the reminder's function when no threshold is reached (see the README's Performance).
    parts = state._parts
    agent, tool, config = event.agent, event.tool, parts[0]
    if agent is None:
        return state, ()
    if not config._plain:  # the default config skips both questions
        if config.policies:
            return _on_call_with_policies(state, event, agent)
        if not config.tracks(tool):
            return state, ()
    arguments = canonical_arguments(event.arguments)
    key = argument_key(arguments)
    previous = parts[1].get(agent)
    recent_holds = previous is not None
    if previous is None:
        previous = parts[2].get(agent) or _shard_of(parts[3], agent).get(agent)
    count = _count(previous, tool, key)
    after = _with(parts, agent, (tool, key, count), recent_holds)
    if count not in config.thresholds:
        return after, ()
    return after, _chain_reminders(config, config.thresholds, agent, tool, arguments, count)


def _chain_reminders(
    config: GuardConfig,
    thresholds: tuple[int, ...],
    agent: str,
    tool: str,
    arguments: str,
    count: int,
) -> tuple[Reminder, ...]:
    if count not in thresholds:
        return ()
    form: Form = "gentle" if count == thresholds[0] else "detailed"
    reminder = render_reminder(agent, tool, arguments, count, form, config.arguments_preview_chars)
    return (reminder,)


def _on_call_with_policies(
    state: GuardState, event: ToolCallFinished, agent: str
) -> tuple[GuardState, tuple[Reminder, ...]]:
    config = state.config
    tool = event.tool
    memory = state.memory(agent)
    arguments = canonical_arguments(event.arguments)
    reminders: list[Reminder] = []
    if config.tracks(tool):
        key = argument_key(arguments)
        policy = config.policy(tool)
        # A refused attempt did not run: what it returned (the refusal) says nothing of the
        # tool's output, so it is never evidence of progress.
        result = None if event.denied else _result_key(config, tool, event.result, event.failed)
        count = _count(state._stored(agent), tool, key)
        same = count > 1
        if same and progressed(memory.result, result):
            count = 1  # progress: the same call, another result
        state = state._with_chain(agent, (tool, key, count))
        reminders.extend(_chain_reminders(config, policy.thresholds, agent, tool, arguments, count))
        if config.cycle_period:
            memory, fired = cycle_of(config, memory, (tool, key), result)
            if fired is not None:
                repeats, block = fired
                preview = config.arguments_preview_chars
                reminders.append(render_cycle(agent, arguments, repeats, block, preview))
        memory = replace(memory, result=result, earlier=memory.result if same else None)
        if config.retry_window:
            memory, retried = _retried(config, memory, event, (agent, key, arguments), count)
            reminders.extend(retried)
    if config.budgets:
        spent, reached = spend(config, memory.spent, tool)
        memory = replace(memory, spent=spent)
        if reached is not None:
            pattern, limit = config.budgets[reached]
            span = BUDGET_SPANS[config.budget_scope]
            reminders.append(render_budget(agent, tool, arguments, limit, pattern, span))
    return state._with_memory(agent, memory), tuple(reminders)


def _retried(
    config: GuardConfig,
    memory: Memory,
    event: ToolCallFinished,
    call: tuple[str, str, str],
    run: int,
) -> tuple[Memory, tuple[Reminder, ...]]:
    """The retry window after ``event`` (``call``: its agent, argument key and canonical
    arguments; ``run``: its chain's count), and its ``retry`` reminder, if due: when the same
    call has failed the same way a threshold's number of times in the window, and not all of
    them back to back (a run of them is the chain's to remind of). A call reported with no
    result and no failure holds its place as ``UNKNOWN`` until its result comes
    (``ToolCallReturned``)."""
    _agent, key, _arguments = call
    failed = event.failed and not event.denied
    unknown = not event.failed and not event.denied and event.result is None
    if unknown:
        failures, _ = retry_of(config, memory.failures, (event.tool, key, UNKNOWN), succeeded=False)
        return replace(memory, failures=failures), ()
    succeeded = not event.failed and not event.denied
    failures, times = retry_of(
        config,
        memory.failures,
        (event.tool, key, _failure(event.result, failed)),
        succeeded=succeeded,
    )
    return replace(memory, failures=failures), _retry_reminder(config, event, call, (times, run))


def _failure(result: object, failed: bool) -> str | None:
    """What the retry window compares a result by: a failure by its fingerprint, as progress
    compares results (one the host reported without a text is a failure all the same); any
    other result by nothing (``None``)."""
    return (FAILED + _fingerprint_key(result)) if failed else None


def _retry_reminder(
    config: GuardConfig,
    event: ToolCallFinished | ToolCallReturned,
    call: tuple[str, str, str],
    counts: tuple[int, int],
) -> tuple[Reminder, ...]:
    """The ``retry`` reminder due when the call failed ``times`` times the same way in the
    window, not all ``run`` back to back (``counts``: ``(times, run)``)."""
    times, run = counts
    if times not in config.retry_thresholds or run >= times:
        return ()
    agent, _key, arguments = call
    preview = config.arguments_preview_chars
    error = canonical_arguments(event.result)
    return (render_retry(agent, event.tool, arguments, times, error, preview),)


def _on_returned(
    state: GuardState, event: ToolCallReturned
) -> tuple[GuardState, tuple[Reminder, ...]]:
    # The result of the agent's last tracked call, when that call is this one and its result
    # is still unknown: the progress rule and the retry window of _on_call_with_policies,
    # applied now. The retry window's reminder comes with this event.
    agent, tool = event.agent, event.tool
    if agent is None:
        return state, ()
    arguments = canonical_arguments(event.arguments)
    key = argument_key(arguments)
    stored = state._stored(agent)
    if _count(stored, tool, key) == 1:  # the last tracked call is another (or none)
        return state, ()
    memory = state.memory(agent)
    result = _result_key(state.config, tool, event.result, event.failed)
    if result is not None and memory.result is None:
        if progressed(memory.earlier, result):
            state = state._with_chain(agent, (tool, key, 1))
        memory = replace(cycle_returned(memory, result), result=result)
    reminders: tuple[Reminder, ...] = ()
    if state.config.retry_window:
        run = _count(state._stored(agent), tool, key) - 1
        memory, reminders = _retried_late(state.config, memory, event, (agent, key, arguments), run)
    return state._with_memory(agent, memory), reminders


def _retried_late(
    config: GuardConfig,
    memory: Memory,
    event: ToolCallReturned,
    call: tuple[str, str, str],
    run: int,
) -> tuple[Memory, tuple[Reminder, ...]]:
    """The retry window once the last tracked call's result, ``UNKNOWN`` until now, is
    reported (``event``), and its ``retry`` reminder, if due: as ``_retried`` had it come with
    the call. A result still unknown (no text, not failed) changes nothing."""
    if not event.failed and event.result is None:
        return memory, ()
    _agent, key, _arguments = call
    fails = _failure(event.result, event.failed)
    late = retry_returned(
        config, memory.failures, (event.tool, key, fails), succeeded=not event.failed
    )
    if late is None:
        return memory, ()
    failures, times = late
    return replace(memory, failures=failures), _retry_reminder(config, event, call, (times, run))


def _result_key(config: GuardConfig, tool: str, result: object, failed: bool) -> str | None:
    """The key a result of ``tool`` is compared by (``None``: not known, as always when the
    tool's policy does not read results): a failure's starts with ``FAILED``, and is known
    even without a text (the host said it failed), unless ``errors_are_progress`` has
    failures compared as any other result."""
    if not config.reads_results or config.policy(tool).progress != "result":
        return None
    if failed and not config.errors_are_progress:
        return FAILED if result is None else FAILED + _fingerprint_key(result)
    if result is None:
        return None
    return _fingerprint_key(result)


def _fingerprint_key(result: object) -> str:
    # Results are compared less what carries no progress (a line number in an error, a time).
    # Imported when first used: compiling its expressions costs a hook process (a new one for
    # every tool call) a millisecond it need not pay while progress is off.
    from .fingerprint import fingerprint  # noqa: PLC0415

    return argument_key(canonical_arguments(fingerprint(result)))


def admit(
    state: GuardState, call: ToolCallFinished, running: Iterable[ToolCallFinished] = ()
) -> Admit | Deny:
    """Say whether ``call`` may run, before it runs: ``Admit()``, or ``Deny(reason)``.

    ``call`` is the attempt as it would be reported (its ``denied`` and ``result`` are not
    looked at). It is denied when it would be the ``deny_at``-th identical call in a row
    (counted as if it made no progress), when it would bring a cycle to ``cycle_deny_at``
    repetitions or more (the same), or when a budget its tool matches is already spent.
    ``running`` are calls admitted before it that have not finished (a harness that runs
    several at once counts each when it finishes): they count as if they had finished first,
    in order; those of other agents change nothing. Pure: ``state`` is never changed; a
    harness reports the refused attempt afterwards as a ``ToolCallFinished`` with
    ``denied=True``, which counts like any other.
    """
    agent, tool = call.agent, call.tool
    if agent is None:
        return ADMIT
    for earlier in running:
        if earlier.agent == agent:
            state, _ = reduce(state, earlier)
    config = state.config
    refused = _refused_repeat(state, agent, call) if config.tracks(tool) else None
    if refused is not None:
        return refused
    spent = state.memory(agent).spent
    for index, (pattern, limit) in enumerate(config.budgets):
        if spent and spent[index] >= limit and config.budget_matches(index, tool):
            span = BUDGET_SPANS[config.budget_scope]
            return Deny(deny_budget_reason(tool, pattern, limit, span))
    return ADMIT


def _refused_repeat(state: GuardState, agent: str, call: ToolCallFinished) -> Deny | None:
    """``admit``'s hard limits on a tracked call: its tool's ``deny_at``, then
    ``cycle_deny_at``."""
    config, tool = state.config, call.tool
    deny_at = config.policy(tool).deny_at
    if deny_at is None and config.cycle_deny_at is None:
        return None
    arguments = canonical_arguments(call.arguments)
    key = argument_key(arguments)
    count = _count(state._stored(agent), tool, key)
    if deny_at is not None and count >= deny_at:
        return Deny(deny_repeat_reason(tool, count))
    cycle = cycle_denies(config, state.memory(agent), (tool, key))
    if cycle is None:
        return None
    calls, block = cycle
    return Deny(deny_cycle_reason(arguments, calls, block, config.arguments_preview_chars))
