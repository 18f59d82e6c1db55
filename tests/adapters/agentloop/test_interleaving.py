"""Any interleaving of a few agents gives each the reminders the core gives it alone.

Hypothesis draws each agent's calls (from a tiny alphabet, so repeats are common), its prompt
breaks, and how many times every tool call yields to the event loop; the loop's reminders and
the guard's final chains must equal ``repeat_guard.reduce`` run over each agent's own events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from repeat_guard import GuardConfig, GuardState, PromptSubmitted, ToolCallFinished, reduce
from repeat_guard_agentloop import (
    Agent,
    AgentLoop,
    ContextMessage,
    ModelTurn,
    ScriptedModel,
    ToolCall,
    ToolRegistry,
)
from repeat_guard_pluggy import RepeatGuardPlugin

from ._support import call

CONFIG = GuardConfig(thresholds=(2, 3, 5), exclude=("note",))

calls = st.tuples(st.sampled_from(["grep", "read", "note"]), st.integers(0, 1))
prompts = st.lists(st.lists(calls, max_size=8), min_size=1, max_size=3)


def turns_of(agent_prompts: list[list[tuple[str, int]]]) -> list[ModelTurn]:
    turns: list[ModelTurn] = []
    for steps in agent_prompts:
        turns.extend(call(tool, {"n": n}) for tool, n in steps)
        turns.append("done")
    return turns


def run(
    scripts: list[list[list[tuple[str, int]]]], yields: list[int]
) -> tuple[AgentLoop, RepeatGuardPlugin]:
    """Run one agent per script, every tool call yielding as ``yields`` says."""
    schedule: Iterator[int] = iter(yields * 100)

    async def tool(arguments: object) -> str:
        for _ in range(next(schedule, 0)):
            await asyncio.sleep(0)
        return "ok"

    registry = ToolRegistry()
    for name in ("grep", "read", "note"):
        registry.register(name, tool)

    async def scenario() -> AgentLoop:
        loop = AgentLoop(registry, guard=CONFIG)
        agents = [loop.spawn("sub", ScriptedModel(turns_of(s))) for s in scripts]
        for agent, agent_prompts in zip(agents, scripts, strict=True):
            for _ in agent_prompts:
                loop.followup(agent, "go")
        await loop.idle()
        return loop

    loop = asyncio.run(scenario())
    assert loop.guard is not None
    return loop, loop.guard


def check_agent(agent: Agent, plugin: RepeatGuardPlugin) -> None:
    """``agent``'s reminders and guard chain equal the core's over its own events."""
    state = GuardState.initial(CONFIG)
    want: list[tuple[str, str]] = []
    got: list[tuple[str, str]] = []
    for event in agent.history:
        if event.kind == "user_message":
            state, _ = reduce(state, PromptSubmitted(agent.id))
        elif isinstance(event, ToolCall):
            finished = ToolCallFinished(agent.id, event.tool, event.arguments)
            state, reminders = reduce(state, finished)
            want.extend((event.call_id, reminder.text) for reminder in reminders)
        elif isinstance(event, ContextMessage):
            got.append((event.call_id, event.text))
    assert got == want
    guard_id = plugin.agent_id(agent)
    guard_chain = None if guard_id is None else plugin.state.chain(guard_id)
    assert guard_chain == state.chain(agent.id)


@settings(max_examples=60, deadline=None)
@given(
    scripts=st.lists(prompts, min_size=2, max_size=4),
    yields=st.lists(st.integers(0, 3), min_size=1, max_size=40),
)
def test_every_interleaving_matches_the_core(
    scripts: list[list[list[tuple[str, int]]]], yields: list[int]
) -> None:
    loop, plugin = run(scripts, yields)
    assert len(loop.agents) == len(scripts)
    for agent in loop.agents:
        check_agent(agent, plugin)
