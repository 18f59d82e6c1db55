"""Compressed transcripts: gzip, bzip2 and xz, told by their first bytes and read through the
standard library's decompressors, so an archive of logs is read as it is stored; and written
compressed when the name of the file written ends in ``.gz``, ``.bz2`` or ``.xz``.

Whatever the compressed data holds (cut short, corrupt, trailing garbage), reading it raises
``OSError`` only, as reading any file does, so the line reader turns it into a diagnostic at
the line where it happened and the lines before it still count.

Each decompressor's module is imported when a file of its compression is read or written: most
inputs are plain, and telling one from a compressed one needs only its first bytes.
"""

from __future__ import annotations

import io
import zlib
from typing import BinaryIO, Final

__all__ = ["MAGIC_BYTES", "compressing", "compression_for", "compression_of", "decompressing"]

_MAGIC: Final = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))
_SUFFIXES: Final = ((".gz", "gzip"), (".bz2", "bzip2"), (".xz", "xz"))

MAGIC_BYTES: Final = max(len(magic) for magic, _ in _MAGIC)
"""How many first bytes tell a compressed input from a plain one."""


def compression_of(head: bytes) -> str | None:
    """The compression ``head`` (an input's first bytes) starts with, or ``None``."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def compression_for(name: str) -> str | None:
    """The compression a file named ``name`` is written with (by its suffix, in any case), or
    ``None``."""
    for suffix, compression in _SUFFIXES:
        if name.lower().endswith(suffix):
            return compression
    return None


def compressing(stream: BinaryIO, compression: str) -> io.BufferedIOBase:
    """A stream that writes its data to ``stream`` compressed with ``compression``
    (``compression_for``). Closing it ends the compressed data and leaves ``stream`` open.
    A gzip member records no file name and no time, so the same data compresses the same."""
    if compression == "gzip":
        import gzip  # noqa: PLC0415  # see the module's docstring

        return gzip.GzipFile(filename="", fileobj=stream, mode="wb", mtime=0)
    if compression == "bzip2":
        import bz2  # noqa: PLC0415

        return bz2.BZ2File(stream, "wb")
    import lzma  # noqa: PLC0415

    return lzma.LZMAFile(stream, "wb")


class _Decompressed(io.RawIOBase):
    """The decompressed data of a stream, every read error an ``OSError`` naming the format."""

    def __init__(self, stream: BinaryIO, compression: str) -> None:
        # Each closed by close() below; none closes ``stream``, which its opener closes.
        inner: io.BufferedIOBase
        # What the decompressor raises for bad data besides OSError (gzip.BadGzipFile is one).
        errors: tuple[type[Exception], ...] = (EOFError, zlib.error)
        if compression == "gzip":
            import gzip  # noqa: PLC0415  # see the module's docstring

            inner = gzip.GzipFile(fileobj=stream, mode="rb")
        elif compression == "bzip2":
            import bz2  # noqa: PLC0415

            inner = bz2.BZ2File(stream)
        else:
            import lzma  # noqa: PLC0415

            inner = lzma.LZMAFile(stream)  # noqa: SIM115
            errors = (*errors, lzma.LZMAError)
        self._inner = inner
        self._errors = errors
        self._compression = compression
        self._failure: OSError | None = None

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._inner.close()
        super().close()

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # RawIOBase's stub takes a Buffer
        if self._failure is not None:  # a decompressor past a fault is not read again
            raise self._failure
        try:
            # read1: what one step decompresses, so data before a fault is never held back.
            data = self._inner.read1(len(buffer))
        except OSError as error:
            self._failure = OSError(f"{self._compression} data: {error.strerror or error}")
            raise self._failure from error
        except self._errors as error:
            self._failure = OSError(f"{self._compression} data: {error}")
            raise self._failure from error
        buffer[: len(data)] = data
        return len(data)


class _Reader(io.BufferedReader):
    """A buffered reader whose ``read`` returns what it got before a read error (the next
    read raises it): a buffered reader's own ``read(n)`` drops what it read before the error,
    and the head of a compressed file cut short would say nothing of its format."""

    def read(self, size: int | None = -1, /) -> bytes:
        pieces: list[bytes] = []
        got = 0
        try:
            while size is None or size < 0 or got < size:
                piece = self.read1(-1 if size is None or size < 0 else size - got)
                if not piece:
                    break
                pieces.append(piece)
                got += len(piece)
        except OSError:
            if not pieces:
                raise
        return b"".join(pieces)


READ_BUFFER: Final = 256 * 1024
"""The buffer a transcript's lines are read through. A line longer than the buffer is read in
pieces and joined, and Claude Code lines holding a tool's output pass 64 KiB (77 of the 12,240
lines of ten of ``bench.sessions``' files, 16% of their bytes): with 256 KiB their lines were
read in 6.6 ms per 48 MB against 10.8 with 64 KiB (``bounded_lines``, CPU medians of 11
alternating rounds); 4 MiB, which no longer fits the cache, took 30."""


def decompressing(stream: BinaryIO, compression: str) -> BinaryIO:
    """A stream of ``stream``'s data decompressed from ``compression`` (``compression_of``)."""
    return _Reader(_Decompressed(stream, compression), buffer_size=READ_BUFFER)
