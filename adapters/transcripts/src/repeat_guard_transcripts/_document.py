"""Whole JSON documents (SWE-agent ``.traj``, OpenHands trajectories) with line numbers.

These formats are one (usually indented) JSON document, not one value per line. The lines are
gathered, up to ``MAX_DOCUMENT_BYTES``, and the document is walked with the standard decoder's
``raw_decode``, one element of the interesting array at a time, so each element comes with
the line it starts on and nothing is parsed twice. A document that breaks off gives a
diagnostic at the line where it does, after the elements read before it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterable, Iterator
from typing import Final, NamedTuple

from repeat_guard import parse_error_reason

from ._items import Diagnostic
from ._lines import LineFault, scan_json

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "Cursor",
    "Document",
    "Element",
    "cursor",
    "document_array",
    "gather",
    "line_of",
    "walk_array",
    "walk_object",
]

MAX_DOCUMENT_BYTES: Final = 512 * 1024 * 1024
"""The largest document a whole-document reader holds; a larger one gets a diagnostic."""


class Element(NamedTuple):
    """A decoded value, the line it starts on, and where it lies in the text."""

    line: int
    value: object
    start: int
    end: int


# Elements are read with ``scan_json``, the scanner the standard decoder's ``raw_decode`` runs:
# one Python frame less per element. It says there is no value with ``StopIteration``, which
# ``raw_decode`` words as ``Expecting value``; ``value`` does the same.
# JSON's whitespace, in one match rather than a Python loop over its characters.
_SPACE = re.compile(r"[ \t\n\r]*")


class Document(NamedTuple):
    """A gathered document's text and, when its bytes are not all UTF-8, where that stops:
    ``cut``, the index in ``text`` of the first character that was no UTF-8 (the bytes from
    there are kept as lone surrogates), and ``fault``, its diagnostic."""

    text: str
    cut: int | None = None
    fault: Diagnostic | None = None


def gather(lines: Iterable[bytes], file: str) -> Iterator[Diagnostic | Document]:
    """Yield the diagnostic of a document that cannot be read whole, or the document."""
    parts: list[bytes] = []
    size = 0
    for number, line in enumerate(lines, start=1):
        if isinstance(line, LineFault):
            yield Diagnostic(file, number, line.message)
            return
        size += len(line)
        if size > MAX_DOCUMENT_BYTES:
            yield Diagnostic(
                file, number, f"document longer than the limit of {MAX_DOCUMENT_BYTES} bytes"
            )
            return
        parts.append(line)
    data = b"".join(parts)
    try:
        yield Document(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        # What comes before the first byte that is not UTF-8 is still read, as a document
        # broken off there would be.
        where = data.count(b"\n", 0, error.start) + 1
        fault = Diagnostic(file, where, f"not UTF-8 ({error.reason} at byte {error.start})")
        cut = len(data[: error.start].decode("utf-8"))
        yield Document(data.decode("utf-8", "surrogateescape"), cut, fault)


class Cursor:
    """A position in the text, and its line, advanced monotonically."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.position = 0
        self.line = 1

    def skip_space(self) -> str:
        """Skip whitespace; return the next character ("" at the end)."""
        text = self.text
        space = _SPACE.match(text, self.position)
        assert space is not None  # the pattern matches the empty string
        position = space.end()
        self.move(position)
        return text[position : position + 1]

    def move(self, position: int) -> None:
        self.line += self.text.count("\n", self.position, position)
        self.position = position

    def value(self) -> Element | Diagnostic:
        """Decode the value here; return it as an element, or a diagnostic."""
        start = self.line
        position = self.position
        try:
            value, end = scan_json(self.text, position)
        except StopIteration as stop:
            return self.problem(stop.value, "invalid JSON: Expecting value")
        except json.JSONDecodeError as error:
            return self.problem(error.pos, f"invalid JSON: {error.msg}")
        except RecursionError:
            return Diagnostic(self.file, start, "JSON nested too deeply to parse")
        except ValueError as error:  # a number too long to convert, whole or not
            return Diagnostic(self.file, start, parse_error_reason(error))
        self.move(end)
        return Element(start, value, position, end)

    def problem(self, position: int, message: str) -> Diagnostic:
        line = self.line + self.text.count("\n", self.position, max(position, self.position))
        return Diagnostic(self.file, line, message)

    def expect(self, characters: str, what: str) -> str | Diagnostic:
        found = self.skip_space()
        if found and found in characters:
            self.move(self.position + 1)
            return found
        return self.problem(self.position, f"expected {what}")


def walk_array(cursor: Cursor) -> Generator[Element | Diagnostic, None, bool]:
    """Yield the elements of the array that opens at ``cursor``, after whitespace (the caller
    has seen its ``[``), each with its first line; return whether it closed cleanly."""
    cursor.skip_space()
    cursor.move(cursor.position + 1)
    if cursor.skip_space() == "]":
        cursor.move(cursor.position + 1)
        return True
    while True:
        cursor.skip_space()
        element = cursor.value()
        yield element
        if isinstance(element, Diagnostic):
            return False
        separator = cursor.expect(",]", "',' or ']'")
        if separator != ",":
            if isinstance(separator, Diagnostic):
                yield separator
                return False
            return True


def document_array(cursor: Cursor) -> Iterator[Element | Diagnostic]:
    """Yield the elements of the document that is one array, then a diagnostic if anything
    but whitespace follows it."""
    if (yield from walk_array(cursor)):
        yield from _end(cursor)


def walk_object(cursor: Cursor, key: str) -> Iterator[Element | Diagnostic]:
    """Yield the elements of the array under ``key`` of the document that is one object (the
    other members are decoded and dropped), each with its first line; then a diagnostic if the
    rest of the document is not JSON, or anything but whitespace follows it."""
    opened = cursor.expect("{", "an object")
    if isinstance(opened, Diagnostic):
        yield opened
        return
    found = False
    closed = cursor.skip_space() == "}"
    if closed:
        cursor.move(cursor.position + 1)
    while not closed:
        member = yield from _member(cursor, key if not found else None)
        if member is None:
            return
        found = found or member
        separator = cursor.expect(",}", "',' or '}'")
        if isinstance(separator, Diagnostic):
            yield separator
            return
        closed = separator == "}"
    if not found:
        yield cursor.problem(cursor.position, f"no {key!r} array in the document")
        return
    yield from _end(cursor)


def _member(cursor: Cursor, key: str | None) -> Generator[Element | Diagnostic, None, bool | None]:
    """Read one member: yield the elements when it is the array under ``key``; return whether
    it was, or ``None`` after a diagnostic."""
    cursor.skip_space()
    name = cursor.value()
    colon = name if isinstance(name, Diagnostic) else cursor.expect(":", "':'")
    if isinstance(colon, Diagnostic):
        yield colon
        return None
    if isinstance(name, Element) and name.value == key and cursor.skip_space() == "[":
        return True if (yield from walk_array(cursor)) else None
    cursor.skip_space()
    value = cursor.value()
    if isinstance(value, Diagnostic):
        yield value
        return None
    return False


def _end(cursor: Cursor) -> Iterator[Diagnostic]:
    if cursor.skip_space():
        yield cursor.problem(cursor.position, "text after the end of the document")


def line_of(text: str, element: Element, needle: str) -> int:
    """The line of the first ``needle`` inside ``element`` (its first line when absent)."""
    found = text.find(needle, element.start, element.end)
    return element.line if found < 0 else element.line + text.count("\n", element.start, found)


def cursor(text: str, file: str) -> Cursor:
    """A cursor at the start of ``text``."""
    return Cursor(text, file)
