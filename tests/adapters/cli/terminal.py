"""A stand-in terminal for the progress bar's tests: a stream that says it is one, and what a
screen shows after the text written to it."""

from __future__ import annotations

import io

ERASE_LINE = "\x1b[K"


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def screen(written: str) -> list[str]:
    """The lines a terminal shows after ``written``: ``\\r`` goes back to the line's start,
    ``\\x1b[K`` erases from there to the line's end, ``\\n`` starts a new line, and any other
    character replaces the one under the cursor (the bar must never wrap, so no wrapping)."""
    lines = [""]
    column = 0
    at = 0
    while at < len(written):
        if written.startswith(ERASE_LINE, at):
            lines[-1] = lines[-1][:column]
            at += len(ERASE_LINE)
            continue
        char = written[at]
        at += 1
        if char == "\r":
            column = 0
        elif char == "\n":
            lines.append("")
            column = 0
        else:
            line = lines[-1].ljust(column)
            lines[-1] = line[:column] + char + line[column + 1 :]
            column += 1
    return lines
