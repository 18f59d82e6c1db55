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

Representation (a performance choice, invisible through the API): the few most recently
active agents' chains sit in a short tuple, most recent first, and only the rest live in a
``PMap``. A loop of a handful of agents then never pays for a ``PMap`` update, while a state
over many agents stays persistent. Equality and hashing look at the merged mapping only, so two
states with the same config and chains are equal however they were reached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple, assert_never

from pyrsistent import PMap, pmap

from ._canonical import argument_key, canonical_arguments
from ._config import GuardConfig
from ._events import AgentDisposed, Event, PromptSubmitted, ToolCallFinished
from ._reminders import Form, Reminder, render_reminder

__all__ = ["Chain", "GuardState", "reduce"]

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


@dataclass(frozen=True, slots=True, eq=False)
class GuardState:
    """The guard's immutable state: its config and one chain per agent that has one.

    Build the first state with ``GuardState.initial(config)``; every later one comes from
    ``reduce``.
    """

    config: GuardConfig
    _recent: tuple[_Entry, ...] = ()
    _rest: PMap[str, Chain] = _EMPTY

    @classmethod
    def initial(cls, config: GuardConfig | None = None) -> GuardState:
        """Return the state with no chains, for ``config`` (the default config if omitted)."""
        return cls(GuardConfig() if config is None else config)

    @classmethod
    def from_chains(cls, config: GuardConfig, chains: Mapping[str, Chain]) -> GuardState:
        """Return the state holding exactly ``chains`` (agent id to chain), for ``config``.

        The inverse of ``chains``: ``GuardState.from_chains(s.config, s.chains) == s``.
        """
        return cls(config, (), pmap(chains))

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
        return self.config == other.config and self.chains == other.chains

    def __hash__(self) -> int:
        return hash((self.config, self.chains))

    def __repr__(self) -> str:
        return f"GuardState(config={self.config!r}, chains={dict(self.chains)!r})"

    def _with_chain(self, agent: str, chain: Chain) -> GuardState:
        """Return this state with ``agent``'s chain set and ``agent`` the most recent."""
        recent = self._recent
        if recent and recent[0][0] == agent:
            return GuardState(self.config, ((agent, chain), *recent[1:]), self._rest)
        rest = self._rest
        others = tuple(entry for entry in recent if entry[0] != agent)
        if len(others) == len(recent) and agent in rest:
            rest = rest.discard(agent)
        if len(others) >= _RECENT_SLOTS:
            evicted_agent, evicted_chain = others[-1]
            rest = rest.set(evicted_agent, evicted_chain)
            others = others[:-1]
        return GuardState(self.config, ((agent, chain), *others), rest)

    def _without(self, agent: str) -> GuardState:
        """Return this state with no chain for ``agent`` (itself when it had none)."""
        recent = tuple(entry for entry in self._recent if entry[0] != agent)
        if len(recent) != len(self._recent):
            return GuardState(self.config, recent, self._rest)
        if agent in self._rest:
            return GuardState(self.config, recent, self._rest.remove(agent))
        return self


def reduce(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
    """Apply ``event`` to ``state``.

    Returns the next state and the reminders the event produced (empty, or exactly one). Never
    raises for well-typed events and never mutates its inputs.
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
    if agent is None or not config.tracks(event.tool):
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
    thresholds = config.thresholds
    if count not in thresholds:
        return after, ()
    form: Form = "gentle" if count == thresholds[0] else "detailed"
    reminder = render_reminder(agent, tool, arguments, count, form, config.arguments_preview_chars)
    return after, (reminder,)
