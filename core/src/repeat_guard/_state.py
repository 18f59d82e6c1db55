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

Representation (a performance choice, invisible through the API): three layers, each entry
hiding the same agent's entries in the layers below it. The chains of the agents that called
most recently sit in a small dict, copied (never changed) on every call; when a new agent finds
it full it is merged into a larger dict, copied only then; when that one is full it is written
into a ``PMap`` in one batch. A loop of a handful of agents never pays for more than a small
dict copy, a thousand agents never pay for a ``PMap`` update, and beyond that each call pays
one batched ``PMap`` write. Equality and hashing look at the merged mapping only, so two states
with the same config and chains are equal however they were reached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import NamedTuple, assert_never

from pyrsistent import PMap, pmap

from ._canonical import KEY_TEXT_LIMIT, argument_key, canonical_arguments
from ._config import GuardConfig
from ._events import AgentDisposed, Event, PromptSubmitted, ToolCallFinished
from ._policies import ADMIT, EMPTY, Admit, Deny, Memory, cycle_of, spend
from ._reminders import (
    Form,
    Reminder,
    deny_budget_reason,
    deny_repeat_reason,
    render_budget,
    render_cycle,
    render_reminder,
)

__all__ = ["Chain", "GuardState", "admit", "reduce"]

# How many agents' chains the small dict holds before it is merged into the larger one (it is
# copied on every call), and how many the larger one holds before it is written into the PMap
# (it is copied once every _RECENT_SLOTS new agents, at a few nanoseconds an entry). Each write
# into the PMap builds a new vector of buckets as large as the PMap, which the garbage collector
# then walks while it is young: the larger dict keeps those writes rare.
_RECENT_SLOTS = 32
_MIDDLE_SLOTS = 8192


class Chain(NamedTuple):
    """An agent's current run of identical tracked calls.

    ``key`` is ``argument_key`` of the calls' canonical arguments: compare keys, not texts.
    """

    tool: str
    key: str
    repeats: int


_EMPTY: PMap[str, Chain] = pmap()
_NO_MEMORY: PMap[str, Memory] = pmap()


@dataclass(frozen=True, slots=True, eq=False)
class GuardState:
    """The guard's immutable state: its config and one chain per agent that has one.

    Build the first state with ``GuardState.initial(config)``; every later one comes from
    ``reduce``.
    """

    config: GuardConfig
    # Never changed once the state is built: a new state gets new dicts.
    _recent: Mapping[str, Chain] = field(default_factory=dict)
    _middle: Mapping[str, Chain] = field(default_factory=dict)
    _rest: PMap[str, Chain] = _EMPTY
    _memory: PMap[str, Memory] = _NO_MEMORY

    @classmethod
    def initial(cls, config: GuardConfig | None = None) -> GuardState:
        """Return the state with no chains, for ``config`` (the default config if omitted)."""
        return cls(GuardConfig() if config is None else config)

    @classmethod
    def from_chains(
        cls,
        config: GuardConfig,
        chains: Mapping[str, Chain],
        memories: Mapping[str, Memory] | None = None,
    ) -> GuardState:
        """Return the state holding exactly ``chains`` (and the policies' ``memories``).

        The inverse of ``chains`` and ``memories``:
        ``GuardState.from_chains(s.config, s.chains, s.memories) == s``.
        """
        return cls(config, {}, {}, pmap(chains), pmap(memories or {}))

    @property
    def memories(self) -> PMap[str, Memory]:
        """What the opt-in policies remember, per agent (empty while they are all off)."""
        return self._memory

    def memory(self, agent: str) -> Memory:
        """Return what the policies remember about ``agent`` (the empty ``Memory`` if nothing)."""
        return self._memory.get(agent, EMPTY)

    @property
    def chains(self) -> PMap[str, Chain]:
        """Every agent's chain, keyed by agent id."""
        merged: PMap[str, Chain] = self._rest.update(self._middle, self._recent)
        return merged

    def chain(self, agent: str) -> Chain | None:
        """Return ``agent``'s chain, or ``None`` when it has none."""
        chain = self._recent.get(agent)
        if chain is None:
            chain = self._middle.get(agent)
            if chain is None:
                chain = self._rest.get(agent)
        return chain

    def __len__(self) -> int:
        """The number of agents holding a chain."""
        rest = self._rest
        return len(rest) + len({agent for agent in (*self._middle, *self._recent)} - set(rest))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GuardState):
            return NotImplemented
        return (
            self.config == other.config
            and self.chains == other.chains
            and self._memory == other._memory
        )

    def __hash__(self) -> int:
        return hash((self.config, self.chains, self._memory))

    def __repr__(self) -> str:
        memory = f", memories={dict(self._memory)!r}" if self._memory else ""
        return f"GuardState(config={self.config!r}, chains={dict(self.chains)!r}{memory})"

    def _with_chain(self, agent: str, chain: Chain) -> GuardState:
        """Return this state with ``agent``'s chain set."""
        recent, middle, rest = self._recent, self._middle, self._rest
        if agent in recent or len(recent) < _RECENT_SLOTS:
            recent = {**recent, agent: chain}
        elif len(middle) < _MIDDLE_SLOTS:
            middle = {**middle, **recent}
            recent = {agent: chain}
        else:
            rest = _written(rest, middle, recent)
            middle = {}
            recent = {agent: chain}
        return _new_state(self.config, recent, middle, rest, self._memory)

    def _with_memory(self, agent: str, memory: Memory) -> GuardState:
        """Return this state with ``agent``'s memory set (itself when nothing changed)."""
        if memory == self._memory.get(agent, EMPTY):
            return self
        memories = self._memory.set(agent, memory)
        return _new_state(self.config, self._recent, self._middle, self._rest, memories)

    def _without(self, agent: str) -> GuardState:
        """Return this state with no chain or memory for ``agent`` (itself when it had none)."""
        recent, middle, rest, memory = self._recent, self._middle, self._rest, self._memory
        if (
            agent not in recent
            and agent not in middle
            and agent not in rest
            and agent not in memory
        ):
            return self
        recent = {key: chain for key, chain in recent.items() if key != agent}
        middle = {key: chain for key, chain in middle.items() if key != agent}
        return _new_state(self.config, recent, middle, rest.discard(agent), memory.discard(agent))


def _written(rest: PMap[str, Chain], *layers: Mapping[str, Chain]) -> PMap[str, Chain]:
    """Return ``rest`` with every chain of ``layers`` written into it (later layers win)."""
    evolver = rest.evolver()
    for layer in layers:
        for agent, chain in layer.items():
            evolver[agent] = chain
    written: PMap[str, Chain] = evolver.persistent()
    return written


def _new_chain(tool: str, key: str, repeats: int) -> Chain:
    """``Chain(tool, key, repeats)``, without the named tuple's ``__new__`` in between."""
    chain: Chain = _tuple_new(Chain, (tool, key, repeats))
    return chain


_tuple_new: Callable[[type[Chain], tuple[str, str, int]], Chain] = tuple.__new__

# A state is built on every call: setting the slots directly skips the frozen dataclass's
# generic __init__, which costs more than the rest of a call's bookkeeping.
_object_new = object.__new__
_SetSlot = Callable[[GuardState, object], None]
_set_config: _SetSlot = vars(GuardState)["config"].__set__
_set_recent: _SetSlot = vars(GuardState)["_recent"].__set__
_set_middle: _SetSlot = vars(GuardState)["_middle"].__set__
_set_rest: _SetSlot = vars(GuardState)["_rest"].__set__
_set_memory: _SetSlot = vars(GuardState)["_memory"].__set__


def _new_state(
    config: GuardConfig,
    recent: Mapping[str, Chain],
    middle: Mapping[str, Chain],
    rest: PMap[str, Chain],
    memory: PMap[str, Memory],
) -> GuardState:
    state: GuardState = _object_new(GuardState)
    _set_config(state, config)
    _set_recent(state, recent)
    _set_middle(state, middle)
    _set_rest(state, rest)
    _set_memory(state, memory)
    return state


def reduce(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
    """Apply ``event`` to ``state``.

    Returns the next state and the reminders the event produced: none, or one with the
    default config; with the opt-in policies, the chain's, then a cycle's, then a budget's.
    Never raises for well-typed events and never mutates its inputs.
    """
    match event:
        case ToolCallFinished():
            return _on_call(state, event)
        case PromptSubmitted(agent=agent) | AgentDisposed(agent=agent):
            return state._without(agent), ()
        case _:
            assert_never(event)


def _on_call(state: GuardState, event: ToolCallFinished) -> tuple[GuardState, tuple[Reminder, ...]]:
    agent = event.agent
    config = state.config
    if agent is None:
        return state, ()
    if config.policies:
        return _on_call_with_policies(state, event, agent)
    tool = event.tool
    if not config.tracks(tool):
        return state, ()
    arguments = canonical_arguments(event.arguments)
    key = arguments if len(arguments) <= KEY_TEXT_LIMIT else argument_key(arguments)
    previous = state.chain(agent)
    if previous is not None and previous.tool == tool and previous.key == key:
        count = previous.repeats + 1
    else:
        count = 1
    after = state._with_chain(agent, _new_chain(tool, key, count))
    if count not in config.thresholds:
        return after, ()
    return after, _chain_reminders(config, agent, tool, arguments, count)


def _chain_reminders(
    config: GuardConfig, agent: str, tool: str, arguments: str, count: int
) -> tuple[Reminder, ...]:
    thresholds = config.thresholds
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
        result = _result_key(config, event.result)
        previous = state.chain(agent)
        same = previous is not None and previous.tool == tool and previous.key == key
        progressed = same and None not in (result, memory.result) and result != memory.result
        count = previous.repeats + 1 if same and not progressed else 1  # type: ignore[union-attr]  # same: not None
        state = state._with_chain(agent, Chain(tool, key, count))
        reminders.extend(_chain_reminders(config, agent, tool, arguments, count))
        if config.cycle_period:
            recent, runs, fired = cycle_of(config, memory, (tool, key))
            memory = replace(memory, recent=recent, runs=runs)
            if fired is not None:
                repeats, block = fired
                preview = config.arguments_preview_chars
                reminders.append(render_cycle(agent, arguments, repeats, block, preview))
        memory = replace(memory, result=result)
    if config.budgets:
        spent, reached = spend(config, memory.spent, tool)
        memory = replace(memory, spent=spent)
        if reached is not None:
            pattern, limit = config.budgets[reached]
            reminders.append(render_budget(agent, tool, arguments, limit, pattern))
    return state._with_memory(agent, memory), tuple(reminders)


def _result_key(config: GuardConfig, result: object) -> str | None:
    if config.progress != "result" or result is None:
        return None
    return argument_key(canonical_arguments(result))


def admit(state: GuardState, call: ToolCallFinished) -> Admit | Deny:
    """Say whether ``call`` may run, before it runs: ``Admit()``, or ``Deny(reason)``.

    ``call`` is the attempt as it would be reported (its ``denied`` and ``result`` are not
    looked at). It is denied when it would be the ``deny_at``-th identical call in a row
    (counted as if it made no progress), or when a budget its tool matches is already spent.
    Pure: ``state`` is never changed; a harness reports the refused attempt afterwards as a
    ``ToolCallFinished`` with ``denied=True``, which counts like any other.
    """
    agent, tool, config = call.agent, call.tool, state.config
    if agent is None:
        return ADMIT
    if config.deny_at is not None and config.tracks(tool):
        key = argument_key(canonical_arguments(call.arguments))
        previous = state.chain(agent)
        same = previous is not None and previous.tool == tool and previous.key == key
        count = previous.repeats + 1 if same else 1  # type: ignore[union-attr]  # same: not None
        if count >= config.deny_at:
            return Deny(deny_repeat_reason(tool, count))
    spent = state.memory(agent).spent
    for index, (pattern, limit) in enumerate(config.budgets):
        if spent and spent[index] >= limit and config.budget_matches(index, tool):
            return Deny(deny_budget_reason(tool, pattern, limit))
    return ADMIT
