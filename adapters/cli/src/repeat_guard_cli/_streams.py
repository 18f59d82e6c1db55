"""Where a command writes: kept apart so that every command can name it without importing others."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

__all__ = ["Streams"]


@dataclass(frozen=True, slots=True)
class Streams:
    """Where the command writes: the report, and messages for the person running it."""

    out: TextIO
    err: TextIO
