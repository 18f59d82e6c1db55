"""The testing kit's state machine over the pluggy plugin: every event goes through a plugin
manager's hooks (pre-execute, post-execute, prompt, dispose), call for call against the
reference model."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from hypothesis import settings
from hypothesis import strategies as st

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
)
from repeat_guard_pluggy import ToolExecution, ToolResult
from repeat_guard_testing import RESULTS, HarnessMachine, events, policy_configs, tool_calls

from ._support import Agent, guarded


class PluggyHarness(HarnessMachine):
    configs = policy_configs()
    # a host reports a call's result with the call: no ToolCallReturned to translate
    events = st.one_of(events(), tool_calls(results=RESULTS))

    def start(self, config: GuardConfig) -> None:
        self.pm, self.guard = guarded(config=config)
        self.agents: dict[str, Agent] = {}
        self.calls = 0

    def _agent(self, name: str | None) -> Agent | None:
        if name is None:
            return None
        return self.agents.setdefault(name, Agent(name))

    def admit(self, call: ToolCallFinished) -> bool:
        self.calls += 1
        execution = ToolExecution(
            self._agent(call.agent), f"c{self.calls}", call.tool, call.arguments
        )
        reason: str | None = self.pm.hook.tool_pre_execute(execution=execution)
        return reason is None

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if isinstance(event, PromptSubmitted):
            self.pm.hook.agent_prompt_submit(agent=self._agent(event.agent), prompt="Go on.")
            return ()
        if isinstance(event, AgentDisposed):
            self.pm.hook.agent_dispose(agent=self._agent(event.agent))
            del self.agents[event.agent]  # a later call of that name is a new agent object
            return ()
        assert isinstance(event, ToolCallFinished)
        agent = self._agent(event.agent)
        execution = ToolExecution(
            agent, f"c{self.calls}", event.tool, event.arguments, event.denied
        )
        decision = self.pm.hook.tool_post_execute(
            execution=execution, result=ToolResult(event.result)
        )
        reminders = [c.reminder for c in decision.contexts if c.reminder] if decision else []
        # the guard names the agent object by its own id; the model knows it by the event's
        assert all(reminder.agent == self.guard.agent_id(agent) for reminder in reminders)
        return [replace(reminder, agent=event.agent) for reminder in reminders]

    def check(self) -> None:
        # the guard knows no agent object but the live ones (a disposed one is forgotten)
        known = [agent for agent in self.agents.values() if self.guard.agent_id(agent)]
        assert self.guard.known_agents == len(known)


PluggyHarness.TestCase.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
test_pluggy_harness = PluggyHarness.TestCase
