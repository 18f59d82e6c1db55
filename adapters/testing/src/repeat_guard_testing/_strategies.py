"""Hypothesis strategies for the guard's configs and events.

The defaults are chosen to make the interesting cases common: few tools and argument values,
so identical calls repeat; keys in both orders and ``1`` beside ``1.0``, so canonicalisation
matters; tool names with ``.`` and ``*`` patterns, so wildcard escaping matters; more agents
than the reducer keeps outside its persistent map; prompts and disposals between calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    PromptSubmitted,
    ToolCallFinished,
)

__all__ = ["AGENTS", "ARGUMENTS", "PATTERNS", "TOOLS", "configs", "events", "tool_calls"]

AGENTS: tuple[str, ...] = tuple(f"agent-{n}" for n in range(12))
TOOLS: tuple[str, ...] = ("grep", "read", "todo_write", "mcp.fs", "mcpXfs")
ARGUMENTS: tuple[object, ...] = (
    {"p": "x"},
    {"p": "y"},
    {"q": [1, 2], "p": "x"},
    {"p": "x", "q": [1, 2.0]},
    "raw{",
)
PATTERNS: tuple[str, ...] = ("grep", "todo_*", "mcp.*", "*", "re*d")


def configs(patterns: Sequence[str] = PATTERNS) -> st.SearchStrategy[GuardConfig]:
    """Valid configs: 1 to 3 distinct thresholds in 2..7, up to two include and exclude patterns."""
    return st.builds(
        GuardConfig,
        thresholds=st.lists(st.integers(2, 7), min_size=1, max_size=3, unique=True).map(tuple),
        include=st.lists(st.sampled_from(patterns), max_size=2).map(tuple),
        exclude=st.lists(st.sampled_from(patterns), max_size=2).map(tuple),
        arguments_preview_chars=st.integers(1, 30),
    )


def tool_calls(
    agents: Sequence[str] = AGENTS,
    tools: Sequence[str] = TOOLS,
    arguments: Sequence[object] = ARGUMENTS,
) -> st.SearchStrategy[ToolCallFinished]:
    """Finished calls by one of ``agents`` (or, rarely, no agent), denied or not."""
    agent = st.one_of(st.sampled_from(agents), st.sampled_from(agents), st.none())
    return st.builds(
        ToolCallFinished,
        agent=agent,
        tool=st.sampled_from(tools),
        arguments=st.sampled_from(arguments),
        denied=st.booleans(),
    )


def events(
    agents: Sequence[str] = AGENTS,
    tools: Sequence[str] = TOOLS,
    arguments: Sequence[object] = ARGUMENTS,
) -> st.SearchStrategy[Event]:
    """Any event, mostly calls: a prompt or a disposal about one time in eight each."""
    call = tool_calls(agents, tools, arguments)
    agent = st.sampled_from(agents)
    return st.one_of(
        *[call] * 6,
        st.builds(PromptSubmitted, agent),
        st.builds(AgentDisposed, agent),
    )
