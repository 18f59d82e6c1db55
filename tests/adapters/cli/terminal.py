"""A stand-in terminal for the progress bar's tests: a stream that says it is one."""

from __future__ import annotations

import io


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True
