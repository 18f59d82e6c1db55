"""The guard as a Strands Agents hook provider: the agent's conversation folded before each model
call, and the core asked before each tool call.

Theory of operation: a Strands agent sends the model its whole conversation (``agent.messages``)
on every call, and lets middleware on the model call's input (``InvokeModelStage.Input``) change
what is sent without touching the conversation (Strands' own context injection works this way).
The hook provider attaches such a middleware to each agent it is given to
(``AgentInitializedEvent``); before each model call it folds the conversation, from an empty
state, and maps it:

* a ``toolResult`` block in a user message is a finished call: its tool and arguments come from
  the assistant's ``toolUse`` block with the same ``toolUseId``, its ``content`` is the result
  that ``progress = "result"`` compares (a failed call's result has ``status: "error"``: it
  counts like any other, and is ``failed``); a call the guard refused (its id is in the agent
  state) is denied;
* a user message with text and no tool result is a user's new message: the chain starts over,
  unless its text opens with ``<system-reminder>`` (a harness reminder);
* anything else changes nothing.

Each reminder is a ``{"text": ...}`` block of its own, appended to the user message that
carries the results of its step, in the messages sent to the model only. The fold is the same
on every call, so the model sees the same reminders in the same places every time, and an
agent restored from a session finds them again.

Before a tool runs, ``BeforeToolCallEvent`` asks the core's ``attempt`` against the state of
the latest fold, kept in the invocation's ``invocation_state`` (per agent), with the calls
admitted since (``Running``) counted in, and a refused attempt counted at once; a ``Deny``
sets ``cancel_tool`` to the reason, which Strands puts into the call's result (``status:
"error"``), so the model reads why; the call's id is kept in the agent state
(``agent.state["repeat_guard"]``, stored with a session) so the fold counts it as refused.

Fail open: an exception from the guard's own code is logged in one line; the model is sent
the conversation unchanged, or the call runs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from strands.hooks import AgentInitializedEvent, BeforeToolCallEvent, HookProvider, HookRegistry
from strands.middleware import InvokeModelStage
from strands.middleware.stages import InvokeModelContext
from strands.types.content import ContentBlock, Message, Messages

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
    "AGENT",
    "PLUGIN_NAME",
    "STATE_KEY",
    "GuardConfigError",
    "Reducer",
    "RepeatGuard",
    "reminder_block",
    "resolve_config",
]

STATE_KEY = "repeat_guard"
"""The key of the guard's entry in the agent state and in the invocation state."""

AGENT = "agent"
"""The core's id for the agent of a conversation: each is folded on its own, so one suffices."""

_ENVELOPE = "<system-reminder>"
_log = logging.getLogger("repeat_guard_strands")


def reminder_block(reminder: Reminder) -> ContentBlock:
    """Return the content block carrying ``reminder``: a text block of its own."""
    return {"text": reminder.text}


def _fail_open(error: Exception, consequence: str) -> None:
    _log.error("%s failed (%s: %s); %s", PLUGIN_NAME, type(error).__name__, error, consequence)


class RepeatGuard(HookProvider):
    """The repeat-tool-call guard as a hook provider: ``Agent(..., hooks=[RepeatGuard()])``.

    ``config`` is a ``repeat_guard.GuardConfig``, a mapping in the core's keys (parsed with the
    core's ``resolve_config``, raising ``GuardConfigError`` when invalid) or ``None`` for the
    defaults. One guard may serve many agents: each agent's chain is its own conversation's.
    ``reducer`` is the transition function, injectable for tests.
    """

    def __init__(
        self,
        config: GuardConfig | Mapping[str, object] | None = None,
        *,
        reducer: Reducer = reduce,
    ) -> None:
        self.config = resolve_config(config)
        self.reducer = reducer

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Attach the model-input middleware to each agent, and ask before each tool call."""
        registry.add_callback(AgentInitializedEvent, self._attach)
        registry.add_callback(BeforeToolCallEvent, self._before_tool)

    def _attach(self, event: AgentInitializedEvent) -> None:
        event.agent.add_middleware(InvokeModelStage.Input, self.before_model)

    def before_model(self, context: InvokeModelContext) -> InvokeModelContext:
        """Fold the conversation; send it with each reminder after the results of its step."""
        try:
            state, messages = self._fold(context.messages, _refused(context.agent))
            _turns(context.invocation_state)[id(context.agent)] = _Turn(state)
            return context.replace(messages=messages)
        except Exception as error:
            _fail_open(error, "the model is sent the conversation unchanged")
            return context

    def _before_tool(self, event: BeforeToolCallEvent) -> None:
        try:
            self._admit(event)
        except Exception as error:
            _fail_open(error, "the call runs unguarded")

    def _admit(self, event: BeforeToolCallEvent) -> None:
        use = event.tool_use
        turns = _turns(event.invocation_state)
        agent = event.agent
        turn = turns.get(id(agent))
        if turn is None:
            turn = turns[id(agent)] = _Turn(GuardState.initial(self.config))
        call = ToolCallFinished(AGENT, use["name"], use["input"])
        # The refused attempt counts at once; an admitted call waits among the running ones
        # until the next model call folds its result.
        verdict, turn.state, _ = attempt(turn.state, call, turn.running, reducer=self.reducer)
        if not isinstance(verdict, Deny):
            turn.running = turn.running.admitted(use["toolUseId"], call)
        else:
            stored = agent.state.get(STATE_KEY)
            refused = list(stored.get("refused", ())) if isinstance(stored, Mapping) else []
            agent.state.set(STATE_KEY, {"refused": [*refused, use["toolUseId"]]})
            event.cancel_tool = verdict.reason

    def _fold(self, messages: Messages, refused: set[object]) -> tuple[GuardState, Messages]:
        state = GuardState.initial(self.config)
        calls: dict[object, tuple[str, object]] = {}
        sent: Messages = []
        for message in messages:
            blocks = message.get("content", [])
            results = [block["toolResult"] for block in blocks if "toolResult" in block]
            calls.update(
                (
                    block["toolUse"]["toolUseId"],
                    (block["toolUse"]["name"], block["toolUse"]["input"]),
                )
                for block in blocks
                if "toolUse" in block
            )
            step: list[Reminder] = []
            for finished in _finished(results, calls, refused):
                state, reminders = self.reducer(state, finished)
                step.extend(reminders)
            if message.get("role") == "user" and not results and _is_prompt(blocks):
                state, _ = self.reducer(state, PromptSubmitted(AGENT))
            sent.append(_with_reminders(message, step))
        return state, sent


def _finished(
    results: Sequence[Mapping[str, Any]],
    calls: Mapping[object, tuple[str, object]],
    refused: set[object],
) -> list[ToolCallFinished]:
    finished = []
    for result in results:
        call = calls.get(result.get("toolUseId"))
        if call is None:
            continue
        name, arguments = call
        denied = result.get("toolUseId") in refused
        content = None if denied else result.get("content")
        failed = not denied and result.get("status") == "error"
        finished.append(ToolCallFinished(AGENT, name, arguments, denied, content, failed))
    return finished


def _is_prompt(blocks: Sequence[ContentBlock]) -> bool:
    texts = [block["text"] for block in blocks if "text" in block]
    return bool(texts) and not texts[0].startswith(_ENVELOPE)


def _with_reminders(message: Message, step: Sequence[Reminder]) -> Message:
    if not step:
        return message
    blocks = [*message["content"], *(reminder_block(reminder) for reminder in step)]
    return {**message, "content": blocks}


@dataclass
class _Turn:
    """One agent's state as of its latest model call (with the refusals since), and the calls
    admitted since, still running."""

    state: GuardState
    running: Running = field(default_factory=Running)


def _turns(invocation_state: dict[str, Any]) -> dict[int, _Turn]:
    """The invocation's latest turn of each agent (a multi-agent run shares one dict)."""
    turns: dict[int, _Turn] = invocation_state.setdefault(STATE_KEY, {})
    return turns


def _refused(agent: Any) -> set[object]:
    stored = agent.state.get(STATE_KEY)
    return set(stored.get("refused", ())) if isinstance(stored, Mapping) else set()
