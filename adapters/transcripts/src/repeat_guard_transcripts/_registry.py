"""The reader protocol, the registry of readers, format sniffing and directory discovery."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol, runtime_checkable

from repeat_guard import Reminder

from ._items import Item
from ._lines import JsonValue, decode_json

__all__ = [
    "HEAD_BYTES",
    "Annotating",
    "Reader",
    "ResultsOptional",
    "head_objects",
    "read_items",
    "readers",
    "register",
    "sniff_head",
]

HEAD_BYTES = 256 * 1024
"""How much of a file sniffing looks at."""


class Reader(Protocol):
    """Turns the lines of one transcript file into items. Every reader is total: any bytes
    give diagnostics (file and line) and the rest of the file is still read."""

    @property
    def name(self) -> str:
        """The format's name, as ``--from`` takes it."""
        ...

    @property
    def description(self) -> str:
        """Where files of the format are found, or what they hold, in one line of
        ``replay --help``."""
        ...

    def sniff(self, head: bytes) -> bool:
        """Whether ``head``, the first bytes of a file, is in this format."""
        ...

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of ``lines`` (the file's lines as bytes), in line order."""
        ...


@runtime_checkable
class Annotating(Protocol):
    """A reader whose format can carry a reminder as a line of its own (``--annotate``).

    Its ``read`` yields every item of a line before it takes the next line.
    """

    def reminder_line(self, line: bytes, session: str, reminder: Reminder) -> bytes:
        """The line to insert after ``line``, where ``reminder`` fired in ``session``."""
        ...


@runtime_checkable
class ResultsOptional(Protocol):
    """A reader that can leave every call's result out, and then decodes no tool's output it
    does not need: for a consumer whose config reads no results (``reads_results``)."""

    def read_without_results(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """``read``, each ``ToolCallFinished`` with ``result`` ``None``."""
        ...


def read_items(reader: Reader, lines: Iterable[bytes], file: str, results: bool) -> Iterator[Item]:
    """``reader.read(lines, file)``, or, when ``results`` is false, the calls' results left out
    (``None``) by a reader that can leave them out, which may then read faster."""
    if not results and isinstance(reader, ResultsOptional):
        return reader.read_without_results(lines, file)
    return reader.read(lines, file)


@functools.lru_cache(maxsize=1)
def head_objects(head: bytes, limit: int = 20) -> tuple[dict[str, object], ...]:
    """The JSON objects on the first complete lines of ``head`` (at most ``limit``), decoded
    as the readers decode a line (``decode_json``).

    The last head's objects are kept: sniffing asks each reader in turn about the same head,
    and several of them look at its objects (a bytes object keeps its hash, so asking again
    costs a lookup)."""
    found: list[dict[str, object]] = []
    # At most ``limit`` complete lines: the part after the last split is cut short or unsplit.
    for line in head.split(b"\n", limit)[:-1]:
        decoded = decode_json(line)
        if isinstance(decoded, JsonValue) and isinstance(decoded.value, dict):
            found.append(decoded.value)
    return tuple(found)


_READERS: dict[str, Reader] = {}


def register(reader: Reader) -> Reader:
    """Add ``reader`` to the registry under its name; sniffing tries readers in this order,
    and the command offers them (``replay --from``, its ``--help``) in it."""
    _READERS[reader.name] = reader
    return reader


def readers() -> Mapping[str, Reader]:
    """The registry: format name to reader."""
    return _READERS


def sniff_head(head: bytes) -> str | None:
    """The name of the first reader that recognises ``head``, or ``None``."""
    for name, reader in _READERS.items():
        if reader.sniff(head):
            return name
    return None
