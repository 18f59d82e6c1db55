"""The guard as a Google ADK plugin: the session's events folded into a chain per agent.

Theory of operation: an ADK session keeps every event of a conversation, each with its author
(an agent's name, or ``"user"``), and a runner-wide ``BasePlugin`` sees every model request
and every tool call of every agent the runner runs. Before each model request the plugin folds
the session's events from an empty state, the requesting agent's own and the user's, in order:

* a function response of the agent's (``Event.get_function_responses``) is a finished call:
  its tool and arguments come from the agent's function call with the same id, its
  ``response`` is the result that ``progress = "result"`` compares; a response the guard wrote
  when it refused the call (``refused_by`` is the guard's name) counts as denied; a response
  with an ``error`` key (google-genai's ``FunctionResponse`` contract for error details, which
  ADK's own error responses follow), or answering a call whose tool raised (the guard's
  ``on_tool_error_callback`` saw it this invocation), is failed;
* a user's event with text (and no function response) is a user's new message: the chain
  starts over;
* other agents' events are theirs: a subagent, a transferred-to agent, each has its own chain.

Each reminder the fold produces is appended, as a text part of its own, to the request's
content that carries the function responses of that step (found from the end: the last such
content is the last step), so the model reads it right after the tool's result. The session's
events are left as they are; the fold is the same on every request, so the model sees the
same reminders in the same places every time, and a session resumed later (from a persistent
session service too) finds them again.

Before a tool runs, ``before_tool_callback`` asks the core's ``attempt``, against the state of
the agent's latest fold kept in the session's ``temp:`` state (per invocation, never stored)
with the calls admitted since (``Running``) counted in, and a refused attempt counted at once;
a ``Deny`` returns the refusal as the tool's response (ADK skips a tool whose callback returns
a dict), so the model reads why. When a tool raises, ADK asks the plugins'
``on_tool_error_callback`` for a response (the first dict answers the call, none re-raises): the
guard's answers none, and notes the call's id in the invocation's ``temp:`` state, so the fold
marks the response another callback gave as failed.

Fail open: an exception from the guard's own code is logged in one line; the request goes out
unchanged, or the call runs.
"""

from __future__ import annotations

import logging
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.events.event import Event as AdkEvent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from repeat_guard import (
    PLUGIN_NAME,
    Deny,
    GuardConfig,
    GuardConfigError,
    GuardState,
    PromptSubmitted,
    Reducer,
    Reminder,
    Running,
    ToolCallFinished,
    attempt,
    reduce,
    resolve_config,
)

__all__ = [
    "ERROR_KEY",
    "FAILED_KEY",
    "PLUGIN_NAME",
    "REFUSED_BY",
    "STATE_KEY",
    "GuardConfigError",
    "Reducer",
    "RepeatGuard",
    "reminder_part",
    "resolve_config",
]

REFUSED_BY = "refused_by"
"""The key of a refusal's response that names the guard."""

STATE_KEY = "temp:repeat_guard"
"""The session-state key (``temp:``: this invocation only) of the agents' latest states."""

FAILED_KEY = "temp:repeat_guard_failed"
"""The session-state key (``temp:``: this invocation only) of the ids of calls whose tool
raised."""

ERROR_KEY = "error"
"""The key of a function response that holds error details (google-genai's
``FunctionResponse.response``: "Use "output" key to specify function output and "error" key to
specify error details (if any)")."""

_log = logging.getLogger("repeat_guard_adk")


def reminder_part(reminder: Reminder) -> types.Part:
    """Return the request part carrying ``reminder``: a text part of its own."""
    return types.Part(text=reminder.text)


def _fail_open(error: Exception, consequence: str) -> None:
    _log.error("%s failed (%s: %s); %s", PLUGIN_NAME, type(error).__name__, error, consequence)


class RepeatGuard(BasePlugin):
    """The repeat-tool-call guard as an ADK plugin: ``Runner(..., plugins=[RepeatGuard()])``.

    ``config`` is a ``repeat_guard.GuardConfig``, a mapping in the core's keys (parsed with the
    core's ``resolve_config``, raising ``GuardConfigError`` when invalid) or ``None`` for the
    defaults. ``reducer`` is the transition function, injectable for tests.
    """

    def __init__(
        self,
        config: GuardConfig | Mapping[str, object] | None = None,
        *,
        reducer: Reducer = reduce,
    ) -> None:
        super().__init__(name=PLUGIN_NAME)
        self.config = resolve_config(config)
        self.reducer = reducer

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Fold the agent's events; put each reminder after the results of its step."""
        try:
            agent = callback_context.agent_name
            raised = _raised(callback_context)
            state, steps = self._fold(callback_context.session.events, agent, raised)
            _store(callback_context, agent, state, Running())
            llm_request.contents = _with_reminders(llm_request.contents, steps)
        except Exception as error:
            _fail_open(error, "the request goes out unchanged")
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """Refuse the call when the core's ``admit`` says so: its response is the reason."""
        try:
            return self._refusal(tool.name, tool_args, tool_context)
        except Exception as error:
            _fail_open(error, "the call runs unguarded")
            return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """Note that the call's tool raised (its response, if a callback gives one, is failed);
        answer nothing, so the other plugins' and the agent's callbacks decide as before."""
        try:
            raised = _raised(tool_context) | {tool_context.function_call_id}
            tool_context.state[FAILED_KEY] = raised
        except Exception as failure:
            _fail_open(failure, "the call's failure is not noted")
        return None

    def _refusal(
        self, name: str, arguments: dict[str, Any], context: ToolContext
    ) -> dict[str, Any] | None:
        agent = context.agent_name
        state, running = self._stored(context, agent)
        event = ToolCallFinished(agent, name, arguments)
        # The refused attempt counts at once; an admitted call waits among the running ones
        # until the next model request folds its response.
        verdict, state, _ = attempt(state, event, running, reducer=self.reducer)
        if not isinstance(verdict, Deny):
            running = running.admitted(context.function_call_id or "", event)
        _store(context, agent, state, running)
        if isinstance(verdict, Deny):
            return {"error": verdict.reason, REFUSED_BY: PLUGIN_NAME}
        return None

    def _stored(self, context: ToolContext, agent: str) -> tuple[GuardState, Running]:
        stored = context.state.get(STATE_KEY, {})
        turn = stored.get(agent) if isinstance(stored, Mapping) else None
        if turn is None:
            return GuardState.initial(self.config), Running()
        if not isinstance(turn, _Turn):
            raise TypeError(f"unreadable {STATE_KEY}: {turn!r}")
        return turn.state, turn.running

    def _fold(
        self, events: Sequence[AdkEvent], agent: str, raised: Container[str | None]
    ) -> tuple[GuardState, list[list[Reminder]]]:
        """The agent's state after ``events``, and the reminders of each step with results."""
        state = GuardState.initial(self.config)
        calls: dict[str | None, types.FunctionCall] = {}
        steps: list[list[Reminder]] = []
        for event in events:
            if event.author == "user" and _is_prompt(event):
                state, _ = self.reducer(state, PromptSubmitted(agent))
            if event.author != agent:
                continue
            calls.update((call.id, call) for call in event.get_function_calls())
            responses = event.get_function_responses()
            if responses:
                step: list[Reminder] = []
                for finished in _finished(agent, responses, calls, raised):
                    state, reminders = self.reducer(state, finished)
                    step.extend(reminders)
                steps.append(step)
        return state, steps


def _finished(
    agent: str,
    responses: Sequence[types.FunctionResponse],
    calls: Mapping[str | None, types.FunctionCall],
    raised: Container[str | None],
) -> list[ToolCallFinished]:
    finished = []
    for response in responses:
        call = calls.get(response.id)
        if call is None:
            continue
        result = response.response
        denied = isinstance(result, Mapping) and result.get(REFUSED_BY) == PLUGIN_NAME
        errs = response.id in raised or (isinstance(result, Mapping) and ERROR_KEY in result)
        finished.append(
            ToolCallFinished(
                agent,
                call.name or "",
                call.args,
                denied=denied,
                result=None if denied else result,
                failed=errs and not denied,
            )
        )
    return finished


def _raised(context: CallbackContext) -> frozenset[str | None]:
    """The ids of the invocation's calls whose tool raised."""
    noted = context.state.get(FAILED_KEY)
    return frozenset(noted) if isinstance(noted, frozenset) else frozenset()


def _is_prompt(event: AdkEvent) -> bool:
    """Whether a user's event is a new message (text), not an answer to a function call."""
    parts = event.content.parts if event.content is not None else None
    if not parts or event.get_function_responses():
        return False
    return any(part.text for part in parts)


@dataclass(frozen=True)
class _Turn:
    """An agent's state as of its latest model request (with the refusals since), and the calls
    admitted since, still running."""

    state: GuardState
    running: Running


def _store(context: CallbackContext, agent: str, state: GuardState, running: Running) -> None:
    """Keep the agent's turn in the invocation's ``temp:`` state (never stored)."""
    stored = context.state.get(STATE_KEY)
    agents = dict(stored) if isinstance(stored, Mapping) else {}
    agents[agent] = _Turn(state, running)
    context.state[STATE_KEY] = agents


def _with_reminders(
    contents: list[types.Content], steps: Sequence[Sequence[Reminder]]
) -> list[types.Content]:
    """``contents`` with each step's reminders appended to the content holding its results.

    Steps and result contents are matched from the end: the request may hold fewer of the
    agent's steps than the session (compacted, or ``include_contents="none"``).
    """
    holding = [
        index
        for index, content in enumerate(contents)
        if content.role == "user" and any(part.function_response for part in content.parts or ())
    ]
    updated = list(contents)
    for index, step in zip(reversed(holding), reversed(steps), strict=False):
        if step:
            content = contents[index]
            parts = [*(content.parts or ()), *(reminder_part(reminder) for reminder in step)]
            updated[index] = content.model_copy(update={"parts": parts})
    return updated
