"""ACP bytes to messages: one JSON-RPC message per line, raw or in a recorder's record.

A line is a raw JSON-RPC message, or a record ``{"dir": "c2a"|"a2c", "msg": ..., "ts"?}``
written by a recorder (``c2a``: client to agent), or a line of an IDE's log, whose
``AcpTransport`` lines carry the messages the IDE (the client) sent (``OUT``) and received
(``IN``) after a timestamp::

    2025-11-14 19:57:12,975 [     34]   FINE - AcpTransport - OUT: {"jsonrpc": "2.0", ...}

``log_line`` splits such a line; the reader treats it as the record it stands for.

Each message is validated before anything is read from it: a request's id must be a string or
an integer (never a boolean, a float, an object), and is then tagged by its type, so ``1`` and
``"1"`` stay distinct keys. Anything else becomes a message for a diagnostic; nothing here
raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, TypeGuard

from repeat_guard import json_type_name

__all__ = [
    "OTHER_LOG_LINE",
    "Direction",
    "Ident",
    "LogLine",
    "Message",
    "Request",
    "Response",
    "decode_message",
    "is_record",
    "log_line",
]

Direction = Literal["c2a", "a2c"]
_DIRECTIONS: tuple[Direction, ...] = ("c2a", "a2c")
Ident = tuple[bool, str]
"""A request id as a key: (was it a string, its text)."""


class Request(NamedTuple):
    """A request (``ident`` set) or a notification (``ident`` None) with object params.

    A tuple, not a frozen dataclass: one is built per line and never leaves the reader."""

    direction: Direction | None
    method: str
    ident: Ident | None
    params: Mapping[str, object]


class Response(NamedTuple):
    """A response to the request ``ident``; ``result`` is ``None`` for an error response."""

    direction: Direction | None
    ident: Ident
    result: object


Message = Request | Response

# A ``Request`` per line without the named tuple's ``__new__`` in between.
_new_request: Callable[[type[Request], tuple[object, ...]], Request] = tuple.__new__


def _ident(value: object) -> Ident | str:
    if isinstance(value, str):
        return (True, value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (False, str(value))
    return f"id must be a string or an integer, got {json_type_name(value)}"


def _unwrap(value: Mapping[str, object]) -> tuple[Direction, object] | str:
    direction = value.get("dir")
    for known in _DIRECTIONS:
        if direction == known:
            return known, value["msg"]
    return f'record "dir" must be "c2a" or "a2c", got {json_type_name(direction)}'


def is_record(value: object) -> TypeGuard[dict[str, object]]:
    """Whether a decoded line is in the recorder's ``{"dir", "msg"}`` form."""
    return isinstance(value, dict) and "msg" in value and "jsonrpc" not in value


def decode_message(value: object) -> Message | str:
    """Return the message a decoded line holds, or why it holds none."""
    if not isinstance(value, dict):
        return f"expected a JSON object, got {json_type_name(value)}"
    direction: Direction | None = None
    message: object = value
    if "msg" in value and "jsonrpc" not in value:
        unwrapped = _unwrap(value)
        if isinstance(unwrapped, str):
            return unwrapped
        direction, message = unwrapped
    if not isinstance(message, dict):
        return f"the JSON-RPC message is {json_type_name(message)}, not an object"
    method = message.get("method")
    if isinstance(method, str):
        return _request(direction, method, message)
    if "id" in message and ("result" in message or "error" in message):
        ident = _ident(message["id"])
        if isinstance(ident, str):
            return f"response {ident}"
        return Response(direction, ident, message.get("result"))
    return "neither a request, a notification nor a response"


def _request(
    direction: Direction | None, method: str, message: Mapping[str, object]
) -> Message | str:
    params = message.get("params", {})
    if not isinstance(params, dict):
        return f"{method}: params must be an object, got {json_type_name(params)}"
    if "id" not in message:
        return _new_request(Request, (direction, method, None, params))
    ident = _ident(message["id"])
    if isinstance(ident, str):
        return f"{method}: request {ident}"
    return _new_request(Request, (direction, method, ident, params))


@dataclass(frozen=True, slots=True)
class LogLine:
    """An IDE log's ``AcpTransport`` line: who sent the message, when, and its JSON text.

    ``prefix`` is the line up to and including ``AcpTransport - ``, so a line written beside
    it can take the same form."""

    direction: Direction
    timestamp: str
    prefix: bytes
    payload: bytes


OTHER_LOG_LINE: Final = "another logger's line"
"""What ``log_line`` says of a log line that carries no ACP message (another logger's)."""

# A log line opens with its date and time; JSON lines open with a brace or a space.
_LOG_OPENING = re.compile(rb"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d")
_TRANSPORT = re.compile(
    rb"(?P<date>\d{4}-\d\d-\d\d)[ T](?P<time>\d\d:\d\d:\d\d)(?:[,.](?P<fraction>\d+))?"
    rb"[^\n]*? AcpTransport - (?P<direction>IN|OUT): "
)


def log_line(raw: bytes) -> LogLine | str | None:
    """Split an IDE log line: its ``LogLine`` when it carries an ACP message,
    ``OTHER_LOG_LINE`` when it is another logger's, ``None`` when it is no log line at all."""
    if _LOG_OPENING.match(raw) is None:
        return None
    found = _TRANSPORT.match(raw)
    if found is None:
        return OTHER_LOG_LINE
    fraction = found["fraction"]
    timestamp = (found["date"] + b"T" + found["time"]).decode("ascii")
    if fraction is not None:
        timestamp += "." + fraction.decode("ascii")
    direction: Direction = "c2a" if found["direction"] == b"OUT" else "a2c"
    prefix = raw[: found.start("direction")]
    return LogLine(direction, timestamp, prefix, raw[found.end() :])
