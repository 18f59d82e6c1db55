"""Files: opening a transcript safely, sniffing its format, walking directories.

Opening never blocks and never reads what is not a file: a path is opened non-blocking (a FIFO
without a writer then reads as empty instead of hanging), and anything but a regular file or
a FIFO (a device such as ``/dev/zero``, a socket, a directory) is refused with a reason. Read
errors (``/proc/self/mem`` answers ``EIO``) surface later as diagnostics, from
``bounded_lines``.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from ._registry import HEAD_BYTES, sniff_head

__all__ = ["discover", "open_transcript", "sniff_format", "with_head"]


def open_transcript(path: str) -> BinaryIO | str:
    """Open ``path`` for reading as bytes, or return why it cannot be read."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        return f"cannot read {path}: {error.strerror}"
    mode = os.fstat(descriptor).st_mode
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    os.close(descriptor)
    kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
    return f"cannot read {path}: {kind}"


class _Prefixed(io.RawIOBase):
    """``head`` followed by the rest of ``stream``: a stream sniffed without seeking."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self._head = memoryview(head)
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # RawIOBase's stub takes a Buffer
        if self._head:
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            self._head = self._head[count:]
            return count
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def with_head(stream: BinaryIO) -> tuple[bytes | str, BinaryIO]:
    """Read the first ``HEAD_BYTES`` of ``stream`` for sniffing; return them (or why they
    could not be read) and a stream that reads the whole input from its start."""
    try:
        head = stream.read(HEAD_BYTES)
    except OSError as error:
        return f"read failed: {error.strerror or error}", stream
    return head, io.BufferedReader(_Prefixed(head, stream), buffer_size=1 << 16)


def sniff_format(path: str) -> str | None:
    """The format of the transcript at ``path``, sniffed from its first bytes; ``None`` when
    no reader recognises it or it is not a readable regular file."""
    opened = open_transcript(path)
    if isinstance(opened, str):
        return None
    with opened:
        if not stat.S_ISREG(os.fstat(opened.fileno()).st_mode):
            return None
        head, _ = with_head(opened)
    return sniff_head(head) if isinstance(head, bytes) else None


def _walk(directory: str) -> Iterator[str]:
    for root, folders, files in os.walk(directory):
        folders.sort()
        for name in sorted(files):
            yield os.path.join(root, name)


def discover(paths: Iterable[str]) -> Iterator[tuple[str, str | None]]:
    """Yield ``(path, format)`` for each path, walking directories.

    A file named directly is yielded whatever it holds (``None`` when no reader recognises
    it); a directory yields only the files some reader recognises, in sorted order, so a
    Claude Code session file comes before the ``subagents/`` files under its folder.
    """
    for path in paths:
        if path != "-" and os.path.isdir(path):
            for found in _walk(path):
                fmt = sniff_format(found)
                if fmt is not None:
                    yield found, fmt
        else:
            yield path, None if path == "-" else sniff_format(path)
