"""Claude Code and Codex hook events as guard events, and reminders as hook answers.

Both agents send one JSON object per hook call on stdin and read one JSON object on stdout;
Codex adopted Claude Code's field names, so one table serves both. What differs is where the
answer lands: Claude Code wraps a hook's ``additionalContext`` in its own ``<system-reminder>``
block, so it gets the reminder's body; Codex passes the text on as a developer message as it
is, so it gets the reminder's full text. Either way the model sees one envelope.

Where a call is counted: at ``PreToolUse``. Run against the real binaries (Claude Code 2.1.197,
Codex 0.171.0), a call that a permission rule or the working-directory check refuses fires
``PreToolUse`` and nothing after it (no ``PostToolUse``, no ``PostToolUseFailure``), while the
``additionalContext`` of a ``PreToolUse`` answer reaches the model in the next request right
after that call's result, exactly where a ``PostToolUse`` answer would. ``PreToolUse`` is
therefore the one hook that sees every attempt, denied ones included, once each.

Results (installed with ``install --results``): ``PostToolUse`` carries the call's
``tool_response``, and becomes ``ToolCallReturned``, which only ``progress = "result"`` reads.
Claude Code reports a call that failed (a command exiting non-zero: ``"Exit code 1\n<its
output>"``) with ``PostToolUseFailure`` and its ``error`` instead, whose result is that error,
kept apart from any response; an interrupted call's result is unknown. Codex reports a failed
command with ``PostToolUse`` and its output.

Agents: a session's main agent is the session id; a call made inside a subagent carries
``agent_id`` (both agents send it, with the parent's ``session_id``), and its agent is
``<session id>/<agent_id>``, so a subagent's chain never mixes with its parent's. Codex also
fires ``UserPromptSubmit`` with the subagent's ``agent_id`` for the task a subagent starts with:
that resets the subagent, never its parent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

from repeat_guard import (
    AgentDisposed,
    Event,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    json_type_name,
)

if TYPE_CHECKING:
    from returns.result import Result

__all__ = [
    "DIALECTS",
    "AgentEvent",
    "Dialect",
    "HookInput",
    "SessionEnded",
    "Unused",
    "agent_key",
    "hook_input_or_reason",
    "parse_hook_input",
    "render_answer",
]

Dialect = Literal["claude-code", "codex"]
DIALECTS: tuple[Dialect, ...] = ("claude-code", "codex")

# Hook event name -> what it is to the guard. Every other event is unused.
_CALL_EVENTS = frozenset({"PreToolUse"})
_RESULT_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})
_PROMPT_EVENTS = frozenset({"UserPromptSubmit"})
_DISPOSE_EVENTS = frozenset({"SubagentStop"})
_END_EVENTS = frozenset({"SessionEnd"})
USED_EVENTS = _CALL_EVENTS | _RESULT_EVENTS | _PROMPT_EVENTS | _DISPOSE_EVENTS | _END_EVENTS
# The events whose answer may carry additionalContext for the next model request.
_ANSWERED_EVENTS = _CALL_EVENTS


# The hook's own values are NamedTuples, not dataclasses: a hook is a new process for every
# tool call, which defines each class again, and a frozen, slotted dataclass costs about 1 ms to
# define against 0.14 ms for a NamedTuple (measured here). They are as immutable.
class AgentEvent(NamedTuple):
    """A guard event for one agent of ``session``."""

    session: str
    event: Event


class SessionEnded(NamedTuple):
    """The session is over: every agent in it is gone."""

    session: str


class Unused(NamedTuple):
    """A hook event the guard has nothing to do with."""


Action = AgentEvent | SessionEnded | Unused


class HookInput(NamedTuple):
    """The parts of one hook call the guard reads: its event name, ``cwd`` and meaning."""

    hook_event: str
    cwd: str | None
    action: Action


def agent_key(session: str, agent_id: str | None) -> str:
    """Return the guard's agent id for a call in ``session`` (by subagent ``agent_id``)."""
    return session if agent_id is None else f"{session}/{agent_id}"


def parse_hook_input(data: bytes) -> Result[HookInput, str]:
    """Return what the hook input ``data`` means to the guard, or why it is unusable.

    The reason never quotes the input: tool arguments must not reach a log.
    """
    from returns.result import Failure, Success  # noqa: PLC0415  # see hook_input_or_reason

    read = hook_input_or_reason(data)
    return Failure(read) if isinstance(read, str) else Success(read)


def hook_input_or_reason(data: bytes) -> HookInput | str:
    """Return what ``data`` means to the guard, or why it is unusable: ``parse_hook_input``
    without the ``Result``, which a hook process uses so that it never imports ``returns``
    (a new process for every tool call pays for every import)."""
    try:
        payload: object = json.loads(data)
    except (ValueError, RecursionError):
        return "stdin is not JSON"
    if not isinstance(payload, dict):
        return f"stdin is {json_type_name(payload)}, not a JSON object"
    hook_event = payload.get("hook_event_name")
    if not isinstance(hook_event, str):
        return "hook_event_name is missing or not a string"
    cwd = payload.get("cwd")
    where = cwd if isinstance(cwd, str) else None
    if hook_event not in USED_EVENTS:
        return HookInput(hook_event, where, Unused())
    broken = next((key for key in _ID_KEYS if not _is_unicode(payload.get(key))), None)
    if broken is not None:
        return f"{hook_event}: {broken} holds a lone surrogate"
    action = _action(hook_event, payload)
    return action if isinstance(action, str) else HookInput(hook_event, where, action)


# The store keys its rows by these ids, and SQLite's text is UTF-8, which cannot hold a lone
# surrogate (a valid JSON escape, "\\ud800"): no agent sends one, and such a call fails open.
_ID_KEYS = ("session_id", "agent_id")


def _is_unicode(value: object) -> bool:
    if not isinstance(value, str):
        return True  # not an id's problem to report here
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _action(hook_event: str, payload: Mapping[str, object]) -> Action | str:
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        return f"{hook_event}: session_id is missing or not a string"
    if hook_event in _END_EVENTS:
        return SessionEnded(session)
    agent_id = payload.get("agent_id")
    if agent_id is not None and not isinstance(agent_id, str):
        return f"{hook_event}: agent_id is not a string"
    agent = agent_key(session, agent_id)
    if hook_event in _PROMPT_EVENTS:
        # The user's message to the main agent, or (Codex) the task a subagent starts with.
        return AgentEvent(session, PromptSubmitted(agent))
    if hook_event in _DISPOSE_EVENTS:
        if agent_id is None:
            return f"{hook_event}: agent_id is missing"
        return AgentEvent(session, AgentDisposed(agent))
    return _tool_event(hook_event, payload, session, agent)


def _tool_event(
    hook_event: str, payload: Mapping[str, object], session: str, agent: str
) -> AgentEvent | str:
    # A call about to run (PreToolUse), or the result of one that ran (PostToolUse).
    tool = payload.get("tool_name")
    if not isinstance(tool, str):
        return f"{hook_event}: tool_name is missing or not a string"
    arguments = payload.get("tool_input")
    if hook_event in _RESULT_EVENTS:
        returned = ToolCallReturned(agent, tool, arguments, _result(hook_event, payload))
        return AgentEvent(session, returned)
    return AgentEvent(session, ToolCallFinished(agent, tool, arguments))


def _result(hook_event: str, payload: Mapping[str, object]) -> object:
    # What the call returned; None (unknown, never progress) when the input does not say.
    if hook_event == "PostToolUse":
        return payload.get("tool_response")
    error = payload.get("error")
    if error is None or payload.get("is_interrupt") is True:
        return None
    return {"error": error}


def render_answer(
    dialect: Dialect,
    hook_event: str,
    reminders: Sequence[Reminder],
    denied: str | None = None,
) -> bytes:
    """Return the hook's stdout for ``reminders`` and, when the call is refused, the ``denied``
    reason (``permissionDecision: "deny"``); empty when there is nothing to say."""
    if hook_event not in _ANSWERED_EVENTS or (not reminders and denied is None):
        return b""
    output = {"hookEventName": hook_event}
    if denied is not None:
        output["permissionDecision"] = "deny"
        output["permissionDecisionReason"] = denied
    if reminders:
        texts = [r.body if dialect == "claude-code" else r.text for r in reminders]
        output["additionalContext"] = "\n\n".join(texts)
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=True).encode("ascii") + b"\n"
