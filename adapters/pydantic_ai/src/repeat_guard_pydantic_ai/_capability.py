"""The guard as a pydantic-ai capability: the only mutable cell around the pure reducer.

Theory of operation: pydantic-ai asks every capability for a fresh instance per run
(``for_run``), so each run holds its own ``GuardState`` and concurrent runs of one agent never
share a chain. Two hooks translate the run into core events; no detection logic lives here:

* ``wrap_tool_execute`` first asks the core's ``admit`` whether the call may run; a ``Deny``
  skips the tool (``SkipToolExecution`` with the reason as the call's return) and counts as a
  denied attempt. Each executed function-tool call (a normal return, with its value as the
  result for result-aware progress, a retry the tool asked for, or a terminal failure) goes to
  ``reduce`` as a ``ToolCallFinished``; a reminder is queued with ``RunContext.enqueue`` while
  the call is still current, which is pydantic-ai's way of putting content into the request
  that carries the call's ``ToolReturnPart``, right after that part. The reminder is its own
  ``SystemPromptPart`` whose ``metadata`` names the guard (metadata is never sent to the
  model); the tool's return is untouched and the instructions are not involved.
* ``before_model_request`` looks at the history added since it last ran: a ``UserPromptPart``
  there is a user's new message (the run's own prompt, or one queued into a running run), and
  starts the chain over.

Fail open: an exception from the guard's own code is logged in one line and the run proceeds
as if the guard were absent. Exceptions from the tool or other capabilities are the host's and
pass through unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai.capabilities import AbstractCapability, WrapToolExecuteHandler
from pydantic_ai.exceptions import SkipToolExecution, ToolFailedError, ToolRetryError
from pydantic_ai.messages import ModelRequest, SystemPromptPart, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext, ToolDefinition

from repeat_guard import (
    PLUGIN_NAME,
    Deny,
    Event,
    GuardConfig,
    GuardConfigError,
    GuardState,
    PromptSubmitted,
    Reducer,
    Reminder,
    Running,
    ToolCallFinished,
    arguments_from_text,
    attempt,
    reduce,
    reminder_to_json,
    resolve_config,
)

__all__ = [
    "METADATA_KEY",
    "PLUGIN_NAME",
    "GuardConfigError",
    "Reducer",
    "RepeatGuard",
    "call_arguments",
    "reminder_part",
    "resolve_config",
]

METADATA_KEY = "repeat_guard"
"""The key under which a reminder part's ``metadata`` holds the guard's source label."""

_log = logging.getLogger("repeat_guard_pydantic_ai")


def reminder_part(reminder: Reminder) -> SystemPromptPart:
    """Return the request part carrying ``reminder``, labelled with the guard's source."""
    return SystemPromptPart(reminder.text, metadata={METADATA_KEY: reminder_to_json(reminder)})


def call_arguments(call: ToolCallPart) -> object:
    """Return the arguments the model sent: parsed JSON, or the raw text when it is malformed
    (or nested too deeply to parse)."""
    arguments = call.args
    return arguments_from_text(arguments) if isinstance(arguments, str) else arguments


@dataclass
class RepeatGuard(AbstractCapability[Any]):
    """The repeat-tool-call guard as a capability: ``Agent(..., capabilities=[RepeatGuard()])``.

    ``config`` is a ``repeat_guard.GuardConfig``, a mapping in the design note's keys
    (``thresholds``, ``include``, ``exclude``, ``argumentsPreviewChars``, the opt-in policies'
    keys; parsed here, raising
    ``GuardConfigError`` when invalid) or ``None`` for the defaults; once built, ``config`` is
    the ``GuardConfig`` in force. ``reducer`` is the transition function, injectable for tests.
    """

    config: GuardConfig | Mapping[str, object] | None = None
    reducer: Reducer = field(default=reduce, repr=False, compare=False, kw_only=True)
    _state: GuardState = field(init=False, repr=False, compare=False)
    _seen: int = field(init=False, default=0, repr=False, compare=False)
    # pydantic-ai runs a response's calls at once, each counted when it finishes
    _running: Running = field(init=False, default_factory=Running, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Built, ``config`` is the resolved GuardConfig, as the other adapters' ``config`` is.
        self.config = resolve_config(self.config)
        self._state = GuardState.initial(self.config)

    @property
    def state(self) -> GuardState:
        """This run's guard state (the agent-level instance always holds the initial state)."""
        return self._state

    async def for_run(self, ctx: RunContext[Any]) -> RepeatGuard:
        """Return a fresh guard for this run, so no two runs share a chain."""
        return replace(self, config=self._state.config)

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Start the chain over when a user's message arrived since the last request."""
        try:
            messages = ctx.messages
            new = messages[self._seen :]
            self._seen = len(messages)
            prompted = any(
                isinstance(part, UserPromptPart)
                for message in new
                if isinstance(message, ModelRequest)
                for part in message.parts
            )
            if prompted:
                self._advance(PromptSubmitted(_agent_id(ctx)))
        except Exception as error:
            _fail_open(error)
        return request_context

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        """Ask the core whether the call may run, run it, then count it and queue any reminder.

        A call the core's ``admit`` refuses (a configured ``denyAt`` or budget) is not run: it
        counts as a denied attempt and its return is the reason (``SkipToolExecution``). A
        retry or a terminal failure the tool reported counts like a normal return, its
        message the result and ``failed``; other
        exceptions (and deferrals) pass through uncounted.
        """
        reason = self._refusal(ctx, call)
        if reason is not None:
            raise SkipToolExecution(reason)
        try:
            result = await handler(args)
        except (ToolRetryError, ToolFailedError) as error:
            # The tool failed: what it said is the failure's text.
            self._finished(ctx, call, result=str(error), failed=True)
            raise
        finally:
            self._running = self._running.finished(_agent_id(ctx), call.tool_call_id)
        self._finished(ctx, call, result=result)
        return result

    def _refusal(self, ctx: RunContext[Any], call: ToolCallPart) -> str | None:
        """The core's reason to refuse ``call`` (the refused attempt counted, its reminders
        queued); an admitted call joins the running ones."""
        try:
            event = _call_event(ctx, call)
            verdict, self._state, reminders = attempt(
                self._state, event, self._running, reducer=self.reducer
            )
            _enqueue(ctx, reminders)
        except Exception as error:
            _fail_open(error)
            return None
        if isinstance(verdict, Deny):
            return verdict.reason
        self._running = self._running.admitted(call.tool_call_id, event)
        return None

    def _finished(
        self, ctx: RunContext[Any], call: ToolCallPart, *, result: object, failed: bool = False
    ) -> None:
        try:
            event = replace(_call_event(ctx, call), result=result, failed=failed)
            _enqueue(ctx, self._advance(event))
        except Exception as error:
            _fail_open(error)

    def _advance(self, event: Event) -> tuple[Reminder, ...]:
        self._state, reminders = self.reducer(self._state, event)
        return reminders


def _enqueue(ctx: RunContext[Any], reminders: tuple[Reminder, ...]) -> None:
    for reminder in reminders:
        ctx.enqueue(reminder_part(reminder))


def _call_event(ctx: RunContext[Any], call: ToolCallPart) -> ToolCallFinished:
    return ToolCallFinished(_agent_id(ctx), call.tool_name, call_arguments(call))


def _agent_id(ctx: RunContext[Any]) -> str:
    # One run is one agent to the core; the id only labels the chain.
    return ctx.run_id or "run"


def _fail_open(error: Exception) -> None:
    _log.error(
        "%s failed (%s: %s); the run proceeds unguarded", PLUGIN_NAME, type(error).__name__, error
    )
