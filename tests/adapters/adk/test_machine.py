"""The testing kit's state machine over the plugin: each agent is a session of real ADK events,
folded by the plugin's model callback and checked by its tool callback, call for call against
the reference model. The contexts the callbacks read are stand-ins with the three things the
plugin reads (the agent's name, the session, the session state); everything else is ADK's."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, cast

from google.adk.events.event import Event as AdkEvent
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions import Session
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
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
from repeat_guard_adk import PLUGIN_NAME, REFUSED_BY, RepeatGuard
from repeat_guard_testing import (
    ARGUMENTS,
    FAILED,
    KNOWN_RESULTS,
    HarnessMachine,
    events,
    failure_events,
    policy_configs,
)

# ADK hands tools their arguments as a dict, always
DICT_ARGUMENTS = [arguments for arguments in ARGUMENTS if isinstance(arguments, dict)]


@dataclass
class Context:
    """What the plugin reads of a ``CallbackContext`` or ``ToolContext``."""

    agent_name: str
    session: Session
    state: dict[str, Any] = field(default_factory=dict)
    function_call_id: str | None = None


@dataclass
class Tool:
    name: str


class AdkHarness(HarnessMachine):
    configs = policy_configs()
    # refusals too: the harness answers a call as drawn, refused or not
    events = events(
        arguments=DICT_ARGUMENTS, results=KNOWN_RESULTS, failed=FAILED, late_results=False
    )
    produced: tuple[Reminder, ...] = ()

    def start(self, config: GuardConfig) -> None:
        def recording(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
            state, self.produced = reduce(state, event)
            return state, self.produced

        self.guard = RepeatGuard(config, reducer=recording)
        self.contexts: dict[str, Context] = {}
        self.calls = 0
        self.loop = asyncio.new_event_loop()

    def teardown(self) -> None:
        self.loop.close()

    def _context(self, agent: str) -> Context:
        if agent not in self.contexts:
            session = Session(id=f"s-{agent}", app_name="demo", user_id="u")
            self.contexts[agent] = Context(agent, session)
        return self.contexts[agent]

    def admit(self, call: ToolCallFinished) -> bool | None:
        if call.agent is None:
            return None
        stand_in = self._context(call.agent)
        stand_in.function_call_id = f"c{self.calls + 1}"
        context = cast(ToolContext, stand_in)
        assert isinstance(call.arguments, dict)
        refusal = self.loop.run_until_complete(
            self.guard.before_tool_callback(
                tool=cast(BaseTool, Tool(call.tool)), tool_args=call.arguments, tool_context=context
            )
        )
        return refusal is None

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if event.agent is None:
            return ()
        if isinstance(event, AgentDisposed):
            self.contexts.pop(event.agent, None)
            return ()
        context = self._context(event.agent)
        if isinstance(event, PromptSubmitted):
            prompt = types.Content(role="user", parts=[types.Part(text="Go on.")])
            context.session.events.append(AdkEvent(author="user", content=prompt))
        else:
            assert isinstance(event, ToolCallFinished)
            assert isinstance(event.arguments, dict)
            self.calls += 1
            call_id = f"c{self.calls}"
            call = types.FunctionCall(id=call_id, name=event.tool, args=event.arguments)
            response = self._response(context, call_id, event)
            answer = types.FunctionResponse(id=call_id, name=event.tool, response=response)
            context.session.events += [
                AdkEvent(
                    author=event.agent,
                    content=types.Content(role="model", parts=[types.Part(function_call=call)]),
                ),
                AdkEvent(
                    author=event.agent,
                    content=types.Content(
                        role="user", parts=[types.Part(function_response=answer)]
                    ),
                ),
            ]
        return self._fold(context)

    def _response(self, context: Context, call_id: str, event: ToolCallFinished) -> dict[str, Any]:
        """The call's response: the guard's refusal, an error, or the tool's result. A failure
        with a text result is a tool that raised, which the guard's error callback hears of,
        answered by another callback without an error key."""
        if event.denied:
            return {"error": "refused", REFUSED_BY: PLUGIN_NAME}
        if not event.failed:
            return {"result": event.result}
        if not isinstance(event.result, str):
            return {"error": event.result}
        context.function_call_id = call_id
        self.loop.run_until_complete(
            self.guard.on_tool_error_callback(
                tool=cast(BaseTool, Tool(event.tool)),
                tool_args=cast(dict[str, Any], event.arguments),
                tool_context=cast(ToolContext, context),
                error=RuntimeError(event.result),
            )
        )
        return {"result": event.result}  # as a success's: only the note tells them apart

    def _fold(self, context: Context) -> tuple[Reminder, ...]:
        self.produced = ()
        contents = [e.content for e in context.session.events if e.content is not None]
        request = LlmRequest(contents=list(contents))
        self.loop.run_until_complete(
            self.guard.before_model_callback(
                callback_context=cast(Any, context), llm_request=request
            )
        )
        produced: tuple[Reminder, ...] = self.produced
        # the last event's reminders are exactly the parts added to the last content
        added = (request.contents[-1].parts or [])[len(contents[-1].parts or []) :]
        assert [part.text for part in added] == [reminder.text for reminder in produced]
        return tuple(replace(each, agent=context.agent_name) for each in produced)


# as the other adapters' model checks: each step runs the framework's own objects, and no
# deadline, since a loaded machine may take longer than Hypothesis's default for one
AdkHarness.TestCase.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
TestAdkHarness = AdkHarness.TestCase


class AdkFailuresHarness(AdkHarness):
    """The same, over one agent's calls of two tools with one argument each: the same call
    comes back often, failing or not, so progress and the retry window decide most steps."""

    configs = policy_configs(refusals=False)
    events = failure_events(arguments=DICT_ARGUMENTS[:1])


AdkFailuresHarness.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None
)
TestAdkFailuresHarness = AdkFailuresHarness.TestCase
