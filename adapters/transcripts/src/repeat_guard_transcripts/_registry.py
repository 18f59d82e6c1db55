"""The reader protocol, the registry of readers, format sniffing and directory discovery."""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeGuard, runtime_checkable

from repeat_guard import Reminder, ToolCallFinished, ToolCallReturned

from ._items import Diagnostic, Item, Located, Unfinished
from ._lines import JsonValue, decode_json
from ._text import counted

__all__ = [
    "HEAD_BYTES",
    "NO_CALL",
    "Annotating",
    "FolderReading",
    "PathReading",
    "Reader",
    "ResultsOptional",
    "folder_format",
    "head_objects",
    "is_no_call_note",
    "no_call_note",
    "places",
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


_KINDS: dict[tuple[type, type], bool] = {}


def _kind_is(reader: object, protocol: type) -> bool:
    """``isinstance(reader, protocol)`` for a runtime protocol, asked once for each class of
    reader: the check walks the protocol's members every time (4 to 12 us here), and is asked
    for every file read and, for each reader, every folder walked."""
    key = (type(reader), protocol)
    found = _KINDS.get(key)
    if found is None:
        found = _KINDS[key] = isinstance(reader, protocol)
    return found


def _reads_paths(reader: Reader) -> TypeGuard[PathReading]:
    return _kind_is(reader, PathReading)


def _leaves_results_out(reader: Reader) -> TypeGuard[ResultsOptional]:
    return _kind_is(reader, ResultsOptional)


def _reads_folders(reader: Reader) -> TypeGuard[FolderReading]:
    return _kind_is(reader, FolderReading)


def read_items(
    reader: Reader,
    lines: Iterable[bytes],
    file: str,
    results: bool = True,
    path: str | None = None,
) -> Iterator[Item]:
    """The items of an input: the one way the replay and the audit read one.
    ``reader.read(lines, file)``, or, when ``results`` is false, the calls' results left out
    (``None``) by a reader that can leave them out, which may then read faster. A reader of
    paths is given ``path`` instead when it is a regular file or a folder; anything else (the
    standard input, a FIFO) is read as lines, which such a reader answers with a
    diagnostic.

    An input that yields no call at all (no ``ToolCallFinished``, ``ToolCallReturned`` or
    ``Unfinished``) and no diagnostic either ends with one note saying so (``NO_CALL``): a
    format a reader recognises but reads as empty may be a file that only looks like it, and
    is never a silent zero."""
    if path is not None and _reads_paths(reader) and _is_file_or_folder(path):
        items = reader.read_path(path, file)
    elif not results and _leaves_results_out(reader):
        items = reader.read_without_results(lines, file)
    else:
        items = reader.read(lines, file)
    return _noting_no_call(iter(items), reader.name, file)


NO_CALL = "read as {format}, none of it a tool call"
"""The note of an input that held no call, at line 1 (``no_call_note``)."""


def no_call_note(
    file: str, format: str, read: tuple[int, str] | None = None, detail: str = ""
) -> Diagnostic:
    """The note ``file``, read as ``format``, ends with when it held no call (``NO_CALL``).

    ``read_items`` adds it, bare, to an input that yielded no call and no diagnostic. A reader
    that can say what it read ends such a file with this note itself: ``read`` is how many of
    what it read (``(12, "message")``, worded here, ``12 messages read``, ``1 message read``),
    ``detail`` what they lacked, both in parentheses after the words: one note either way,
    which the audit counts (``is_no_call_note``) instead of printing."""
    message = NO_CALL.format(format=format)
    counted_read = ""
    if read is not None:
        count, noun = read
        counted_read = f"{counted(count, noun)} read"
    said = ", ".join(part for part in (counted_read, detail) if part)
    return Diagnostic(file, 1, f"{message} ({said})" if said else message, "note")


def is_no_call_note(item: Diagnostic, format: str) -> bool:
    """Whether ``item`` is a ``no_call_note`` for ``format``, whatever it says was read."""
    message = NO_CALL.format(format=format)
    said = item.message
    return (
        item.severity == "note"
        and item.line == 1
        and (said == message or said.startswith(f"{message} ("))
    )


@dataclass(slots=True)
class _Heard:
    """Whether an input's items so far held a call, or a diagnostic."""

    call: bool = False
    diagnostic: bool = False


def _noting_no_call(items: Iterator[Item], name: str, file: str) -> Iterator[Item]:
    # Each item is looked at only until the first call: the rest of the input goes straight
    # through ``chain``, whose only cost is a C-level hop per item.
    heard = _Heard()
    return itertools.chain(_until_a_call(items, heard), items, _no_call_note(heard, name, file))


_CALL_EVENTS = (ToolCallFinished, ToolCallReturned)


def _until_a_call(items: Iterator[Item], heard: _Heard) -> Iterator[Item]:
    for item in items:
        yield item
        if isinstance(item, Unfinished) or (
            isinstance(item, Located) and isinstance(item.event, _CALL_EVENTS)
        ):
            heard.call = True
            return
        heard.diagnostic = heard.diagnostic or isinstance(item, Diagnostic)


def _no_call_note(heard: _Heard, name: str, file: str) -> Iterator[Item]:
    if not heard.call and not heard.diagnostic:
        yield no_call_note(file, name)


@runtime_checkable
class PathReading(Protocol):
    """A reader of what is not one byte stream (a SQLite database, a folder of files): given a
    path, it opens what it needs itself. Its ``sniff`` still looks at a file's head (a
    database's own first bytes); its ``read`` is for a stream, which it cannot read, and says
    so in a diagnostic."""

    def read_path(self, path: str, file: str) -> Iterator[Item]:
        """Yield the items of what is at ``path``, named ``file`` in what they say."""
        ...


@runtime_checkable
class FolderReading(PathReading, Protocol):
    """A reader whose transcript is a folder: a walk that finds a folder it ``claims`` gives
    the folder as one input instead of walking into it, and the folder is sniffed and its
    size taken from its ``entry`` file."""

    @property
    def name(self) -> str:
        """The format's name, as for every reader."""
        ...

    @property
    def entry(self) -> str:
        """The name of the file in the folder that stands for it (opened to sniff it)."""
        ...

    def claims(self, names: Collection[str]) -> bool:
        """Whether a folder holding ``names`` (its files' and subfolders' names) is one
        transcript of this format."""
        ...


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


_PLACES: dict[str, tuple[str, ...]] = {}


def register(reader: Reader, *places: str) -> Reader:
    """Add ``reader`` to the registry under its name; sniffing tries readers in this order,
    and the command offers them (``replay --from``, its ``--help``) in it. ``places`` are
    where its agent keeps its transcripts (``~`` for the home folder): ``audit`` with no path
    looks in each that exists."""
    _READERS[reader.name] = reader
    _PLACES[reader.name] = places
    return reader


def places() -> tuple[str, ...]:
    """Every place a registered reader's agent keeps its transcripts, in registry order."""
    return tuple(place for found in _PLACES.values() for place in found)


def readers() -> Mapping[str, Reader]:
    """The registry: format name to reader."""
    return _READERS


def _is_file_or_folder(path: str) -> bool:
    return os.path.isfile(path) or os.path.isdir(path)


def folder_format(names: Collection[str]) -> FolderReading | None:
    """The first reader that claims a folder holding ``names``, or ``None``."""
    for reader in _READERS.values():
        if _reads_folders(reader) and reader.claims(names):
            return reader
    return None


def sniff_head(head: bytes) -> str | None:
    """The name of the first reader that recognises ``head``, or ``None``."""
    for name, reader in _READERS.items():
        if reader.sniff(head):
            return name
    return None
