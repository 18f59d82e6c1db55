"""Write a transcript back with each reminder on a line of its own, where it fires.

Written once for every format whose reader can carry a reminder (``Annotating``). The lines
pass through a one-line holding cell: a line is written when the reader takes the next one,
by which time every item of that line has been replayed, so a reminder lands right after the
line where it fired, and a reminder recorded by an earlier annotation is dropped (annotating
again replaces it). Memory: one line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from repeat_guard import GuardConfig

from ._items import Recorded
from ._registry import Annotating, Reader
from ._replay import Fired, Outcome, replay

__all__ = ["Annotation", "annotate"]


class Annotation:
    """The one-line holding cell between the input lines and ``write``."""

    def __init__(self, lines: Iterable[bytes], write: Callable[[bytes], object]) -> None:
        self._lines = lines
        self._write = write
        self._held: bytes | None = None
        self._held_number = 0
        self._last = b""

    def lines(self) -> Iterator[bytes]:
        for number, line in enumerate(self._lines, start=1):
            self.release()
            self._held, self._held_number, self._last = line, number, line
            yield line

    def release(self) -> None:
        """Write the held line, if any."""
        if self._held is not None:
            held = self._held
            self._write(held if held.endswith(b"\n") else held + b"\n")
            self._held = None

    def drop(self, number: int) -> None:
        """Drop line ``number`` if it is the held one (it carries an old reminder)."""
        if number == self._held_number:
            self._held = None

    def insert(self, fired: Fired, reader: Annotating) -> None:
        """Write ``fired``'s reminder after the line where it fired."""
        if fired.where.line >= self._held_number:
            self.release()
        reminder = fired.reminder
        self._write(reader.reminder_line(self._last, fired.where.session, reminder))


def annotate(
    lines: Iterable[bytes],
    reader: Reader,
    config: GuardConfig,
    *,
    file: str,
    write: Callable[[bytes], object],
) -> Iterator[Outcome]:
    """Replay ``lines`` with ``reader``, calling ``write`` with each output line (the input
    lines, each ending in a newline, with the reminders inserted), and yield the replay's
    outcomes as ``replay`` does. ``reader`` must be ``Annotating``. A line the reader could
    not read whole (a ``LineFault``) is written empty: callers that must not lose lines check
    for faults in ``lines`` themselves."""
    assert isinstance(reader, Annotating), f"{reader.name} transcripts cannot carry reminders"
    annotation = Annotation(lines, write)
    for outcome in replay(reader.read(annotation.lines(), file), config, file=file):
        if isinstance(outcome, Fired):
            annotation.insert(outcome, reader)
        elif isinstance(outcome, Recorded):
            annotation.drop(outcome.where.line)
        yield outcome
    annotation.release()
