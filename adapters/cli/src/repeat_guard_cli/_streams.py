"""Where a command writes: kept apart so that every command can name it without importing others."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TextIO

__all__ = ["Bar", "CurrentBar", "Streams"]


class Bar(Protocol):
    """A progress bar drawn on the last line of a terminal, which text must not be glued to."""

    def clear(self) -> None:
        """Erase the bar if it is shown, so that what is written next starts its own line."""

    def show(self) -> None:
        """Draw the bar again if it was cleared and is not finished."""


class CurrentBar:
    """The bar drawn now, if any: what writes a message clears it first and shows it after."""

    __slots__ = ("bar",)

    def __init__(self) -> None:
        self.bar: Bar | None = None

    def clear(self) -> None:
        """Erase the current bar, if any."""
        if self.bar is not None:
            self.bar.clear()

    def show(self) -> None:
        """Draw the current bar again, if any."""
        if self.bar is not None:
            self.bar.show()


@dataclass(frozen=True, slots=True)
class Streams:
    """Where the command writes: the report, and messages for the person running it; ``bar``
    is the progress bar drawn on ``err`` while a long input is read."""

    out: TextIO
    err: TextIO
    bar: CurrentBar = field(default_factory=CurrentBar)
