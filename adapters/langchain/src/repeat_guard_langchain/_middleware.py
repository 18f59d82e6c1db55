"""The guard as a LangChain v1 agent middleware, with its chain in the agent's own state.

Theory of operation: ``create_agent`` runs every ``before_model`` hook before each model call,
so the messages that joined the thread since the hook last ran are exactly what the model has
not yet been reminded about: the previous model turn (an ``AIMessage`` with tool calls), the
``ToolMessage`` answers in the order they were added, and any new user message. The hook turns
them into core events in that order, runs ``reduce`` once per event, and returns a state update:

* ``repeat_guard`` (a private field of the agent state, so the thread's checkpointer stores it):
  the guard's state as the core's ``encode_state`` writes it (the chain, and what the opt-in
  policies remember), and the id of the last message folded;
* ``messages``: one ``HumanMessage`` per reminder, appended after the step's tool results and
  marked ``additional_kwargs["lc_source"] = "repeat-tool-guard"`` (LangChain's convention for
  messages its middleware writes, as the summarization middleware does).

Rules kept here, because they are about reading LangChain's messages (no detection logic):

* a ``HumanMessage`` without an ``lc_source`` mark is a user's message and starts the chain over;
  marked ones (the guard's own reminders, a summary) are not;
* a ``ToolMessage`` is a finished call: its tool and arguments come from the ``AIMessage`` tool
  call it answers (``tool_call_id``); an answer to a call that is no longer in the history is
  skipped. An ``AIMessage``'s invalid tool calls (arguments that were not JSON) are counted at
  that message, with their raw text as arguments: the agent writes their error answers into
  the thread only when it next calls the model, after the guard has run;
* reminders are only emitted for the calls of the model's latest turn: when the stored
  marker is missing from the history (a new thread, or one whose history was rewritten), the
  whole history is folded from an empty chain, and calls the model has already answered must
  not be reminded about again.

Before a tool runs, ``wrap_tool_call`` folds the same messages (plus the calls earlier in the
same model turn) and asks the core's ``admit``; a ``Deny`` answers the call with a
``ToolMessage`` holding the reason, marked ``lc_source``, without running the tool. That
message is then a result like any other, counted as a denied attempt.

Fail open: an exception from the guard's own code is logged in one line; the hook returns no
update, or the call runs, as if the guard were absent.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import AgentMiddleware, AgentState, PrivateStateAttr
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command
from returns.pipeline import is_successful

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
    ToolCallFinished,
    admit,
    decode_state,
    encode_state,
    reduce,
    reminder_to_json,
    resolve_config,
)

__all__ = [
    "AGENT",
    "PLUGIN_NAME",
    "STATE_KEY",
    "GuardConfigError",
    "Reducer",
    "RepeatGuardMiddleware",
    "RepeatGuardState",
    "reminder_in_result",
    "reminder_message",
    "resolve_config",
]

STATE_KEY = "repeat_guard"
"""The agent-state field holding the guard's stored chain and marker."""

AGENT = "agent"
"""The core's id for the agent of a thread: the state is per thread, so one id suffices."""

_log = logging.getLogger("repeat_guard_langchain")


class RepeatGuardState(AgentState[Any]):
    """The agent state with the guard's private field (stored with the thread, never input)."""

    repeat_guard: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]


def reminder_message(reminder: Reminder, after: str | None = None) -> HumanMessage:
    """Return the message carrying ``reminder``, marked as the guard's.

    ``after`` is the id of the tool result that reached the threshold; the reminder's id is
    derived from it (the thread's message ids are unique, tool call ids need not be), so the
    same step folded twice replaces its reminder instead of adding a second one.
    """
    return HumanMessage(
        content=reminder.text,
        id=None if after is None else f"{PLUGIN_NAME}:{after}",
        additional_kwargs={"lc_source": PLUGIN_NAME, STATE_KEY: reminder_to_json(reminder)},
    )


def reminder_in_result(result: ToolMessage, reminder: Reminder) -> ToolMessage:
    """Return ``result`` with ``reminder``'s text appended, for ``in_tool_result=True``.

    The copy keeps the result's id, so the thread replaces its record of the result with it;
    ``additional_kwargs["repeat_guard"]`` says what the guard added: the reminder in the core's
    JSON shape, or, when one result brings several (a chain's threshold and a budget on the same
    call), a list of them in the order they were added.
    """
    content = result.content
    merged: str | list[str | dict[str, Any]]
    if isinstance(content, str):
        merged = f"{content}\n\n{reminder.text}" if content else reminder.text
    else:
        merged = [*content, {"type": "text", "text": reminder.text}]
    added: object = reminder_to_json(reminder)
    earlier = result.additional_kwargs.get(STATE_KEY)
    if earlier is not None:
        added = [*(earlier if isinstance(earlier, list) else [earlier]), added]
    marked = {**result.additional_kwargs, STATE_KEY: added}
    return result.model_copy(update={"content": merged, "additional_kwargs": marked})


def _fail_open(error: Exception, consequence: str) -> None:
    _log.error("%s failed (%s: %s); %s", PLUGIN_NAME, type(error).__name__, error, consequence)


class RepeatGuardMiddleware(AgentMiddleware[RepeatGuardState, Any, Any]):
    """The repeat-tool-call guard: ``create_agent(..., middleware=[RepeatGuardMiddleware()])``.

    ``config`` is a ``repeat_guard.GuardConfig``, a mapping in the core's keys
    (``thresholds``, ``include``, ``exclude``, ``argumentsPreviewChars``, the opt-in policies'
    keys; parsed here, raising
    ``GuardConfigError`` when invalid) or ``None`` for the defaults. ``in_tool_result=True``
    appends each reminder to the tool result that reached the threshold instead of adding a
    message of its own (off by default: the thread's record of what the tool returned then
    holds the guard's words too). ``reducer`` is the transition function, injectable for tests.
    """

    state_schema = RepeatGuardState

    def __init__(
        self,
        config: GuardConfig | Mapping[str, object] | None = None,
        *,
        in_tool_result: bool = False,
        reducer: Reducer = reduce,
    ) -> None:
        super().__init__()
        self.config = resolve_config(config)
        self.in_tool_result = in_tool_result
        self.reducer = reducer

    def before_model(self, state: RepeatGuardState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Fold the messages added since the last call; return the guard's state update."""
        return self._update(state)

    async def abefore_model(
        self, state: RepeatGuardState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """The same as ``before_model``, for ``ainvoke`` and ``astream``."""
        return self._update(state)

    def _update(self, state: RepeatGuardState) -> dict[str, Any] | None:
        try:
            return self._fold(state["messages"], state.get(STATE_KEY))
        except Exception as error:
            _fail_open(error, "the model is called unguarded")
            return None

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the call, unless the core's ``admit`` refuses it: then answer with the reason."""
        refusal = self._refusal(request)
        return handler(request) if refusal is None else refusal

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The same as ``wrap_tool_call``, for ``ainvoke`` and ``astream``."""
        refusal = self._refusal(request)
        return await handler(request) if refusal is None else refusal

    def _refusal(self, request: ToolCallRequest) -> ToolMessage | None:
        """The refusal for ``request``'s call, or ``None`` when it may run (or on any error)."""
        try:
            state = request.state
            messages: Sequence[AnyMessage] = state["messages"]
            guard, _ = self._replay(messages, state.get(STATE_KEY))
            call = request.tool_call
            # Calls earlier in the same model turn run before this one, in the turn's order.
            earlier = (
                ToolCallFinished(AGENT, made["name"], made["args"])
                for made in _earlier_in_turn(messages, call["id"])
            )
            verdict = admit(guard, ToolCallFinished(AGENT, call["name"], call["args"]), earlier)
        except Exception as error:
            _fail_open(error, "the call runs unguarded")
            return None
        if not isinstance(verdict, Deny):
            return None
        return ToolMessage(
            content=verdict.reason,
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
            additional_kwargs={"lc_source": PLUGIN_NAME},
        )

    def _fold(self, messages: Sequence[AnyMessage], stored: object) -> dict[str, Any]:
        guard, reminders = self._replay(messages, stored)
        update: dict[str, Any] = {
            STATE_KEY: {
                "state": encode_state(guard),
                "seen": messages[-1].id if messages else None,
            }
        }
        if reminders:
            update["messages"] = reminders
        return update

    def _replay(
        self, messages: Sequence[AnyMessage], stored: object
    ) -> tuple[GuardState, list[AnyMessage]]:
        """Fold the messages after the stored marker; return the state and the step's reminders."""
        guard, start = self._resume(messages, stored)
        current_step = _last_ai_message(messages)
        reminders: list[AnyMessage] = []
        for index in range(start, len(messages)):
            for event, anchor in _events(messages, index):
                guard, produced = self.reducer(guard, event)
                if index >= current_step and produced:
                    reminders.extend(self._deliver(messages[index], produced, anchor))
        return guard, reminders

    def _deliver(
        self, message: AnyMessage, produced: Sequence[Reminder], anchor: str | None
    ) -> list[AnyMessage]:
        """The messages that carry one event's reminders: one each, or the tool's result when
        asked, with every one of them added in order."""
        if self.in_tool_result and isinstance(message, ToolMessage):
            for reminder in produced:
                message = reminder_in_result(message, reminder)
            return [message]
        # Each its own id, derived from the result's: the thread keeps one message per id.
        return [
            reminder_message(reminder, anchor if n == 0 or anchor is None else f"{anchor}:{n}")
            for n, reminder in enumerate(produced)
        ]

    def _resume(self, messages: Sequence[AnyMessage], stored: object) -> tuple[GuardState, int]:
        """Return the stored state and where to fold from, or a fresh state and 0 when unusable."""
        fresh = GuardState.initial(self.config)
        if not isinstance(stored, Mapping):
            return fresh, 0
        seen = stored.get("seen")
        position = None if seen is None else _position_after(messages, seen)
        if position is None:
            return fresh, 0
        decoded = decode_state(stored.get("state"), self.config)
        if not is_successful(decoded):
            _log.error("%s ignores its stored state: %s", PLUGIN_NAME, decoded.failure())
            return fresh, 0
        return decoded.unwrap(), position


def _earlier_in_turn(messages: Sequence[AnyMessage], call_id: str | None) -> list[ToolCall]:
    """The tool calls before ``call_id`` in the latest model turn that made it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            ids = [call["id"] for call in message.tool_calls]
            return message.tool_calls[: ids.index(call_id)] if call_id in ids else []
    return []


def _position_after(messages: Sequence[AnyMessage], message_id: object) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].id == message_id:
            return index + 1
    return None


def _last_ai_message(messages: Sequence[AnyMessage]) -> int:
    """The index of the model's latest turn: the step whose results may still be reminded."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AIMessage):
            return index
    return 0


def _events(messages: Sequence[AnyMessage], index: int) -> list[tuple[Event, str | None]]:
    """The core events ``messages[index]`` stands for, each with the id its reminder follows."""
    message = messages[index]
    if isinstance(message, HumanMessage):
        unmarked = "lc_source" not in message.additional_kwargs
        return [(PromptSubmitted(AGENT), None)] if unmarked else []
    if isinstance(message, AIMessage):
        # Calls whose arguments were not JSON never reach the tools: the agent answers them with
        # an error when it calls the model next (and only then writes that answer into the
        # thread, before the guard's marker). They finish here, with their raw text as
        # arguments.
        return [
            (
                ToolCallFinished(AGENT, call["name"] or "", call["args"] or ""),
                None if message.id is None else f"{message.id}:{position}",
            )
            for position, call in enumerate(message.invalid_tool_calls)
        ]
    if isinstance(message, ToolMessage):
        call = _answered_call(messages, index, message.tool_call_id)
        if call is None:
            return []
        # The guard's own refusals are marked as written by it; their text is not a result.
        denied = message.additional_kwargs.get("lc_source") == PLUGIN_NAME
        result = None if denied else message.content
        failed = not denied and message.status == "error"  # the tool raised, or said it failed
        event = ToolCallFinished(AGENT, call["name"], call["args"], denied, result, failed)
        return [(event, message.id)]
    return []


def _answered_call(
    messages: Sequence[AnyMessage], index: int, tool_call_id: str
) -> ToolCall | None:
    """The tool call with ``tool_call_id`` in the nearest ``AIMessage`` before ``index``.

    Answers to invalid tool calls find none: those calls were counted at their ``AIMessage``.
    """
    for earlier in range(index - 1, -1, -1):
        message = messages[earlier]
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call["id"] == tool_call_id:
                    return call
            return None
    return None
