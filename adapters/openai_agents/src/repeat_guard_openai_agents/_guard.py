"""The guard for the OpenAI Agents SDK: a model input filter that folds the conversation, and a
tool input guardrail that asks the core before a call runs.

Theory of operation: the SDK sends the model the whole conversation on every turn (the
session's history, the run's input, and every item the run generated since), and lets a
``RunConfig.call_model_input_filter`` change it just before the call. The conversation is
where the SDK keeps a run's history, so the chain is folded from it, from an empty state, on
every turn; no state of the guard's own outlives a turn. Items map to core events:

* a ``function_call_output`` item is a finished call: its tool and arguments come from the
  ``function_call`` item with the same ``call_id`` (arguments are JSON text, parsed with the
  core's ``arguments_from_text``), its ``output`` is the result that ``progress = "result"``
  compares; a call the guard refused counts as denied, and one whose tool raised (the guard's
  ``failure_error_function`` turned the error into that output) as failed;
* a user's message (``role`` ``"user"``) starts the chain over, unless it is a harness
  reminder (its text opens with ``<system-reminder>``): the guard's own, should one ever come
  back in the input, or another harness's;
* anything else (assistant text, reasoning, hosted tools' items) changes nothing.

Each reminder the fold produces goes into the input sent to the model as a user message of its
own, right after the output that reached the threshold. The fold is the same every turn, so the
model sees the same reminders at the same places in every later request, as if they were
stored, and a session resumed later (in another process too) finds them again.

Before a function tool runs, its ``ToolInputGuardrail`` asks the core's ``attempt``, against
the state of the turn's fold with the calls admitted since (``Running``) counted in; a ``Deny``
answers with ``reject_content(reason)``: the tool does not run, the model reads the reason as
its output, and the refused attempt counts at once.
The guardrail finds its run's fold through the ``RunConfig`` that ``run_config()`` made, which
the SDK hands to every tool call of the run (``ToolContext.run_config``).

A function tool that raises is answered by its ``failure_error_function``, whose text becomes the
call's output; the output item carries nothing else. The guard's ``failure_error_function()``
wraps a formatter (the SDK's default one unless given another): it notes the call's id in its
run, found the same way, and returns the formatter's text, so the fold marks that output failed.

Fail open: an exception from the guard's own code is logged in one line; the model is sent the
input unchanged, or the call runs.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from agents import RunConfig, RunContextWrapper, default_tool_error_function
from agents.run_config import CallModelData, CallModelInputFilter, ModelInputData
from agents.tool import ToolErrorFunction
from agents.tool_context import ToolContext
from agents.tool_guardrails import (
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
)

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
    resolve_config,
)

__all__ = [
    "AGENT",
    "PLUGIN_NAME",
    "GuardConfigError",
    "Reducer",
    "RepeatGuard",
    "reminder_message",
    "resolve_config",
]

AGENT = "agent"
"""The core's id for the agent of a conversation: each is folded on its own, so one suffices."""

_ENVELOPE = "<system-reminder>"
_log = logging.getLogger("repeat_guard_openai_agents")


def reminder_message(reminder: Reminder) -> dict[str, Any]:
    """Return the input item carrying ``reminder``: a user message of its own."""
    return {"type": "message", "role": "user", "content": reminder.text}


def _fail_open(error: Exception, consequence: str) -> None:
    _log.error("%s failed (%s: %s); %s", PLUGIN_NAME, type(error).__name__, error, consequence)


class RepeatGuard:
    """The repeat-tool-call guard for the OpenAI Agents SDK.

    ``config`` is a ``repeat_guard.GuardConfig``, a mapping in the core's keys (parsed with the
    core's ``resolve_config``, raising ``GuardConfigError`` when invalid) or ``None`` for the
    defaults. Pass ``run_config()`` to every run (one each: it holds that run's fold), and add
    ``tool_input_guardrail`` to the function tools whose calls a configured ``denyAt`` or budget
    may refuse. ``reducer`` is the transition function, injectable for tests.
    """

    def __init__(
        self,
        config: GuardConfig | Mapping[str, object] | None = None,
        *,
        reducer: Reducer = reduce,
    ) -> None:
        self.config = resolve_config(config)
        self.reducer = reducer
        self.tool_input_guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            guardrail_function=self._check_call, name=PLUGIN_NAME
        )

    def run_config(self, base: RunConfig | None = None) -> RunConfig:
        """Return a copy of ``base`` (default: ``RunConfig()``) whose model input filter is the
        guard's, for one run. A filter ``base`` already has runs after the guard's, on the input
        with the reminders in."""
        base = RunConfig() if base is None else base
        run = _RunFilter(self, base.call_model_input_filter)
        return replace(base, call_model_input_filter=run)

    def failure_error_function(
        self, formatter: ToolErrorFunction = default_tool_error_function
    ) -> ToolErrorFunction:
        """Return a tool error function (``@function_tool(failure_error_function=...)``) that
        marks the call's output failed in its run and answers the model with ``formatter``'s
        text (the SDK's default message unless given another)."""

        async def failure(context: RunContextWrapper[Any], error: Exception) -> str:
            try:
                run = self._run(context)  # raises unless the context is a ToolContext
                run.failed.add(cast(ToolContext[Any], context).tool_call_id)
            except Exception as guard_error:
                _fail_open(guard_error, "the call's failure is not noted")
            text = formatter(context, error)
            return await text if inspect.isawaitable(text) else text

        return failure

    def _run(self, context: RunContextWrapper[Any]) -> _RunFilter:
        """The run ``context`` belongs to, if ``run_config()`` of this guard made its config."""
        config = context.run_config if isinstance(context, ToolContext) else None
        run = None if config is None else config.call_model_input_filter
        if not isinstance(run, _RunFilter) or run.guard is not self:
            raise LookupError("the run's RunConfig was not made by this guard's run_config()")
        return run

    async def _check_call(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        try:
            reason = self._refusal(data)
        except Exception as error:
            _fail_open(error, "the call runs unguarded")
            reason = None
        if reason is None:
            return ToolGuardrailFunctionOutput.allow()
        return ToolGuardrailFunctionOutput.reject_content(reason)

    def _refusal(self, data: ToolInputGuardrailData) -> str | None:
        context = data.context
        run = self._run(context)
        turn = run.turn(data.agent)
        event = ToolCallFinished(
            AGENT, context.tool_name, arguments_from_text(context.tool_arguments)
        )
        # The refused attempt counts at once; an admitted call waits among the running ones
        # until the next model call folds its output.
        verdict, turn.state, _ = attempt(turn.state, event, turn.running, reducer=self.reducer)
        if isinstance(verdict, Deny):
            run.denied.add(context.tool_call_id)
            return verdict.reason
        turn.running = turn.running.admitted(context.tool_call_id, event)
        return None


@dataclass
class _Turn:
    """One agent's state as of its latest model call (with the refusals since), and the calls
    admitted since, still running."""

    state: GuardState
    running: Running = field(default_factory=Running)


class _RunFilter:
    """The model input filter of one run: folds the input and puts the reminders in."""

    def __init__(self, guard: RepeatGuard, then: CallModelInputFilter | None) -> None:
        self.guard = guard
        self.then = then
        # Keyed by the agent object: a handoff's target and a subagent run as a tool (which
        # the SDK may give the same RunConfig) each keep their own turn.
        self.turns: dict[int, _Turn] = {}
        self.denied: set[str] = set()
        self.failed: set[str] = set()

    def turn(self, agent: object) -> _Turn:
        """The agent's turn (an empty one before its first model call)."""
        found = self.turns.get(id(agent))
        if found is None:
            found = self.turns[id(agent)] = _Turn(GuardState.initial(self.guard.config))
        return found

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        try:
            state, items = self._fold(model_data.input)
            self.turns[id(data.agent)] = _Turn(state)
            model_data = replace(model_data, input=items)
        except Exception as error:
            _fail_open(error, "the model is sent the input unchanged")
        if self.then is None:
            return model_data
        result = self.then(replace(data, model_data=model_data))
        return result if isinstance(result, ModelInputData) else await result

    def _fold(self, items: Sequence[Any]) -> tuple[GuardState, list[Any]]:
        state = GuardState.initial(self.guard.config)
        calls: dict[object, tuple[str, object]] = {}
        sent: list[Any] = []
        for item in items:
            sent.append(item)
            for event in _events(item, calls, self.denied, self.failed):
                state, reminders = self.guard.reducer(state, event)
                sent.extend(reminder_message(reminder) for reminder in reminders)
        return state, sent


def _events(
    item: object,
    calls: dict[object, tuple[str, object]],
    denied: Container[object],
    failed: Container[object],
) -> list[Event]:
    """The core events one input item stands for; remembers the function calls it sees."""
    if not isinstance(item, Mapping):
        return []
    kind = item.get("type")
    if kind == "function_call":
        calls[item.get("call_id")] = (str(item.get("name")), item.get("arguments"))
        return []
    if kind == "function_call_output":
        call = calls.get(item.get("call_id"))
        if call is None:
            return []
        name, arguments = call
        refused = item.get("call_id") in denied
        raised = not refused and item.get("call_id") in failed
        parsed = arguments_from_text(arguments) if isinstance(arguments, str) else arguments
        result = None if refused else item.get("output")
        return [ToolCallFinished(AGENT, name, parsed, refused, result, raised)]
    if item.get("role") == "user" and kind in (None, "message"):
        return [] if _is_reminder(item.get("content")) else [PromptSubmitted(AGENT)]
    return []


def _is_reminder(content: object) -> bool:
    """Whether a user message's content is a harness reminder rather than a user's words."""
    if isinstance(content, list) and content and isinstance(content[0], Mapping):
        content = content[0].get("text")
    return isinstance(content, str) and content.startswith(_ENVELOPE)
