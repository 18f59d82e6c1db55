"""The testing kit's state machine over the hook provider: each agent is a real Strands agent
whose conversation is folded by the guard's model-input middleware, and whose calls are asked
about through the guard's ``BeforeToolCallEvent`` callback, call for call against the
reference model. A second machine draws results and failures: each call's ``toolResult`` carries
the drawn result as text, its status ``error`` when the call is drawn failed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from hypothesis import settings
from strands import Agent
from strands.hooks import BeforeToolCallEvent, HookRegistry
from strands.middleware.stages import InvokeModelContext

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    reduce,
)
from repeat_guard_strands import RepeatGuard, reminder_block
from repeat_guard_testing import (
    HarnessMachine,
    failure_events,
    policy_configs,
)

from ._support import LoopingModel


class StrandsHarness(HarnessMachine):
    configs = policy_configs()
    produced: tuple[Reminder, ...] = ()

    def start(self, config: GuardConfig) -> None:
        def recording(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
            state, self.produced = reduce(state, event)
            return state, self.produced

        self.guard = RepeatGuard(config, reducer=recording)
        self.registry = HookRegistry()
        self.guard.register_hooks(self.registry)
        self.agents: dict[str, Agent] = {}
        # each agent's invocation state: a disposed agent's goes with it
        self.invocations: dict[str, dict[str, Any]] = {}
        self.calls = 0

    def _agent(self, name: str) -> Agent:
        if name not in self.agents:
            self.agents[name] = Agent(model=LoopingModel(), name=name, callback_handler=None)
        return self.agents[name]

    def admit(self, call: ToolCallFinished) -> bool | None:
        if call.agent is None:
            return None
        use: Any = {"toolUseId": f"c{self.calls + 1}", "name": call.tool, "input": call.arguments}
        event = BeforeToolCallEvent(
            agent=self._agent(call.agent),
            selected_tool=None,
            tool_use=use,
            invocation_state=self.invocations.setdefault(call.agent, {}),
        )
        self.registry.invoke_callbacks(event)
        return event.cancel_tool is False

    def result(self, call: ToolCallFinished) -> dict[str, Any]:
        """The ``toolResult`` of ``call`` but its id: the same every time."""
        return {"status": "success", "content": []}

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if event.agent is None:
            return ()
        if isinstance(event, AgentDisposed):
            self.agents.pop(event.agent, None)
            self.invocations.pop(event.agent, None)
            return ()
        agent = self._agent(event.agent)
        if isinstance(event, PromptSubmitted):
            agent.messages.append({"role": "user", "content": [{"text": "Go on."}]})
        else:
            assert isinstance(event, ToolCallFinished)
            self.calls += 1
            use: Any = {"toolUseId": f"c{self.calls}", "name": event.tool, "input": event.arguments}
            answer: Any = {"toolUseId": f"c{self.calls}", **self.result(event)}
            agent.messages += [
                {"role": "assistant", "content": [{"toolUse": use}]},
                {"role": "user", "content": [{"toolResult": answer}]},
            ]
        return self._fold(agent)

    def _fold(self, agent: Agent) -> tuple[Reminder, ...]:
        self.produced = ()
        context = InvokeModelContext(
            agent=agent,
            messages=list(agent.messages),
            system_prompt=None,
            tool_specs=[],
            tool_choice=None,
            invocation_state=self.invocations.setdefault(agent.name, {}),
            model=agent.model,
        )
        sent = self.guard.before_model(context).messages
        produced: tuple[Reminder, ...] = self.produced
        # the last event's reminders are exactly the blocks added to the last message
        added = sent[-1]["content"][len(agent.messages[-1]["content"]) :]
        assert added == [reminder_block(reminder) for reminder in produced]
        return tuple(replace(each, agent=agent.name) for each in produced)


# as the other adapters' model checks: each step runs the framework's own objects, and no
# deadline, since a loaded machine may take longer than Hypothesis's default for one
StrandsHarness.TestCase.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
TestStrandsHarness = StrandsHarness.TestCase


class StrandsFailuresHarness(StrandsHarness):
    """The same with results and failures drawn, over one agent's calls of two tools with one
    argument each (the kit's narrow breadth): the same call comes back often, failing or not,
    so progress and the retry window decide most steps. No refusals: a refused call's drawn
    result is never read."""

    configs = policy_configs(refusals=False)
    events = failure_events()

    def result(self, call: ToolCallFinished) -> dict[str, Any]:
        status = "error" if call.failed else "success"
        return {"status": status, "content": [{"text": json.dumps(call.result)}]}


StrandsFailuresHarness.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None
)
TestStrandsFailuresHarness = StrandsFailuresHarness.TestCase
