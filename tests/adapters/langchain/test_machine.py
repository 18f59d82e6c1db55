"""The testing kit's state machine over the LangChain middleware: each agent is a thread of
messages, with the guard's stored state in the thread's own state. A call is a model turn
asking for it, the tool's answer (through ``wrap_tool_call``, which may refuse it), then the
``before_model`` hook that folds them; a prompt is a user's message and the hook. Call for call
against the reference model.

LangChain's tool calls carry argument objects, so the raw-string arguments are left out; the
tool answers the same every time, as the drawn calls carry no result. A second machine draws
results and failures: the tool answers with the drawn result, its status ``error`` when the
call is drawn failed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from hypothesis import settings
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from repeat_guard import AgentDisposed, Event, GuardConfig, PromptSubmitted, Reminder
from repeat_guard import ToolCallFinished as Finished
from repeat_guard_langchain import PLUGIN_NAME, STATE_KEY, RepeatGuardMiddleware
from repeat_guard_testing import (
    ARGUMENTS,
    HarnessMachine,
    events,
    failure_events,
    policy_configs,
)

from ._support import carried


class Thread:
    """One agent's thread: its messages and the guard's stored state."""

    def __init__(self) -> None:
        self.messages: list[AnyMessage] = []
        self.stored: object = None

    def state(self) -> dict[str, Any]:
        return {"messages": list(self.messages), STATE_KEY: self.stored}


class LangChainHarness(HarnessMachine):
    configs = policy_configs()
    events = events(arguments=[each for each in ARGUMENTS if isinstance(each, dict)])

    def start(self, config: GuardConfig) -> None:
        self.guard = RepeatGuardMiddleware(config)
        self.threads: dict[str, Thread] = {}
        self.produced: tuple[Reminder, ...] = ()
        self.ids = 0

    def _id(self) -> str:
        self.ids += 1
        return f"m{self.ids}"

    def _before_model(self, agent: str, thread: Thread) -> tuple[Reminder, ...]:
        update = self.guard.before_model(thread.state(), None)  # type: ignore[arg-type]  # unused
        assert update is not None
        thread.stored = update[STATE_KEY]
        added: list[AnyMessage] = update.get("messages", [])
        thread.messages += added
        return tuple(replace(carried(message), agent=agent) for message in added)

    def answer(self, call: Finished, call_id: str) -> ToolMessage:
        """The tool's answer to ``call``: the same every time."""
        return ToolMessage("done", tool_call_id=call_id, name=call.tool)

    def admit(self, call: Finished) -> bool | None:
        # the call, its answer and the fold: run them here, report in deliver
        self.produced = ()
        if call.agent is None:  # a thread is always some agent's
            return None
        thread = self.threads.setdefault(call.agent, Thread())
        call_id = self._id()
        asked = ToolCall(name=call.tool, args=dict(call.arguments), id=call_id)  # type: ignore[call-overload]  # a drawn dict
        thread.messages.append(AIMessage("", id=self._id(), tool_calls=[asked]))

        def handler(request: ToolCallRequest) -> ToolMessage:
            return self.answer(call, call_id)

        request = ToolCallRequest(asked, None, thread.state(), None)  # type: ignore[arg-type]  # unused
        answer = self.guard.wrap_tool_call(request, handler)
        assert isinstance(answer, ToolMessage)
        answer.id = self._id()
        thread.messages.append(answer)
        self.produced = self._before_model(call.agent, thread)
        return answer.additional_kwargs.get("lc_source") != PLUGIN_NAME

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if isinstance(event, Finished):
            return self.produced
        if isinstance(event, AgentDisposed):
            self.threads.pop(event.agent, None)  # the thread is gone: a later one starts afresh
            return ()
        assert isinstance(event, PromptSubmitted)
        thread = self.threads.setdefault(event.agent, Thread())
        thread.messages.append(HumanMessage("Go on.", id=self._id()))
        return self._before_model(event.agent, thread)


LangChainHarness.TestCase.settings = settings(
    max_examples=30, stateful_step_count=40, deadline=None
)
test_langchain_harness = LangChainHarness.TestCase


class LangChainFailuresHarness(LangChainHarness):
    """The same with results and failures drawn, over one agent's calls of two tools with one
    argument each (the kit's narrow breadth): the same call comes back often, failing or not,
    so progress and the retry window decide most steps. No refusals: a refused call's drawn
    result is never read."""

    configs = policy_configs(refusals=False)
    events = failure_events()

    def answer(self, call: Finished, call_id: str) -> ToolMessage:
        status = "error" if call.failed else "success"
        text = json.dumps(call.result)
        return ToolMessage(text, tool_call_id=call_id, name=call.tool, status=status)


LangChainFailuresHarness.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None
)
test_langchain_failures_harness = LangChainFailuresHarness.TestCase
