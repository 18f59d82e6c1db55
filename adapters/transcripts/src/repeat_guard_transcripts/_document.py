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
    "Element",
    "document_array",
    "line_of",
    "walk_array",
    "walk_object",
]

MAX_DOCUMENT_BYTES: Final = 512 * 1024 * 1024
"""The most text a whole-document reader holds at once: the rest of a JSON value it is reading
(one step, one event) and what is left of the chunk around it. A longer value gets a
diagnostic."""

# Text is read a chunk of lines at a time, and the text already walked past is dropped.
_CHUNK = 1 << 20
# How near the end of the text read so far a JSON error may be and still be the cut between
# two chunks (a literal, a number or an escape cut short) rather than invalid JSON.
_NEAR_THE_END = 16


class Element(NamedTuple):
    """A decoded value, the line it starts on, and where it lies in the cursor's text."""

    line: int
    value: object
    start: int
    end: int


# Elements are read with ``scan_json``, the scanner the standard decoder's ``raw_decode`` runs:
# one Python frame less per element. It says there is no value with ``StopIteration``, which
# ``raw_decode`` words as ``Expecting value``; ``value`` does the same.
# JSON's whitespace, in one match rather than a Python loop over its characters.
_SPACE = re.compile(r"[ \t\n\r]*")


class _Stopped(NamedTuple):
    """Where scanning a value stopped, and why (``None``: a value that ends where the text
    read so far does, which more text could make longer)."""

    position: int
    problem: str | None


class Cursor:
    """A position in a document read a chunk of lines at a time, and its line.

    ``text`` holds the document from a little before the position to as far as it was read:
    what the cursor has passed is dropped when more is read, so memory follows the largest
    value, not the document. Reading stops for good at the end, at a line that could not be
    read, at a byte that is not UTF-8 (the text before it is kept) or when one value would
    take more than ``MAX_DOCUMENT_BYTES``; ``fault`` is then the diagnostic that says so.
    """

    def __init__(self, lines: Iterable[bytes], file: str) -> None:
        self.lines = iter(lines)
        self.file = file
        self.text = ""
        self.position = 0
        self.line = 1
        self.ended = False
        self.fault: Diagnostic | None = None
        self._number = 0  # lines read
        self._bytes = 0  # bytes read

    def _fill(self) -> bool:
        """Read about a chunk more, dropping the text passed; return whether any came."""
        parts: list[str] = []
        size = 0
        while size < _CHUNK and not self.ended:
            part = self._next_line()
            if part is not None:
                parts.append(part)
                size += len(part)
        if len(self.text) - self.position + size > MAX_DOCUMENT_BYTES:
            message = f"a JSON value longer than the limit of {MAX_DOCUMENT_BYTES} bytes"
            self._stop(message)
            self.fault = Diagnostic(self.file, self.end_line(), message)
            return False
        self.text = self.text[self.position :] + "".join(parts)
        self.position = 0
        return bool(parts)

    def _next_line(self) -> str | None:
        line = next(self.lines, None)
        if line is None:
            self.ended = True
            return None
        self._number += 1
        if isinstance(line, LineFault):
            self._stop(line.message)
            return None
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            where = self._bytes + error.start
            self._stop(f"not UTF-8 ({error.reason} at byte {where})")
            return line[: error.start].decode("utf-8")  # what comes before it is still read
        self._bytes += len(line)
        return text

    def _stop(self, message: str) -> None:
        self.ended = True
        self.fault = Diagnostic(self.file, self._number, message)

    def skip_space(self) -> str:
        """Skip whitespace; return the next character ("" at the end)."""
        while True:
            space = _SPACE.match(self.text, self.position)
            assert space is not None  # the pattern matches the empty string
            self.move(space.end())
            if self.position < len(self.text) or not self._fill():
                return self.text[self.position : self.position + 1]

    def move(self, position: int) -> None:
        self.line += self.text.count("\n", self.position, position)
        self.position = position

    def value(self) -> Element | Diagnostic:
        """Decode the value here; return it as an element, or a diagnostic."""
        while True:
            found = self._scan()
            if not isinstance(found, _Stopped) or self.ended:
                return self._decoded(found)
            position, problem = found
            held = len(self.text) - self.position
            if isinstance(problem, str) and not _maybe_cut(self.text, position, problem):
                return self._decoded(found)
            # Cut between two chunks: read on until the text held is twice as long, so that a
            # long value is scanned a bounded number of times.
            while len(self.text) - self.position < 2 * held and self._fill():
                pass

    def _scan(self) -> Element | Diagnostic | _Stopped:
        """The value here, a diagnostic, or where scanning stopped and why."""
        start, position = self.line, self.position
        try:
            value, end = scan_json(self.text, position)
        except StopIteration as stop:
            return _Stopped(stop.value, "Expecting value")
        except json.JSONDecodeError as error:
            return _Stopped(error.pos, error.msg)
        except RecursionError:
            return Diagnostic(self.file, start, "JSON nested too deeply to parse")
        except ValueError as error:  # a number too long to convert, whole or not
            return Diagnostic(self.file, start, parse_error_reason(error))
        if end == len(self.text) and not self.ended:
            return _Stopped(end, None)
        self.move(end)
        return Element(start, value, position, end)

    def _decoded(self, found: Element | Diagnostic | _Stopped) -> Element | Diagnostic:
        if isinstance(found, _Stopped):
            position, problem = found
            return self.problem(position, f"invalid JSON: {problem}")
        return found

    def end_line(self) -> int:
        """The line the text read so far ends on."""
        return self.line + self.text.count("\n", self.position)

    def problem(self, position: int, message: str) -> Diagnostic:
        line = self.line + self.text.count("\n", self.position, max(position, self.position))
        return Diagnostic(self.file, line, message)

    def expect(self, characters: str, what: str) -> str | Diagnostic:
        found = self.skip_space()
        if found and found in characters:
            self.move(self.position + 1)
            return found
        return self.problem(self.position, f"expected {what}")


def _maybe_cut(text: str, position: int, problem: str) -> bool:
    """Whether a JSON error at ``position`` may come from the text being cut short there."""
    return problem.startswith("Unterminated string") or position >= len(text) - _NEAR_THE_END


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
    if isinstance(name, Element) and cursor.skip_space() == "[":
        if name.value == key:
            return True if (yield from walk_array(cursor)) else None
        # Another array (SWE-agent's ``history``), read element by element and dropped.
        for element in walk_array(cursor):
            if isinstance(element, Diagnostic):
                yield element
                return None
        return False
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
