"""Many agents, one guard: the loop's reminders equal the core run sequentially per agent.

50 agents make 200 tool calls each (two prompts of 100 steps) on one event loop, sharing one
plugin manager and one guard. Tools yield a seeded-random number of times, so the agents'
calls interleave unpredictably; each agent's reminders and final chain must still be exactly
what ``repeat_guard.reduce`` gives over that agent's own events in order.
"""

from __future__ import annotations

import asyncio
import random
from itertools import pairwise

from repeat_guard import (
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    reduce,
)
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

AGENTS = 50
STEPS = 200
PROMPTS = 2
TOOLS = ("grep", "read", "todo_write")
CONFIG = GuardConfig(exclude=("todo_write",))


def script_for(rng: random.Random) -> list[ModelTurn]:
    """``STEPS`` calls split over ``PROMPTS`` prompts; most calls repeat the one before."""
    turns: list[ModelTurn] = []
    previous = call("grep", {"q": 0})
    for step in range(STEPS):
        if rng.random() > 0.7:
            tool = rng.choice(TOOLS)
            previous = call(tool, {"q": rng.randrange(3), "opts": {"b": 1, "a": step % 2}})
        turns.append(previous)
        if (step + 1) % (STEPS // PROMPTS) == 0:
            turns.append(f"answer {step}")
    return turns


def expected(agent_id: str, events: list[Event]) -> tuple[list[tuple[int, str]], GuardState]:
    """The core's reminders (call ordinal, text) and final state over ``events``, in order."""
    state = GuardState.initial(CONFIG)
    found: list[tuple[int, str]] = []
    calls = 0
    for event in events:
        state, reminders = reduce(state, event)
        calls += isinstance(event, ToolCallFinished)
        found.extend((calls, reminder.text) for reminder in reminders)
    return found, state


def observed(agent: Agent) -> tuple[list[tuple[int, str]], list[Event]]:
    """The loop's reminders (call ordinal, text) for ``agent``, and its events for the core."""
    ordinal: dict[str, int] = {}
    found: list[tuple[int, str]] = []
    events: list[Event] = []
    for event in agent.history:
        if event.kind == "user_message":
            events.append(PromptSubmitted(agent.id))
        elif isinstance(event, ToolCall):
            ordinal[event.call_id] = len(ordinal) + 1
            events.append(ToolCallFinished(agent.id, event.tool, event.arguments))
        elif isinstance(event, ContextMessage):
            found.append((ordinal[event.call_id], event.text))
    return found, events


def test_fifty_concurrent_agents_match_the_core_run_sequentially() -> None:
    rng = random.Random(20240601)
    registry = ToolRegistry()

    async def tool(arguments: object) -> str:
        for _ in range(rng.randrange(4)):
            await asyncio.sleep(0)
        return "ok"

    for name in TOOLS:
        registry.register(name, tool)

    async def scenario() -> tuple[list[Agent], RepeatGuardPlugin]:
        loop = AgentLoop(registry, guard=CONFIG)
        agents = [loop.spawn(f"sub{n}", ScriptedModel(script_for(rng))) for n in range(AGENTS)]
        for _ in range(PROMPTS):
            for agent in agents:
                loop.followup(agent, "continue")
        await loop.idle()
        switches = sum(a.agent != b.agent for a, b in pairwise(loop.log))
        assert switches > AGENTS * STEPS // 2  # the agents' calls really interleaved
        assert loop.guard is not None
        return agents, loop.guard

    agents, plugin = asyncio.run(scenario())
    total = 0
    for agent in agents:
        found, events = observed(agent)
        assert sum(isinstance(e, ToolCallFinished) for e in events) == STEPS
        want, final = expected(agent.id, events)
        assert found == want
        guard_id = plugin.agent_id(agent)
        assert guard_id is not None
        assert plugin.state.chain(guard_id) == final.chain(agent.id)
        total += len(found)
    assert total > AGENTS  # the scripts produced plenty of reminders to compare
