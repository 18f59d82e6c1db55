"""The ``serve`` command: the guard as a JSONL sidecar for harnesses in other languages.

Protocol: every input line is answered by exactly one output line, in order, flushed at once,
so a harness may write one event and block reading its answer. An event is a JSON object:

* ``{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {...}, "denied": false}``
  (``agent`` may be ``null`` for a call outside any agent; ``denied`` is optional);
* ``{"type": "prompt", "agent": "a"}``;
* ``{"type": "dispose", "agent": "a"}``.

The answer is ``{"reminders": [...]}`` (an empty list when nothing fires), each reminder with
``agent``, ``tool``, ``count``, ``form``, ``summary`` and ``text``; a line that is not such an
event (including a blank line) is answered ``{"error": "line N: ..."}`` and the sidecar goes on.
Output is ASCII (``ensure_ascii``), so no locale can garble it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import BinaryIO

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    reduce,
)
from repeat_guard_transcripts import LineFault, bounded_lines

from ._reminder_json import reminder_fields

__all__ = ["LineError", "parse_event", "serve"]


@dataclass(frozen=True, slots=True)
class LineError:
    """Why an input line is not an event."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


_FIELDS = {
    "tool_call": ({"type", "agent", "tool", "arguments"}, {"denied"}),
    "prompt": ({"type", "agent"}, set[str]()),
    "dispose": ({"type", "agent"}, set[str]()),
}


@dataclass(frozen=True, slots=True)
class _Problem:
    message: str


def _decode(data: bytes) -> object:
    # Returns the parsed JSON value, or a _Problem saying why there is none.
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return _Problem(f"not UTF-8 ({error.reason} at byte {error.start})")
    text = text.rstrip("\r\n")
    if not text.strip():
        return _Problem("blank line, expected a JSON event")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        return _Problem(f"invalid JSON: {error.msg} at column {error.colno}")
    except RecursionError:
        return _Problem("JSON nested too deeply to parse")
    except ValueError as error:  # an integer too long to convert, say
        return _Problem(f"invalid JSON: {error}")


def _fields_problem(kind: str, event: Mapping[str, object]) -> str | None:
    required, optional = _FIELDS[kind]
    missing = sorted(required - event.keys())
    if missing:
        return f"{kind} event lacks {', '.join(repr(k) for k in missing)}"
    unknown = sorted(event.keys() - required - optional)
    if unknown:
        return f"{kind} event has unknown field {unknown[0]!r}"
    return None


def _build(kind: str, event: Mapping[str, object]) -> Event | str:
    agent = event["agent"]
    if kind == "tool_call":
        tool, denied = event["tool"], event.get("denied", False)
        if agent is not None and not isinstance(agent, str):
            return f"'agent' must be a string or null, got {agent!r}"
        if not isinstance(tool, str):
            return f"'tool' must be a string, got {tool!r}"
        if not isinstance(denied, bool):
            return f"'denied' must be true or false, got {denied!r}"
        return ToolCallFinished(agent, tool, event["arguments"], denied)
    if not isinstance(agent, str):
        return f"'agent' must be a string, got {agent!r}"
    return PromptSubmitted(agent) if kind == "prompt" else AgentDisposed(agent)


def parse_event(number: int, data: bytes) -> Event | LineError:
    """Return the event on input line ``number`` (raw bytes), or why it is not one."""
    value = _decode(data)
    if isinstance(value, _Problem):
        return LineError(number, value.message)
    if not isinstance(value, dict):
        return LineError(number, f"expected a JSON object, got {type(value).__name__}")
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        known = ", ".join(repr(k) for k in _FIELDS)
        return LineError(number, f"unknown event type {kind!r} (known: {known})")
    problem = _fields_problem(kind, value)
    if problem is not None:
        return LineError(number, problem)
    built = _build(kind, value)
    return LineError(number, built) if isinstance(built, str) else built


def _answer(state: GuardState, number: int, data: bytes) -> tuple[GuardState, dict[str, object]]:
    if isinstance(data, LineFault):
        return state, {"error": str(LineError(number, data.message))}
    event = parse_event(number, data)
    if isinstance(event, LineError):
        return state, {"error": str(event)}
    state, reminders = reduce(state, event)
    return state, {"reminders": [reminder_fields(r) for r in reminders]}


def serve(config: GuardConfig, source: BinaryIO, output: BinaryIO) -> int:
    """Answer the events read from ``source``, one line each, on ``output``.

    A line is never held beyond ``MAX_LINE_BYTES`` (a longer one is skipped and answered with
    an error). Returns 0 once the input ends; every other line, whatever its bytes, gets
    exactly one answer and serving goes on.
    """
    state = GuardState.initial(config)
    for number, data in enumerate(bounded_lines(source), start=1):
        state, answer = _answer(state, number, data)
        output.write(json.dumps(answer).encode("ascii") + b"\n")
        output.flush()
    return 0
