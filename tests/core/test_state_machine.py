"""Model check: ``reduce`` beside a dumb mutable model, over random interleavings.

The model is the obvious implementation: a dict from agent to (tool, arguments, count) and a
linear scan of the patterns. Invariants: both produce the same reminders, every earlier state
still holds exactly the chains it held, and the state holds chains only for agents that have
one in the model (so it never grows with agents that are gone).
"""

from __future__ import annotations

import re

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from repeat_guard import (
    AgentDisposed,
    Chain,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    canonical_arguments,
    reduce,
)

AGENTS = [f"agent-{n}" for n in range(12)]  # more than the reducer keeps outside its map
TOOLS = ["grep", "read", "todo_write", "mcp.fs", "mcpXfs"]
ARGUMENTS = [{"p": "x"}, {"p": "y"}, {"q": [1, 2], "p": "x"}, {"p": "x", "q": [1, 2.0]}, "raw{"]
PATTERNS = ["grep", "todo_*", "mcp.*", "*", "re*d"]

configs = st.builds(
    GuardConfig,
    thresholds=st.lists(st.integers(2, 7), min_size=1, max_size=3, unique=True).map(tuple),
    include=st.lists(st.sampled_from(PATTERNS), max_size=2).map(tuple),
    exclude=st.lists(st.sampled_from(PATTERNS), max_size=2).map(tuple),
    arguments_preview_chars=st.integers(1, 30),
)


def matches(pattern: str, tool: str) -> bool:
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), tool) is not None


class Model:
    def __init__(self, config: GuardConfig) -> None:
        self.config = config
        self.chains: dict[str, tuple[str, str, int]] = {}

    def tracks(self, tool: str) -> bool:
        included = not self.config.include or any(matches(p, tool) for p in self.config.include)
        return included and not any(matches(p, tool) for p in self.config.exclude)

    def call(self, agent: str | None, tool: str, arguments: object) -> list[tuple[str, int, str]]:
        if agent is None or not self.tracks(tool):
            return []
        key = canonical_arguments(arguments)
        tool_, key_, count = self.chains.get(agent, ("", "", 0))
        count = count + 1 if (tool_, key_) == (tool, key) else 1
        self.chains[agent] = (tool, key, count)
        thresholds = sorted(self.config.thresholds)
        if count not in thresholds:
            return []
        return [(tool, count, "gentle" if count == thresholds[0] else "detailed")]


class GuardMachine(RuleBasedStateMachine):
    state: GuardState
    model: Model
    history: list[tuple[GuardState, dict[str, Chain]]]

    @initialize(config=configs)
    def start(self, config: GuardConfig) -> None:
        self.state = GuardState.initial(config)
        self.model = Model(config)
        self.history = []

    def step(
        self, event: ToolCallFinished | PromptSubmitted | AgentDisposed
    ) -> list[tuple[str, int, str]]:
        self.history.append((self.state, dict(self.state.chains)))
        self.state, reminders = reduce(self.state, event)
        return [(r.tool, r.count, r.form) for r in reminders]

    @rule(
        agent=st.sampled_from(AGENTS),
        tool=st.sampled_from(TOOLS),
        arguments=st.sampled_from(ARGUMENTS),
        denied=st.booleans(),
    )
    def call(self, agent: str, tool: str, arguments: object, denied: bool) -> None:
        got = self.step(ToolCallFinished(agent, tool, arguments, denied))
        assert got == self.model.call(agent, tool, arguments)

    @rule(tool=st.sampled_from(TOOLS))
    def agentless_call(self, tool: str) -> None:
        before = self.state
        assert self.step(ToolCallFinished(None, tool, {})) == []
        assert self.state is before

    @rule(agent=st.sampled_from(AGENTS))
    def prompt(self, agent: str) -> None:
        assert self.step(PromptSubmitted(agent)) == []
        self.model.chains.pop(agent, None)

    @rule(agent=st.sampled_from(AGENTS))
    def dispose(self, agent: str) -> None:
        assert self.step(AgentDisposed(agent)) == []
        self.model.chains.pop(agent, None)

    @invariant()
    def chains_agree_with_the_model(self) -> None:
        if not hasattr(self, "state"):
            return
        chains = {agent: tuple(chain) for agent, chain in self.state.chains.items()}
        assert chains == self.model.chains
        assert len(self.state) == len(self.model.chains)

    @invariant()
    def earlier_states_are_unchanged(self) -> None:
        for state, chains in getattr(self, "history", [])[-20:]:
            assert dict(state.chains) == chains


GuardMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=60, deadline=None)
test_guard_machine = GuardMachine.TestCase
