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

Representation (a performance choice, invisible through the API): the few most recently
active agents' chains sit in a short tuple, most recent first, and only the rest live in a
``PMap``. A loop of a handful of agents then never pays for a ``PMap`` update, while a state
over many agents stays persistent. Equality and hashing look at the merged mapping only, so two
states with the same config and chains are equal however they were reached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple, assert_never

from pyrsistent import PMap, pmap

from ._canonical import argument_key, canonical_arguments
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

# How many agents' chains stay outside the PMap. Small: lookups scan this tuple.
_RECENT_SLOTS = 8


class Chain(NamedTuple):
    """An agent's current run of identical tracked calls.

    ``key`` is ``argument_key`` of the calls' canonical arguments: compare keys, not texts.
    """

    tool: str
    key: str
    repeats: int


_Entry = tuple[str, Chain]
_EMPTY: PMap[str, Chain] = pmap()
_NO_MEMORY: PMap[str, Memory] = pmap()


@dataclass(frozen=True, slots=True, eq=False)
class GuardState:
    """The guard's immutable state: its config and one chain per agent that has one.

    Build the first state with ``GuardState.initial(config)``; every later one comes from
    ``reduce``.
    """

    config: GuardConfig
    _recent: tuple[_Entry, ...] = ()
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
        return cls(config, (), pmap(chains), pmap(memories or {}))

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
        merged: PMap[str, Chain] = self._rest.update(dict(self._recent))
        return merged

    def chain(self, agent: str) -> Chain | None:
        """Return ``agent``'s chain, or ``None`` when it has none."""
        for key, chain in self._recent:
            if key == agent:
                return chain
        return self._rest.get(agent)

    def __len__(self) -> int:
        """The number of agents holding a chain."""
        return len(self._recent) + len(self._rest)

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
        """Return this state with ``agent``'s chain set and ``agent`` the most recent."""
        recent = self._recent
        if recent and recent[0][0] == agent:
            return GuardState(self.config, ((agent, chain), *recent[1:]), self._rest, self._memory)
        rest = self._rest
        others = tuple(entry for entry in recent if entry[0] != agent)
        if len(others) == len(recent) and agent in rest:
            rest = rest.discard(agent)
        if len(others) >= _RECENT_SLOTS:
            evicted_agent, evicted_chain = others[-1]
            rest = rest.set(evicted_agent, evicted_chain)
            others = others[:-1]
        return GuardState(self.config, ((agent, chain), *others), rest, self._memory)

    def _with_memory(self, agent: str, memory: Memory) -> GuardState:
        """Return this state with ``agent``'s memory set (itself when nothing changed)."""
        if memory == self._memory.get(agent, EMPTY):
            return self
        return GuardState(self.config, self._recent, self._rest, self._memory.set(agent, memory))

    def _without(self, agent: str) -> GuardState:
        """Return this state with no chain or memory for ``agent`` (itself when it had none)."""
        state = self
        if agent in self._memory:
            state = GuardState(self.config, self._recent, self._rest, self._memory.remove(agent))
        recent = tuple(entry for entry in state._recent if entry[0] != agent)
        if len(recent) != len(state._recent):
            return GuardState(state.config, recent, state._rest, state._memory)
        if agent in state._rest:
            return GuardState(state.config, recent, state._rest.remove(agent), state._memory)
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
    if not config.tracks(event.tool):
        return state, ()
    tool = event.tool
    arguments = canonical_arguments(event.arguments)
    key = argument_key(arguments)
    previous = state.chain(agent)
    if previous is not None and previous.tool == tool and previous.key == key:
        count = previous.repeats + 1
    else:
        count = 1
    after = state._with_chain(agent, Chain(tool, key, count))
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
