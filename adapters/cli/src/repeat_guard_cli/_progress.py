"""A progress bar on a terminal's stderr while a large transcript replays or an audit runs.

Only a terminal gets one (a redirected stderr stays clean for logs), and only for inputs of at
least ``LARGE_INPUT_BYTES`` whose size is known. Redraws are throttled by a clock the caller may
inject, so a replay of millions of small lines pays for a few hundred redraws at most.

A bar is one line redrawn in place after a carriage return, so it must never wrap (a clear would
erase only its last row): each draw fits the terminal's width as it is then, narrowing the bar,
then leaving out the least useful figures. Text written while a bar is shown clears the bar's
line first and draws the bar again below: the audit's streams go through ``TextAboveBar``; the
replay, whose bar comes and goes with each large input, asks ``Streams.bar`` (``CurrentBar``),
which ``track_progress`` points at the bar it draws.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO, Protocol, TextIO

if TYPE_CHECKING:
    from ._streams import CurrentBar

__all__ = [
    "LARGE_INPUT_BYTES",
    "FilesProgress",
    "ProgressBar",
    "TextAboveBar",
    "TextSink",
    "fit_line",
    "input_size",
    "terminal_columns",
    "track_progress",
]

LARGE_INPUT_BYTES = 8 * 1024 * 1024
REDRAW_SECONDS = 0.1
_WIDTH = 30  # the bar's width when the terminal has room
_NARROWEST = 10  # narrower than this, a bar no longer shows progress: the figures go first
_CLEAR = "\r\x1b[K"  # back to the line's start, and erase it


def terminal_columns(stream: TextIO) -> int:
    """Return the width of the terminal ``stream`` shows on: ``$COLUMNS`` when set, as
    ``shutil.get_terminal_size`` takes it, else that terminal's own width, else what
    ``shutil.get_terminal_size`` finds (stdout's terminal, or 80)."""
    if not os.environ.get("COLUMNS"):
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError):  # not a file, or not a terminal
            columns = 0
        if columns > 0:  # a terminal that does not know its size says 0
            return columns
    return shutil.get_terminal_size().columns


def _cut_left(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


def _line(label: str, fraction: float, width: int, shown: Sequence[str]) -> str:
    filled = round(fraction * width)
    bar = "#" * filled + "." * (width - filled)
    return f"{label} [{bar}] {fraction:4.0%}" + "".join(f"  {part}" for part in shown)


def fit_line(label: str, fraction: float, parts: Sequence[str], columns: int) -> str:
    """Return ``label [####....]  42%  part  part`` in at most ``columns - 1`` characters.

    ``parts`` come most useful first. The bar narrows from 30 characters to 10 first; then the
    parts go, the least useful first; then the label gives up its start (a path keeps its
    file's name); on a terminal narrower than all that, the percentage alone, cut to fit.
    """
    room = columns - 1
    for count in range(len(parts), -1, -1):
        shown = parts[:count]
        free = room - len(_line(label, fraction, 0, shown))
        if free >= _NARROWEST:
            return _line(label, fraction, min(free, _WIDTH), shown)
    kept = room - len(_line("", fraction, _NARROWEST, ()))
    if kept >= _NARROWEST:
        return _line(_cut_left(label, kept), fraction, _NARROWEST, ())
    return f"{fraction:.0%}"[: max(room, 0)]


class _BarLine(ABC):
    """The line of ``stream`` a bar is drawn on: drawn when due, cleared for text written above
    it and drawn again below, erased for good when the work is done. ``_line`` says what to
    draw."""

    def __init__(self, stream: TextIO, label: str, clock: Callable[[], float]) -> None:
        self._stream = stream
        self._label = label
        self._clock = clock
        self._drawn_at: float | None = None
        self._shown = False  # the bar is on the stream's last line
        self._finished = False

    def clear(self) -> None:
        """Erase the bar if it is shown, so that what is written next starts its own line."""
        if self._shown:
            self._stream.write(_CLEAR)
            self._stream.flush()
            self._shown = False

    def show(self) -> None:
        """Draw the bar again if it was drawn before and is not shown now (nor finished)."""
        if not self._shown and self._drawn_at is not None and not self._finished:
            self._draw(self._clock())

    def finish(self) -> None:
        """Erase the bar for good, leaving the line for the report."""
        self._stream.write(_CLEAR)
        self._stream.flush()
        self._shown = False
        self._finished = True

    def _due(self) -> None:
        """Redraw when the last redraw is old enough."""
        now = self._clock()
        if self._drawn_at is None or now - self._drawn_at >= REDRAW_SECONDS:
            self._draw(now)

    def _draw(self, now: float) -> None:
        self._drawn_at = now
        self._stream.write(f"\r{self._line(now, terminal_columns(self._stream))}")
        self._stream.flush()
        self._shown = True

    @abstractmethod
    def _line(self, now: float, columns: int) -> str: ...


class ProgressBar(_BarLine):
    """Draws ``label [####....]  42%  3.1/7.4 MB`` on one line of ``stream``."""

    def __init__(
        self,
        stream: TextIO,
        label: str,
        total: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(stream, label, clock)
        self._total = total
        self._done = 0

    def advance(self, count: int) -> None:
        """Record ``count`` more bytes read; redraw when the last redraw is old enough."""
        self._done += count
        self._due()

    def _line(self, now: float, columns: int) -> str:
        fraction = min(self._done / self._total, 1.0)
        sizes = f"{self._done / 1e6:.1f}/{self._total / 1e6:.1f} MB"
        return fit_line(self._label, fraction, [sizes], columns)


def input_size(stream: BinaryIO) -> int | None:
    """Return the size in bytes of the regular file behind ``stream``, or ``None``."""
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def track_progress(
    lines: Iterable[bytes],
    stream: TextIO,
    label: str,
    size: int | None,
    clock: Callable[[], float] = time.monotonic,
    position: Callable[[], int] | None = None,
    current: CurrentBar | None = None,
) -> Iterator[bytes]:
    """Yield ``lines`` unchanged, drawing a bar on ``stream`` if it is a terminal and the
    input (``size`` bytes) is large; the bar is erased when the lines run out.

    The bar counts the lines' bytes, or with ``position`` how far into the input the lines
    have come (a compressed input, whose lines are longer than what was read for them). While
    it is drawn, the bar is ``current``'s, so that a message can be written above it."""
    if size is None or size < LARGE_INPUT_BYTES or not stream.isatty():
        yield from lines
        return
    bar = ProgressBar(stream, label, size, clock)
    if current is not None:
        current.bar = bar
    done = 0
    try:
        for line in lines:
            if position is None:
                bar.advance(len(line))
            else:
                now = position()
                bar.advance(now - done)
                done = now
            yield line
    finally:
        bar.finish()
        if current is not None:
            current.bar = None


def _duration(seconds: float) -> str:
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


class FilesProgress(_BarLine):
    """Draws ``label [####....]  42%  1,204/2,866 files  0:00:06 left  50.1/120.3 MB  12.5 MB/s``
    on one line of ``stream``, for work measured in files and bytes.

    The fraction and the time left follow the bytes (the work is reading them); the rate is
    bytes done over the time since the bar was made. Redraws are throttled like
    ``ProgressBar``'s. The figures come most useful first: on a narrow terminal the rate goes
    first, then the megabytes, then the time left (``fit_line``).
    """

    def __init__(
        self,
        stream: TextIO,
        label: str,
        files: int,
        total_bytes: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(stream, label, clock)
        self._files = files
        self._bytes = total_bytes
        self._started = clock()
        self._files_done = 0
        self._bytes_done = 0

    def advance(self, files: int, size: int) -> None:
        """Record ``files`` more files of ``size`` bytes done; redraw when due."""
        self._files_done += files
        self._bytes_done += size
        self._due()

    def _line(self, now: float, columns: int) -> str:
        fraction = min(self._bytes_done / self._bytes, 1.0) if self._bytes else 1.0
        elapsed = now - self._started
        rate = self._bytes_done / elapsed if elapsed > 0 else 0.0
        left = (self._bytes - self._bytes_done) / rate if rate > 0 else None
        eta = "--:--" if left is None else _duration(max(left, 0.0))
        parts = (
            f"{self._files_done:,}/{self._files:,} files",
            f"{eta} left",
            f"{self._bytes_done / 1e6:.1f}/{self._bytes / 1e6:.1f} MB",
            f"{rate / 1e6:.1f} MB/s",
        )
        return fit_line(self._label, fraction, parts, columns)


class TextSink(Protocol):
    """Where a report's text goes: what ``print`` needs of a stream."""

    def write(self, text: str, /) -> int: ...


class TextAboveBar:
    """A text stream whose lines appear above ``bar``: before any text the bar's line is
    cleared, so the text starts at the line's start (a diagnostic reads ``FILE:LINE: ...``, not
    the bar's figures glued to it), and once a line is complete the bar is drawn below it."""

    def __init__(self, stream: TextIO, bar: FilesProgress) -> None:
        self._stream = stream
        self._bar = bar

    def write(self, text: str) -> int:
        """Write ``text`` above the bar; return the characters written."""
        self._bar.clear()
        written = self._stream.write(text)
        if text.endswith("\n"):
            # The line must be out before the bar is drawn on another stream after it.
            self._stream.flush()
            self._bar.show()
        return written
