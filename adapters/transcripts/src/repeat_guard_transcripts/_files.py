"""Files: opening a transcript safely, sniffing its format, walking directories.

Opening never hangs and never reads what is not a file: anything but a regular file or a FIFO
(a device such as ``/dev/zero``, a socket, a directory) is refused with a reason. A FIFO is
opened non-blocking and given ``FIFO_WAIT_SECONDS`` for a writer to open it (``mkfifo p;
producer > p & repeat-guard replay p`` may start the reader first); when none comes it is
refused, instead of hanging or passing for an empty file. Once a writer has come, the FIFO is
read to its end like any pipe. Read errors (``/proc/self/mem`` answers ``EIO``) surface later
as diagnostics, from ``bounded_lines``. Sniffing and directory walks open regular files only,
so they never take a FIFO's writer away from the reader that follows.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Literal, NamedTuple, cast

from ._compressed import MAGIC_BYTES, READ_BUFFER, compression_of, decompressing
from ._registry import HEAD_BYTES, folder_format, sniff_head

__all__ = [
    "FIFO_WAIT_SECONDS",
    "Input",
    "PassedOver",
    "Refused",
    "Sniffed",
    "Unlisted",
    "discover",
    "open_input",
    "open_regular",
    "open_transcript",
    "sniff_format",
    "sniff_stream",
    "walk",
    "with_head",
]

FIFO_WAIT_SECONDS = 10.0
"""How long opening a FIFO waits for a writer before refusing it."""

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO's open must not wait


def open_transcript(path: str, *, regular_only: bool = False) -> BinaryIO | str:
    """Open ``path`` for reading as bytes, or return why it cannot be read.

    ``regular_only`` refuses anything but a regular file before opening it, as a directory
    walk must (``open_regular``)."""
    opened = _open_named(path, regular_only=regular_only)
    if isinstance(opened, Refused):
        return f"cannot read {path}: {opened.why}"
    return opened[0]


def _open_named(path: str, *, regular_only: bool) -> tuple[BinaryIO, os.stat_result] | Refused:
    try:
        if regular_only:
            stream, status = open_regular(path)
            if stream is None:
                return Refused(path, "kind", _kind(status.st_mode))
            return stream, status
        descriptor = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError as error:
        return Refused(path, "gone", _why(error))
    except OSError as error:
        return Refused(path, "open", _why(error))
    status = os.fstat(descriptor)
    if stat.S_ISREG(status.st_mode):
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb"), status
    if stat.S_ISFIFO(status.st_mode):
        fifo = _open_fifo(descriptor, path)
        return fifo if isinstance(fifo, Refused) else (fifo, status)
    os.close(descriptor)
    return Refused(path, "kind", _kind(status.st_mode))


def open_regular(path: str) -> tuple[BinaryIO | None, os.stat_result]:
    """Open ``path`` if it is a regular file: the stream (``None`` for anything else, which
    is never opened) and the status of what is there. Raises ``OSError`` when it cannot be
    looked at or opened (``FileNotFoundError`` when it is gone).

    The one way a walk's files are opened: opening a FIFO, even to close it at once, lets a
    writer waiting for its reader go on, and its next write then fails. The open does not
    block, for a FIFO that takes the file's place after the stat, which is then refused too.
    """
    status = os.stat(path)
    if not stat.S_ISREG(status.st_mode):
        return None, status
    descriptor = os.open(path, _OPEN_FLAGS)
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        return None, status
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb"), status


def _kind(mode: int) -> str:
    return "a directory" if stat.S_ISDIR(mode) else "not a regular file"


def _open_fifo(descriptor: int, path: str) -> BinaryIO | Refused:
    read = _await_writer(descriptor)
    if read is None:
        os.close(descriptor)
        why = f"no writer opened the FIFO within {FIFO_WAIT_SECONDS:g} s"
        return Refused(path, "open", why)
    os.set_blocking(descriptor, True)
    stream = os.fdopen(descriptor, "rb")
    return io.BufferedReader(_Prefixed(read, stream, owned=True)) if read else stream


def _await_writer(descriptor: int) -> bytes | None:
    """Wait up to ``FIFO_WAIT_SECONDS`` for a writer to open the FIFO ``descriptor`` (opened
    non-blocking); return what telling whether one came read from it (usually nothing), or
    ``None`` when none came."""
    waiting = select.poll()
    waiting.register(descriptor, select.POLLIN)
    if waiting.poll(int(FIFO_WAIT_SECONDS * 1000)):  # data, or a writer came and went
        return b""
    try:
        return os.read(descriptor, 1) or None  # nothing: no writer ever opened it
    except BlockingIOError:  # a writer is there, with nothing written yet
        return b""


class _Prefixed(io.RawIOBase):
    """``head`` followed by the rest of ``stream``: a stream sniffed without seeking."""

    def __init__(self, head: bytes, stream: BinaryIO, *, owned: bool = False) -> None:
        self._head = memoryview(head)
        self._stream = stream
        self._owned = owned

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if self._owned:
            self._stream.close()
        super().close()

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # RawIOBase's stub takes a Buffer
        if self._head:
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            self._head = self._head[count:]
            return count
        # Straight into the caller's buffer, not read into a new bytes object and copied: every
        # binary stream of io has readinto, which BinaryIO's stub does not declare.
        return cast(io.BufferedIOBase, self._stream).readinto(buffer)


def _head_size(stream: BinaryIO) -> int:
    """How much of ``stream`` to read for its head: ``HEAD_BYTES``, or a byte more than a
    shorter regular file holds. Reading asks for a buffer of the size asked for: 256 KB for a
    10 KB file took a third of the time of sniffing it."""
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError):  # no descriptor of its own (a BytesIO, a wrapper), or closed
        return HEAD_BYTES
    if not stat.S_ISREG(status.st_mode):
        return HEAD_BYTES
    return min(HEAD_BYTES, status.st_size + 1)


def with_head(stream: BinaryIO, limit: int = HEAD_BYTES) -> tuple[bytes | str, BinaryIO]:
    """Read the first ``limit`` bytes (``HEAD_BYTES``) of ``stream`` for sniffing; return
    them (or why they could not be read) and a stream that reads the whole input from its
    start."""
    try:
        head = stream.read(min(limit, _head_size(stream)))
    except OSError as error:
        return f"read failed: {error.strerror or error}", stream
    return head, io.BufferedReader(_Prefixed(head, stream), buffer_size=READ_BUFFER)


class Sniffed(NamedTuple):
    """What ``sniff_stream`` found: the input's format (``None`` when no reader recognises
    it or nothing was sniffed), a stream that reads the whole input, decompressed, from its
    start, and the input's compression (``gzip``, ``bzip2``, ``xz``; ``None``: plain)."""

    format: str | None
    stream: BinaryIO
    compression: str | None = None


def sniff_stream(stream: BinaryIO, *, sniff: bool = True) -> Sniffed | str:
    """Sniff what ``stream`` holds from its head, decompressing it first when it is gzip,
    bzip2 or xz data; or return why the head could not be read. The one place an opened
    transcript's format and compression are found.

    With ``sniff=False`` (a format named by the caller) only the compression is looked for,
    from the first ``MAGIC_BYTES``: a pipe is not waited on for a whole head.
    """
    head, whole = with_head(stream, HEAD_BYTES if sniff else MAGIC_BYTES)
    if isinstance(head, str):
        return head
    compression = compression_of(head)
    if compression is not None:
        whole = decompressing(whole, compression)
        if sniff:
            head, whole = with_head(whole)
            if isinstance(head, str):
                return head
    return Sniffed(sniff_head(head) if sniff else None, whole, compression)


def sniff_format(path: str) -> str | None:
    """The format of the transcript at ``path``, sniffed from its first bytes; ``None`` when
    no reader recognises it or it is not a readable regular file."""
    opened = open_transcript(path, regular_only=True)
    if isinstance(opened, str):
        return None
    with opened:
        sniffed = sniff_stream(opened)
    return None if isinstance(sniffed, str) else sniffed.format


@dataclass(frozen=True, slots=True)
class Unlisted:
    """A folder a walk could not list (it is unreadable): its path and why (``strerror``).
    Its files are missing from the walk; a caller says so. A folder that went after its
    parent was listed is passed over, as a file that goes before its turn is."""

    path: str
    reason: str


def _listed(folder: str) -> tuple[list[str], list[str]] | Unlisted | None:
    """The sorted names of ``folder``'s subfolders and of its other entries, as ``os.walk``
    tells them apart (a name whose kind cannot be told is a file), or why it cannot be listed,
    or ``None`` when it went after its parent was listed."""
    folders: list[str] = []
    files: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    is_folder = entry.is_dir()
                except OSError:
                    is_folder = False
                (folders if is_folder else files).append(entry.name)
    except FileNotFoundError:
        return None
    except OSError as error:
        return Unlisted(str(error.filename), error.strerror or str(error))
    return sorted(folders), sorted(files)


def _walk(directory: str) -> Iterator[str | Unlisted]:
    """The files under ``directory``, as ``os.walk`` lists them from the top (each folder's
    files, then its subfolders in order, a link to a folder never followed), with a folder it
    could not list in its place. A loop over a stack rather than ``os.walk``, whose recursion
    ends in a ``RecursionError`` about a thousand folders deep."""
    pending = [directory]
    while pending:
        folder = pending.pop()
        listed = _listed(folder)
        if isinstance(listed, Unlisted):
            yield listed
        elif listed is not None:
            folders, files = listed
            if folder_format([*folders, *files]) is not None:  # one transcript: not walked into
                yield folder
                continue
            yield from (os.path.join(folder, name) for name in files)
            below = (os.path.join(folder, name) for name in reversed(folders))
            pending.extend(path for path in below if not os.path.islink(path))


def walk(paths: Iterable[str]) -> Iterator[tuple[str, bool] | Unlisted]:
    """Yield ``(path, walked)`` for each path, and for a directory each file under it instead,
    in sorted order (a Claude Code session file before the ``subagents/`` files under its
    folder); ``walked`` says the file was found in a directory rather than named. A folder
    that cannot be listed, the named one or one below it, is yielded as an ``Unlisted``.
    Nothing is opened: what the files hold is for ``sniff_format`` to say, where the caller
    likes."""
    for path in paths:
        if path != "-" and os.path.isdir(path):
            for found in _walk(path):
                yield found if isinstance(found, Unlisted) else (found, True)
        else:
            yield path, False


def discover(paths: Iterable[str]) -> Iterator[tuple[str, str | None]]:
    """Yield ``(path, format)`` for each path, walking directories (``walk``).

    A file named directly is yielded whatever it holds (``None`` when no reader recognises
    it); a directory yields only the files some reader recognises, and a folder it cannot
    list as ``(folder, None)``.
    """
    for found in walk(paths):
        if isinstance(found, Unlisted):
            yield found.path, None
            continue
        path, walked = found
        fmt = None if path == "-" else sniff_format(path)
        if fmt is not None or not walked:
            yield path, fmt


class Input(NamedTuple):
    """An input ``open_input`` opened: its path, its ``format`` (named or sniffed; ``None``
    when it was named, not sniffed, or no reader recognises a named file), ``stream`` reading
    it whole, decompressed, from its start, ``file`` as opened (how far it has been read), its
    ``compression`` and its ``size`` when opened (0 for the standard input)."""

    path: str
    format: str | None
    stream: BinaryIO
    file: BinaryIO
    compression: str | None = None
    size: int = 0


class PassedOver(NamedTuple):
    """A file a walk found that is not read: ``why`` is ``not a transcript`` (no reader
    recognises it), ``not a regular file`` (a FIFO, a socket, a device) or ``gone`` (it went
    between the walk and its turn). The caller counts and names it; it is no error. A file
    the caller's ``wanted`` turned down, walked or named, is ``unwanted``."""

    path: str
    why: Literal["not a transcript", "not a regular file", "gone", "unwanted"]


class Refused(NamedTuple):
    """An input that cannot be read: ``stage`` says where it stopped (``open``: it could not
    be opened, ``why`` the system's reason; ``gone``: the same, as it is not there; ``kind``:
    it is a directory or not a regular file, ``why`` says which; ``head``: its first bytes
    could not be read, ``why`` says how). Each command words it its own way."""

    path: str
    stage: Literal["open", "gone", "kind", "head"]
    why: str


Opened = Input | PassedOver | Refused


@contextlib.contextmanager
def open_input(
    path: str,
    *,
    walked: bool = False,
    format: str | None = None,
    pipes: bool = False,
    wanted: Callable[[os.stat_result], bool] | None = None,
) -> Iterator[Opened]:
    """Open the input ``path`` and sniff its format: the one way the replay and the audit open
    what they read. Yields an ``Input`` (closed on the way out), a ``PassedOver`` for a file a
    walk found that is not read or one ``wanted`` (given the file's status) turned down, or a
    ``Refused`` for one that cannot be read.

    A walked file is opened only when it is a regular file (``open_regular``); a named one
    too, unless ``pipes`` allows a FIFO (``open_transcript``) and ``-``, the standard input.
    ``format`` names the format: the input is then not sniffed (only its compression is
    looked for), and a walked file is reported as a named one would be rather than passed
    over.
    """
    passing = walked and format is None
    if pipes and path == "-":
        if sys.stdin is None:
            yield Refused(path, "open", "it is closed")
        else:  # the caller's to close
            yield _sniffed(path, sys.stdin.buffer, format, passing, 0)
        return
    opened = _open_named(path, regular_only=walked or not pipes)
    if isinstance(opened, Refused) and opened.stage == "kind":
        folder = _open_folder(path)
        if folder is not None:
            claimed, opened = folder
            format, passing = format or claimed, False
    if isinstance(opened, Refused):
        yield _passed_over(opened) if passing else opened
        return
    file, status = opened
    with file:
        if wanted is not None and not wanted(status):
            yield PassedOver(path, "unwanted")
            return
        yield _sniffed(path, file, format, passing, status.st_size)


def _open_folder(path: str) -> tuple[str, tuple[BinaryIO, os.stat_result] | Refused] | None:
    """The format of the folder ``path`` when a reader claims it, and its entry file opened;
    ``None`` when it is no folder a reader claims."""
    listed = _listed(path) if os.path.isdir(path) else None
    if listed is None or isinstance(listed, Unlisted):
        return None
    reader = folder_format([*listed[0], *listed[1]])
    if reader is None:
        return None
    return reader.name, _open_named(os.path.join(path, reader.entry), regular_only=True)


def _passed_over(refused: Refused) -> PassedOver | Refused:
    """A walked file that is not a regular file or has gone is passed over; one that is
    there but cannot be opened is refused: it may be a transcript."""
    if refused.stage == "kind":
        return PassedOver(refused.path, "not a regular file")
    if refused.stage == "gone":
        return PassedOver(refused.path, "gone")
    return refused


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def _sniffed(path: str, file: BinaryIO, format: str | None, passing: bool, size: int) -> Opened:
    sniffed = sniff_stream(file, sniff=format is None)
    if isinstance(sniffed, str):  # there, but its head cannot be read (EIO)
        return Refused(path, "head", sniffed)
    if passing and sniffed.format is None:
        return PassedOver(path, "not a transcript")
    return Input(path, format or sniffed.format, sniffed.stream, file, sniffed.compression, size)
