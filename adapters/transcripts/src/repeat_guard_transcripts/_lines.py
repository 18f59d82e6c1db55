"""Bytes to lines, and lines to JSON values, with every failure turned into a diagnostic.

``bounded_lines`` reads a binary stream line by line without ever holding more than
``MAX_LINE_BYTES`` of one line: a longer line is skipped in chunks and stands in the stream as
a ``LineFault``, as does a read error (``/proc/self/mem`` answers ``EIO``), after which the
stream ends. ``json_lines`` is the one place a JSON Lines reader decodes: blank lines are
skipped, and each bad line becomes a ``Diagnostic`` naming the file and line.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from json.scanner import make_scanner
from typing import BinaryIO, TypeVar

import msgspec
import orjson

from repeat_guard import parse_error_reason

from ._items import Diagnostic

__all__ = [
    "MAX_LINE_BYTES",
    "JsonValue",
    "LineFault",
    "bounded_lines",
    "decode_json",
    "json_lines",
    "scan_json",
    "typed_lines",
]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line (newline included) a reader parses; longer ones get a diagnostic."""

_SKIP_CHUNK = 1 << 20

_Scanner = Callable[[str, int], tuple[object, int]]
# typeshed types the scanner's context as a scanner (a TODO there); it reads a decoder's settings.
scan_json: _Scanner = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
"""The scanner the standard library's decoder runs, for readers that call it directly:
``scan_json(text, start)`` returns the value that starts at ``start`` and where it ends, raises
``StopIteration`` (its value the position) where no value starts, and ``json.JSONDecodeError``
for a malformed one. It skips neither whitespace nor a byte-order mark, and reads no further
than its value."""


class LineFault(bytes):
    """A line that could not be read, standing in the line stream: its bytes are empty and
    ``message`` says why (a line over the limit, a read error)."""

    message: str

    def __new__(cls, message: str) -> LineFault:
        fault = super().__new__(cls)
        fault.message = message
        return fault


def _too_long(size: int, limit: int) -> str:
    return f"line of {size} bytes is longer than the limit of {limit}"


def _skip_rest(stream: BinaryIO) -> int:
    """Read past the end of the current line; return how many bytes were skipped."""
    skipped = 0
    while chunk := stream.readline(_SKIP_CHUNK):
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


def bounded_lines(stream: BinaryIO, limit: int | None = None) -> Iterator[bytes]:
    """Yield the lines of ``stream`` (each with its newline, the last maybe without).

    A line longer than ``limit`` bytes (default ``MAX_LINE_BYTES``) is yielded as a
    ``LineFault`` after being skipped; a read error is yielded as a ``LineFault`` and ends the
    lines. Never raises ``OSError``.
    """
    limit = MAX_LINE_BYTES if limit is None else limit
    try:
        while line := stream.readline(limit):
            if len(line) == limit and not line.endswith(b"\n"):
                skipped = _skip_rest(stream)
                if skipped:
                    yield LineFault(_too_long(limit + skipped, limit))
                    continue
            yield line
    except OSError as error:
        yield LineFault(f"read failed: {error.strerror or error}")


class JsonValue:
    """A decoded JSON value, boxed so that a JSON string is never taken for a message."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


def decode_json(raw: bytes) -> JsonValue | str:
    """Return the JSON value of ``raw`` in a ``JsonValue`` box, or a message saying why it
    has none (a line without a newline that fails to parse is called a truncated last line).

    orjson parses first, for speed; whatever it refuses goes to the standard library, which
    decides (and words the message), so the verdicts are exactly the standard library's:
    orjson accepts nothing it refuses, and refuses some lines it accepts (``\\ud800`` escapes,
    ``NaN``). The values are the standard library's too, but for one difference: an integer
    past 64 bits (above 18446744073709551615) comes back from orjson 3.13 as the nearest float,
    where the standard library keeps it exact, so two calls whose arguments differ only in
    such integers can read as the same call. The bytes must be UTF-8: the standard library
    would take NUL-led bytes for UTF-16 or UTF-32."""
    try:
        return JsonValue(orjson.loads(raw))
    except orjson.JSONDecodeError:
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not UTF-8 ({error.reason} at byte {error.start})"
    try:
        return JsonValue(json.loads(text))
    except RecursionError:
        return "JSON nested too deeply to parse"
    except json.JSONDecodeError as error:
        truncated = not raw.endswith(b"\n")
        return f"{'truncated last line' if truncated else 'invalid JSON'}: {error}"
    except ValueError as error:  # a number too long to convert, whole or not
        return f"invalid JSON: {parse_error_reason(error)}"


def _slow_line(raw: bytes, number: int, file: str) -> tuple[int, object] | Diagnostic | None:
    """What ``json_lines`` yields for a line orjson refused: a diagnostic, nothing for a blank
    line, or the value the standard library finds in it."""
    if isinstance(raw, LineFault):
        return Diagnostic(file, number, raw.message)
    if not raw or raw.isspace():
        return None
    decoded = decode_json(raw)
    if isinstance(decoded, JsonValue):
        return number, decoded.value
    return Diagnostic(file, number, decoded)


def _decoded(raw: bytes, number: int, file: str) -> tuple[int, object] | Diagnostic | None:
    """What ``json_lines`` yields for one line (``None`` for a blank line)."""
    if len(raw) > MAX_LINE_BYTES:
        return Diagnostic(file, number, _too_long(len(raw), MAX_LINE_BYTES))
    try:
        return number, orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _slow_line(raw, number, file)


_Typed = TypeVar("_Typed")

_REFUSED = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)

# Every byte to 1 if an ASCII digit, else to 0.
_DIGITS = bytes(ord("1") if byte in b"0123456789" else ord("0") for byte in range(256))


def _may_hold_a_long_integer(raw: bytes, limit: int) -> bool:
    """Whether ``raw``, longer than ``limit`` bytes, may hold a run of more than ``limit``
    digits, an integer the standard library refuses to convert
    (``sys.get_int_max_str_digits()``) where msgspec skips it. Such a run covers three bytes in
    a row of ``raw`` taken every third of ``limit``, so a line without three digits in a row
    there holds none."""
    return b"111" in raw[:: (limit + 1) // 3].translate(_DIGITS)


def typed_lines(
    lines: Iterable[bytes],
    file: str,
    decode: Callable[[bytes], _Typed],
    convert: Callable[[object], _Typed | str],
) -> Iterator[tuple[int, _Typed] | Diagnostic]:
    """``json_lines`` for a reader that declares what it reads of a line: ``decode`` is a
    ``msgspec.json.Decoder`` of ``msgspec.Struct`` types, which validates the whole line but
    builds no Python object for a field its types do not declare (most of a transcript's
    bytes: tool outputs, file contents, thinking). Yields ``(line number, typed value)`` or a
    ``Diagnostic``, the same lines and diagnostics as ``json_lines``.

    A line ``decode`` refuses (not JSON, or JSON of other types than declared, or nested past
    its depth) goes the way ``json_lines`` takes it, and its value is given to ``convert``,
    which returns the typed value the reader reads the same way, or a message (a value that
    is not an object). msgspec checks no UTF-8 in what it skips, so a line with bytes other
    than ASCII is checked here first, and skips an integer of any length, so a line that may
    hold one longer than the standard library converts is decoded whole; it accepts nothing
    else the standard library refuses."""
    limit = sys.get_int_max_str_digits() or MAX_LINE_BYTES  # 0: no limit
    for number, raw in enumerate(lines, start=1):
        size = len(raw)
        if size <= MAX_LINE_BYTES and (size <= limit or not _may_hold_a_long_integer(raw, limit)):
            try:
                if not raw.isascii():
                    raw.decode()
                fast = decode(raw)
            except _REFUSED:
                pass
            else:
                yield number, fast
                continue
        decoded = _decoded(raw, number, file)
        if decoded is None or isinstance(decoded, Diagnostic):
            if decoded is not None:
                yield decoded
            continue
        typed = convert(decoded[1])
        yield Diagnostic(file, number, typed) if isinstance(typed, str) else (number, typed)


def json_lines(lines: Iterable[bytes], file: str) -> Iterator[tuple[int, object] | Diagnostic]:
    """Yield ``(line number, value)`` for each JSON line, or a ``Diagnostic`` for a bad one.

    Blank lines yield nothing. A line without a newline can only be the last, so a failure to
    parse it is reported as a truncated last line.
    """
    # Most lines parse: they take one orjson call, and only a refused line pays for the checks
    # (orjson parses no blank line and no ``LineFault``, whose bytes are empty).
    loads, refused = orjson.loads, orjson.JSONDecodeError
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE_BYTES:
            yield Diagnostic(file, number, _too_long(len(raw), MAX_LINE_BYTES))
            continue
        try:
            value = loads(raw)
        except refused:
            item = _slow_line(raw, number, file)
            if item is not None:
                yield item
            continue
        yield number, value
