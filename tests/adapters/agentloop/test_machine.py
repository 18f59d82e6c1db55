"""The testing kit's state machine over the agent loop: every agent is a live turn of the loop
whose model is fed one tool call at a time, so each call runs the loop's whole pipeline (the
guard's pre-execute answer, the tool, the post-execute decision); a prompt ends the turn and
starts the next, a disposal ends it and retires the agent. Call for call against the model.

The tool answers the same for every call, as the drawn calls carry no result: a refusal's
text and the tool's answer are then never progress, as the model, with no results, assumes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace

from hypothesis import settings

from repeat_guard import AgentDisposed, Event, GuardConfig, PromptSubmitted, Reminder
from repeat_guard import ToolCallFinished as Finished
from repeat_guard_agentloop import (
    Agent,
    AgentLoop,
    ContextMessage,
    ModelTurn,
    ToolCallRequest,
    ToolRegistry,
    ToolResult,
    ToolSpec,
)
from repeat_guard_agentloop import Event as LogEvent
from repeat_guard_testing import TOOLS, HarnessMachine, policy_configs


async def _done(arguments: object) -> str:
    return "done"


class FedModel:
    """A model whose next turn is whatever the test puts in ``turns``."""

    def __init__(self) -> None:
        self.turns: asyncio.Queue[ModelTurn] = asyncio.Queue()
        self.waiting = asyncio.Event()

    async def complete(self, messages: Sequence[LogEvent], tools: Sequence[ToolSpec]) -> ModelTurn:
        self.waiting.set()
        return await self.turns.get()


class Live:
    """One agent of the loop with its model and its running turn."""

    def __init__(self, loop: AgentLoop, name: str) -> None:
        self.model = FedModel()
        self.agent: Agent = loop.spawn(name, self.model)
        self.turn = loop.followup(self.agent, "Go.")


class AgentLoopHarness(HarnessMachine):
    configs = policy_configs()

    def start(self, config: GuardConfig) -> None:
        self.events_loop = asyncio.new_event_loop()
        registry = ToolRegistry()
        for tool in TOOLS:
            registry.register(tool, _done)
        self.loop = AgentLoop(registry, guard=config)
        self.live: dict[str, Live] = {}
        self.produced: tuple[Reminder, ...] = ()
        self.calls = 0

    def teardown(self) -> None:
        for name in list(self.live):
            self._end_turn(name)
        self.events_loop.close()

    def _run(self, awaitable: object) -> object:
        return self.events_loop.run_until_complete(awaitable)  # type: ignore[arg-type]  # awaited

    def _agent(self, name: str) -> Live:
        if name not in self.live:

            async def spawn() -> Live:
                live = Live(self.loop, name)
                await live.model.waiting.wait()  # the turn's first model request
                return live

            self.live[name] = self._run(spawn())  # type: ignore[assignment]  # a Live
        return self.live[name]

    def _feed(self, live: Live, turn: ModelTurn) -> None:
        live.model.waiting.clear()
        live.model.turns.put_nowait(turn)
        self._run(live.model.waiting.wait())

    def _end_turn(self, name: str) -> Live:
        live = self.live[name]
        live.model.turns.put_nowait("Done.")
        self._run(live.turn)
        return live

    def admit(self, call: Finished) -> bool | None:
        # the loop asks, runs and counts in one pipeline: run it here, report in deliver
        self.calls += 1
        if call.agent is None:
            self._run(self.loop.execute_direct(call.tool, call.arguments))
            self.produced = ()
            return None
        live = self._agent(call.agent)
        seen = len(live.agent.history)
        self._feed(live, (ToolCallRequest(call.tool, call.arguments, f"c{self.calls}"),))
        new = live.agent.history[seen:]
        (result,) = [event for event in new if isinstance(event, ToolResult)]
        reminders = [e.reminder for e in new if isinstance(e, ContextMessage) and e.reminder]
        # the guard names the agent object by its own id; the model knows it by the event's
        assert self.loop.guard is not None
        assert all(r.agent == self.loop.guard.agent_id(live.agent) for r in reminders)
        self.produced = tuple(replace(reminder, agent=call.agent) for reminder in reminders)
        return not result.denied

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if isinstance(event, Finished):
            return self.produced
        if event.agent not in self.live:
            return ()  # an agent the loop never ran: nothing to prompt or retire
        live = self._end_turn(event.agent)
        if isinstance(event, AgentDisposed):
            self._run(self.loop.dispose(live.agent))
            del self.live[event.agent]  # a later call of that name is a new agent
        else:
            assert isinstance(event, PromptSubmitted)

            async def prompt() -> None:
                live.model.waiting.clear()
                live.turn = self.loop.followup(live.agent, "Go on.")
                await live.model.waiting.wait()

            self._run(prompt())
        return ()

    def check(self) -> None:
        assert self.loop.guard is not None
        assert self.loop.guard.known_agents == len(self.live)


AgentLoopHarness.TestCase.settings = settings(
    max_examples=30, stateful_step_count=40, deadline=None
)
test_agent_loop_harness = AgentLoopHarness.TestCase
