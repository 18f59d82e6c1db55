"""The ``serve`` command: the guard as a JSONL sidecar for harnesses in other languages.

Protocol: every input line is answered by exactly one output line, in order, flushed at once,
so a harness may write one event and block reading its answer. An event is a JSON object:

* ``{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {...}, "denied": false}``
  (``agent`` may be ``null`` for a call outside any agent; ``denied`` and ``result``, what the
  tool returned, are optional);
* ``{"type": "tool_result", "agent": "a", "tool": "grep", "arguments": {...}, "result": ...}``
  (the result of a call reported without one: the core's ``ToolCallReturned``);
* ``{"type": "prompt", "agent": "a"}``;
* ``{"type": "dispose", "agent": "a"}``.

The answer is ``{"reminders": [...]}`` (an empty list when nothing fires), each reminder with
``agent``, ``tool``, ``count``, ``form``, ``summary`` and ``text``; a line that is not such an
event (including a blank line) is answered ``{"error": "line N: ..."}`` and the sidecar goes on.

A harness that can refuse a call asks first, with the call as it would be reported but typed
``"admit"``: ``{"type": "admit", "agent": "a", "tool": "grep", "arguments": {...}}``. The
answer is the core's ``admit``, ``{"admit": true}`` or ``{"admit": false, "reason": "..."}``;
it changes nothing, and the harness then reports the call (``"denied": true`` when it refused
it), which counts like any other.
Output is ASCII (``ensure_ascii``), so no locale can garble it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import BinaryIO

from returns.pipeline import is_successful

from repeat_guard import (
    Deny,
    Event,
    GuardConfig,
    GuardState,
    ToolCallFinished,
    admit,
    event_from_json,
    parse_error_reason,
    reduce,
)
from repeat_guard_transcripts import LineFault, bounded_lines

from ._reminder_json import reminder_fields

__all__ = ["ADMIT", "AdmitQuery", "LineError", "parse_event", "serve"]


@dataclass(frozen=True, slots=True)
class LineError:
    """Why an input line is not an event."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


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
        return _Problem(f"invalid JSON: {parse_error_reason(error)}")


@dataclass(frozen=True, slots=True)
class AdmitQuery:
    """A question before a call runs: would ``call`` pass the configured hard limits?"""

    call: ToolCallFinished


def parse_event(number: int, data: bytes) -> Event | AdmitQuery | LineError:
    """Return the event (or admit query) on input line ``number`` (raw bytes), or why it is
    not one.

    The JSON is read here; the mapping becomes an event through the core's one codec,
    ``event_from_json``, whose message names the problem. An ``"admit"`` line is read as the
    ``"tool_call"`` it asks about.
    """
    value = _decode(data)
    if isinstance(value, _Problem):
        return LineError(number, value.message)
    query = False
    if isinstance(value, dict) and value.get("type") == ADMIT:
        query, value = True, {**value, "type": "tool_call"}
    decoded = event_from_json(value)
    if not is_successful(decoded):
        return LineError(number, decoded.failure().message)
    event = decoded.unwrap()
    if query:
        assert isinstance(event, ToolCallFinished)  # a "tool_call" decodes to nothing else
        return AdmitQuery(event)
    return event


ADMIT = "admit"
"""The ``type`` of a line asking whether a call may run."""


def _answer(state: GuardState, number: int, data: bytes) -> tuple[GuardState, dict[str, object]]:
    if isinstance(data, LineFault):
        return state, {"error": str(LineError(number, data.message))}
    event = parse_event(number, data)
    if isinstance(event, LineError):
        return state, {"error": str(event)}
    if isinstance(event, AdmitQuery):
        verdict = admit(state, event.call)
        if isinstance(verdict, Deny):
            return state, {"admit": False, "reason": verdict.reason}
        return state, {"admit": True}
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
