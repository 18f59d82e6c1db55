"""The testing kit's state machine over the guard: each agent is a conversation of Agents SDK
input items, folded by the guard's model input filter and checked by its tool input guardrail,
call for call against the reference model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from agents import Agent, RunConfig, RunContextWrapper
from agents.run_config import CallModelData, ModelInputData
from agents.tool_context import ToolContext
from agents.tool_guardrails import ToolInputGuardrailData
from hypothesis import settings

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
from repeat_guard_openai_agents import RepeatGuard, reminder_message
from repeat_guard_testing import (
    HarnessMachine,
    failure_events,
    policy_configs,
)

from ._support import filtered


class Conversation:
    """One agent's run: the items its model is sent, and the run's configuration."""

    def __init__(self, guard: RepeatGuard, name: str) -> None:
        self.agent: Agent[Any] = Agent(name=name)
        self.config: RunConfig = guard.run_config()
        self.items: list[Any] = []
        self.calls = 0


def _message(context: RunContextWrapper[Any], error: Exception) -> str:
    return str(error)


class AgentsSdkHarness(HarnessMachine):
    configs = policy_configs()
    produced: tuple[Reminder, ...] = ()

    def start(self, config: GuardConfig) -> None:
        def recording(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
            state, self.produced = reduce(state, event)
            return state, self.produced

        self.guard = RepeatGuard(config, reducer=recording)
        # one event loop for the whole run: a new one per step would cost most of its time
        self.loop = asyncio.new_event_loop()
        self.conversations: dict[str, Conversation] = {}

    def teardown(self) -> None:
        self.loop.close()

    def _conversation(self, agent: str) -> Conversation:
        if agent not in self.conversations:
            self.conversations[agent] = Conversation(self.guard, agent)
        return self.conversations[agent]

    def admit(self, call: ToolCallFinished) -> bool | None:
        if call.agent is None:
            return None
        conversation = self._conversation(call.agent)
        context = ToolContext(
            context=None,
            tool_name=call.tool,
            tool_call_id=f"c{conversation.calls + 1}",
            tool_arguments=json.dumps(call.arguments),
            run_config=conversation.config,
        )
        data = ToolInputGuardrailData(context=context, agent=conversation.agent)
        verdict = self.loop.run_until_complete(self.guard.tool_input_guardrail.run(data))
        return verdict.behavior["type"] == "allow"

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if event.agent is None:
            return ()
        if isinstance(event, AgentDisposed):
            self.conversations.pop(event.agent, None)
            return ()
        conversation = self._conversation(event.agent)
        if isinstance(event, PromptSubmitted):
            conversation.items.append({"role": "user", "content": "Go on."})
        else:
            assert isinstance(event, ToolCallFinished)
            conversation.calls += 1
            call_id = f"c{conversation.calls}"
            arguments = json.dumps(event.arguments)
            conversation.items += [
                {
                    "type": "function_call",
                    "call_id": call_id,
                    "name": event.tool,
                    "arguments": arguments,
                },
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": self._output(conversation, call_id, event),
                },
            ]
        return self._fold(conversation)

    def _output(self, conversation: Conversation, call_id: str, event: ToolCallFinished) -> str:
        """The call's output: the result as text; a failure's through the guard's failure
        function, as the SDK calls it when the tool raises."""
        text = json.dumps(event.result)
        if not event.failed or event.denied:
            return text
        context = ToolContext(
            context=None,
            tool_name=event.tool,
            tool_call_id=call_id,
            tool_arguments=json.dumps(event.arguments),
            run_config=conversation.config,
        )
        answer = self.guard.failure_error_function(_message)(context, RuntimeError(text))
        assert not isinstance(answer, str)  # the guard's function is async
        return self.loop.run_until_complete(answer)

    def _fold(self, conversation: Conversation) -> tuple[Reminder, ...]:
        self.produced = ()
        data = CallModelData(
            ModelInputData(list(conversation.items), None), conversation.agent, None
        )
        filter_ = conversation.config.call_model_input_filter
        assert filter_ is not None
        sent: list[Any] = list(self.loop.run_until_complete(filtered(filter_, data)).input)
        # the reminders of the last event are exactly what follows the conversation's last item
        produced: tuple[Reminder, ...] = self.produced
        tail = sent[len(sent) - len(produced) :]
        assert tail == [reminder_message(reminder) for reminder in produced]
        # the produced reminders carry the conversation's id; the model knows the event's agent
        return tuple(replace(each, agent=conversation.agent.name) for each in produced)


# as the other adapters' model checks: each step runs the framework's own objects, and no
# deadline, since a loaded machine may take longer than Hypothesis's default for one
AgentsSdkHarness.TestCase.settings = settings(
    max_examples=40, stateful_step_count=40, deadline=None
)
TestAgentsSdkHarness = AgentsSdkHarness.TestCase


class AgentsSdkFailuresHarness(AgentsSdkHarness):
    """The same with results and failures drawn, over one agent's calls of two tools with one
    argument each: the same call comes back often, failing or not, so progress and the retry
    window decide most steps."""

    configs = policy_configs(refusals=False)
    events = failure_events()


AgentsSdkFailuresHarness.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None
)
TestAgentsSdkFailuresHarness = AgentsSdkFailuresHarness.TestCase
