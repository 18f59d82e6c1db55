"""Events and reminders as JSON-ready mappings, and back: the one codec adapters use for them.

``*_to_json`` returns plain dicts of strings, integers, booleans and ``None`` (an event's
``arguments`` and ``result`` are whatever the harness passed, JSON data in practice), so any
JSON encoder writes them. ``*_from_json`` accepts anything at all and returns ``Success`` with
the value or ``Failure`` with a ``CodecError`` naming where the problem is; it never raises but
what the input's own methods raise (a mapping whose ``__getitem__`` does), which no value
``json.loads`` returns can.

An event is ``{"type": "tool_call", "agent": ..., "tool": ..., "arguments": ..., "denied":
false}`` (``denied``, ``result`` and ``failed`` optional on input; ``result`` written when known,
``failed`` when true), ``{"type": "tool_result", "agent": ..., "tool": ..., "arguments": ...,
"result": ...}`` (a result reported after its call; ``failed`` as on a call), ``{"type":
"prompt", "agent": ...}`` or ``{"type": "dispose", "agent": ...}``. A reminder is its fields
under their own names, with the guard's ``source`` label first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, assert_never

from ._codec import CodecError
from ._events import AgentDisposed, Event, PromptSubmitted, ToolCallFinished, ToolCallReturned
from ._reminders import FORMS, SOURCE, Reminder

if TYPE_CHECKING:
    from returns.result import Failure, Result

__all__ = [
    "event_from_json",
    "event_to_json",
    "json_type_name",
    "reminder_from_json",
    "reminder_to_json",
]

_JSON_TYPE_NAMES: dict[type, str] = {
    type(None): "null",
    bool: "a boolean",
    int: "a number",
    float: "a number with a fraction",
    str: "a string",
    list: "an array",
    dict: "an object",
}


def json_type_name(value: object) -> str:
    """What ``value`` is, in JSON's words (``"null"``, ``"an array"``, ``"a number with a
    fraction"``, ...), for messages about a document of the wrong shape; a value no JSON parser
    gives is named by its Python type."""
    return _JSON_TYPE_NAMES.get(type(value), f"a Python {type(value).__name__}")


EVENT_TYPES = ("tool_call", "tool_result", "prompt", "dispose")
_REQUIRED = {
    "tool_call": frozenset({"type", "agent", "tool", "arguments"}),
    "tool_result": frozenset({"type", "agent", "tool", "arguments", "result"}),
    "prompt": frozenset({"type", "agent"}),
    "dispose": frozenset({"type", "agent"}),
}
_OPTIONAL = {
    "tool_call": frozenset({"denied", "result", "failed"}),
    "tool_result": frozenset({"failed"}),
    "prompt": frozenset[str](),
    "dispose": frozenset[str](),
}
_REMINDER_KEYS = ("source", "agent", "tool", "count", "form", "arguments", "text")


def event_to_json(event: Event) -> dict[str, object]:
    """Return ``event`` as a mapping; a call's ``result`` is written only when it has one."""
    match event:
        case ToolCallFinished():
            mapped: dict[str, object] = {
                "type": "tool_call",
                "agent": event.agent,
                "tool": event.tool,
                "arguments": event.arguments,
                "denied": event.denied,
            }
            if event.result is not None:
                mapped["result"] = event.result
            if event.failed:
                mapped["failed"] = True
            return mapped
        case ToolCallReturned():
            returned: dict[str, object] = {
                "type": "tool_result",
                "agent": event.agent,
                "tool": event.tool,
                "arguments": event.arguments,
                "result": event.result,
            }
            if event.failed:
                returned["failed"] = True
            return returned
        case PromptSubmitted():
            return {"type": "prompt", "agent": event.agent}
        case AgentDisposed():
            return {"type": "dispose", "agent": event.agent}
        case _:
            assert_never(event)


def event_from_json(raw: object) -> Result[Event, CodecError]:
    """Return the event ``raw`` describes, or the first problem with it."""
    if not isinstance(raw, Mapping):
        return _failure("event", raw, f"expected a JSON object, got {json_type_name(raw)}")
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in _REQUIRED:
        known = ", ".join(repr(k) for k in EVENT_TYPES)
        return _failure("event.type", kind, f"unknown event type {kind!r} (known: {known})")
    missing = sorted(_REQUIRED[kind] - raw.keys())
    if missing:
        lacking = ", ".join(repr(k) for k in missing)
        return _failure(f"event.{missing[0]}", None, f"{kind} event lacks {lacking}")
    unknown = sorted(str(k) for k in raw.keys() - _REQUIRED[kind] - _OPTIONAL[kind])
    if unknown:
        return _failure(
            f"event.{unknown[0]}", None, f"{kind} event has unknown field {unknown[0]!r}"
        )
    if kind in ("tool_call", "tool_result"):
        return _call_from_json(raw)
    agent = raw["agent"]
    if not isinstance(agent, str):
        return _failure("event.agent", agent, f"'agent' must be a string, got {agent!r}")
    from returns.result import Success  # noqa: PLC0415  # when used: see _codec

    return Success(PromptSubmitted(agent) if kind == "prompt" else AgentDisposed(agent))


def _call_from_json(raw: Mapping[str, object]) -> Result[Event, CodecError]:
    # A call, or a result reported after its call: the same fields, checked the same way.
    agent, tool = raw["agent"], raw["tool"]
    denied, failed = raw.get("denied", False), raw.get("failed", False)
    if agent is not None and not isinstance(agent, str):
        return _failure("event.agent", agent, f"'agent' must be a string or null, got {agent!r}")
    if not isinstance(tool, str):
        return _failure("event.tool", tool, f"'tool' must be a string, got {tool!r}")
    if not isinstance(denied, bool):
        return _failure("event.denied", denied, f"'denied' must be true or false, got {denied!r}")
    if not isinstance(failed, bool):
        return _failure("event.failed", failed, f"'failed' must be true or false, got {failed!r}")
    from returns.result import Success  # noqa: PLC0415  # when used: see _codec

    if raw["type"] == "tool_result":
        return Success(ToolCallReturned(agent, tool, raw["arguments"], raw["result"], failed))
    arguments, result = raw["arguments"], raw.get("result")
    return Success(ToolCallFinished(agent, tool, arguments, denied, result, failed))


def reminder_to_json(reminder: Reminder) -> dict[str, object]:
    """Return ``reminder`` as a mapping: every field under its own name, ``source`` first."""
    return {
        "source": reminder.source,
        "agent": reminder.agent,
        "tool": reminder.tool,
        "count": reminder.count,
        "form": reminder.form,
        "arguments": reminder.arguments,
        "text": reminder.text,
    }


def reminder_from_json(raw: object) -> Result[Reminder, CodecError]:
    """Return the reminder ``raw`` describes, or the first problem with it."""
    if not isinstance(raw, Mapping):
        return _failure("reminder", raw, f"expected a JSON object, got {json_type_name(raw)}")
    keys = set(raw.keys())
    if keys != set(_REMINDER_KEYS):
        missing, extra = (
            sorted(set(_REMINDER_KEYS) - keys),
            sorted(map(str, keys - set(_REMINDER_KEYS))),
        )
        what = f"lacks {missing[0]!r}" if missing else f"has unknown field {extra[0]!r}"
        return _failure("reminder", None, f"a reminder {what}")
    if raw["source"] != SOURCE:
        return _failure("reminder.source", raw["source"], f"the source must be {SOURCE!r}")
    for name in ("agent", "tool", "arguments", "text"):
        if not isinstance(raw[name], str):
            return _failure(f"reminder.{name}", raw[name], f"'{name}' must be a string")
    count = raw["count"]
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return _failure("reminder.count", count, "'count' must be an integer of 1 or more")
    form = raw["form"]
    if form not in FORMS:
        return _failure("reminder.form", form, f"'form' must be one of {', '.join(FORMS)}")
    # The mapping's values are Any to mypy; each was checked above.
    from returns.result import Success  # noqa: PLC0415  # when used: see _codec

    return Success(Reminder(raw["agent"], raw["tool"], count, form, raw["text"], raw["arguments"]))


def _failure(path: str, value: object, message: str) -> Failure[CodecError]:
    from returns.result import Failure  # noqa: PLC0415  # when used: see _codec

    return Failure(CodecError(path, value, message))
