"""The testing kit's state machine over the pydantic-ai capability: each agent is one run, its
calls go through ``wrap_tool_execute`` and its prompts reach ``before_model_request`` in the
run's history, call for call against the reference model.

A refused call's tool does not run, so it has no result: the calls are drawn without results,
which the refusal could not tell apart. A second machine draws results and failures, and no
refusals: the tool returns the drawn result as text, or reports a failure (``ToolFailedError``)
with that text when the call is drawn failed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from hypothesis import settings
from pydantic_ai import RunContext
from pydantic_ai.exceptions import SkipToolExecution, ToolFailedError
from pydantic_ai.messages import (
    ModelRequest,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RunUsage

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
)
from repeat_guard_pydantic_ai import RepeatGuard
from repeat_guard_testing import (
    HarnessMachine,
    failure_events,
    policy_configs,
)

from ._support import carried


class PydanticAiHarness(HarnessMachine):
    configs = policy_configs()

    def start(self, config: GuardConfig) -> None:
        self.guard = RepeatGuard(config)
        self.runs: dict[str, tuple[RepeatGuard, RunContext[None]]] = {}
        self.loop = asyncio.new_event_loop()
        self.produced: tuple[Reminder, ...] = ()

    def teardown(self) -> None:
        self.loop.close()

    def _run(self, agent: str) -> tuple[RepeatGuard, RunContext[None]]:
        if agent not in self.runs:
            ctx = RunContext(
                deps=None, model=TestModel(), usage=RunUsage(), run_id=agent, pending_messages=[]
            )
            self.runs[agent] = (self.loop.run_until_complete(self.guard.for_run(ctx)), ctx)
        return self.runs[agent]

    def run_tool(self, call: ToolCallFinished, part: ToolCallPart) -> Any:
        """What the tool does for ``call``: return the same every time."""
        return "done"

    def admit(self, call: ToolCallFinished) -> bool | None:
        # the capability asks, runs and counts in one hook: run it here, report in deliver
        self.produced = ()
        if call.agent is None:  # a run is always some agent's
            return None
        guard, ctx = self._run(call.agent)
        part = ToolCallPart(call.tool, json.dumps(call.arguments), f"c{len(ctx.messages)}")

        async def handler(args: dict[str, Any]) -> Any:
            return self.run_tool(call, part)

        assert ctx.pending_messages is not None
        ctx.pending_messages.clear()
        tool = ToolDefinition(name=call.tool)
        try:
            execute = guard.wrap_tool_execute(
                ctx, call=part, tool_def=tool, args={}, handler=handler
            )
            self.loop.run_until_complete(execute)
        except ToolFailedError:  # the tool's failure reaches the model as its answer
            admitted = True
        except SkipToolExecution:
            admitted = False
        else:
            admitted = True
        self.produced = tuple(
            carried(part)
            for pending in ctx.pending_messages
            for message in pending.messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, SystemPromptPart)
        )
        return admitted

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if isinstance(event, ToolCallFinished):
            return self.produced
        if isinstance(event, AgentDisposed):
            self.runs.pop(event.agent, None)  # the run ended: its guard goes with it
            return ()
        assert isinstance(event, PromptSubmitted)
        guard, ctx = self._run(event.agent)
        ctx.messages.append(ModelRequest(parts=[UserPromptPart("Go on.")]))
        request_context: Any = None  # passed through untouched
        self.loop.run_until_complete(guard.before_model_request(ctx, request_context))
        return ()


PydanticAiHarness.TestCase.settings = settings(
    max_examples=40, stateful_step_count=40, deadline=None
)
test_pydantic_ai_harness = PydanticAiHarness.TestCase


class PydanticAiFailuresHarness(PydanticAiHarness):
    """The same with results and failures drawn, over one agent's calls of two tools with one
    argument each (the kit's narrow breadth): the same call comes back often, failing or not,
    so progress and the retry window decide most steps."""

    configs = policy_configs(refusals=False)
    events = failure_events()

    def run_tool(self, call: ToolCallFinished, part: ToolCallPart) -> Any:
        # the result as text either way: a failure's result is its text
        text = json.dumps(call.result)
        if call.failed:
            raise ToolFailedError(ToolReturnPart(call.tool, text, part.tool_call_id))
        return text


PydanticAiFailuresHarness.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None
)
test_pydantic_ai_failures_harness = PydanticAiFailuresHarness.TestCase
