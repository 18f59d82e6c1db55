"""The seam: what a transcript reader yields, whatever the format.

A reader turns the lines of one file into a stream of items, in the order of the lines they
come from. ``Located`` carries a core event and where it was seen; the other items are what a
replay reports beside the guard's decisions. Every item names its file and line, so a report
can point at it; the format that produced it is not part of any item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import msgspec

from repeat_guard import Event

__all__ = [
    "Diagnostic",
    "Item",
    "Located",
    "Location",
    "Recorded",
    "SessionSeen",
    "Severity",
    "Unfinished",
]

Severity = Literal["error", "note"]


# ``Location`` and ``Located`` are built for every call a reader yields (two and one), so they are
# msgspec ``Struct`` types, which build an instance in C: frozen, compared and hashed by their
# fields and matched by position, as the frozen, slotted dataclasses beside them are. A frozen
# dataclass builds one through ``object.__setattr__`` per field (about 5x the instructions).
class Location(msgspec.Struct, frozen=True, gc=False):
    """Line ``line`` (1-based) of ``file``, in the transcript's session ``session``."""

    file: str
    line: int
    session: str


class Located(msgspec.Struct, frozen=True):
    """A core event and where it was seen, with what the format says about its turn.

    ``turn`` names the user turn the event belongs to, ``tokens`` the output tokens of the model
    step that made the call and ``input_tokens`` its input tokens (every token of the context
    the model read for the step, cached or not), ``timestamp`` the format's own time text,
    ``project`` the working directory or project the session ran in; each is ``None`` when the
    format does not say. A step's tokens go with its first call only.
    """

    where: Location
    event: Event
    turn: str | None = None
    tokens: int | None = None
    timestamp: str | None = None
    project: str | None = None
    input_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something at ``line`` of ``file`` that could not be used (``error``), or an
    observation worth reporting that is not a fault of the input (``note``)."""

    file: str
    line: int
    message: str
    severity: Severity = "error"


@dataclass(frozen=True, slots=True)
class Unfinished:
    """A call to ``tool`` that started at ``where`` and never finished in the transcript."""

    where: Location
    tool: str


@dataclass(frozen=True, slots=True)
class Recorded:
    """A reminder already in the transcript (written by a live guard or ``--annotate``)."""

    where: Location
    tool: str
    count: int
    form: str


@dataclass(frozen=True, slots=True)
class SessionSeen:
    """The first line of a session, so a session with no calls is still counted."""

    where: Location


Item = Located | Diagnostic | Unfinished | Recorded | SessionSeen
