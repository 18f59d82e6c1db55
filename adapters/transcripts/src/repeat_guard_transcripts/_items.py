"""The seam: what a transcript reader yields, whatever the format.

A reader turns the lines of one file into a stream of items, in the order of the lines they
come from. ``Located`` carries a core event and where it was seen; the other items are what a
replay reports beside the guard's decisions. Every item names its file and line, so a report
can point at it; the format that produced it is not part of any item.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

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


@dataclass(frozen=True, slots=True, init=False)
class Location:
    """Line ``line`` (1-based) of ``file``, in the transcript's session ``session``."""

    file: str
    line: int
    session: str

    # A reader builds one or two of these per call: setting the slots directly costs half of
    # the frozen dataclass's generated __init__, which goes through object.__setattr__.
    def __init__(self, file: str, line: int, session: str) -> None:
        _set_file(self, file)
        _set_line(self, line)
        _set_session(self, session)


_set_file: Callable[[Location, object], None] = vars(Location)["file"].__set__
_set_line: Callable[[Location, object], None] = vars(Location)["line"].__set__
_set_session: Callable[[Location, object], None] = vars(Location)["session"].__set__


@dataclass(frozen=True, slots=True, init=False)
class Located:
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

    # One per call a reader yields: the slots are set directly, as in ``Location``.
    def __init__(
        self,
        where: Location,
        event: Event,
        turn: str | None = None,
        tokens: int | None = None,
        timestamp: str | None = None,
        project: str | None = None,
        input_tokens: int | None = None,
    ) -> None:
        _set_where(self, where)
        _set_event(self, event)
        _set_turn(self, turn)
        _set_tokens(self, tokens)
        _set_timestamp(self, timestamp)
        _set_project(self, project)
        _set_input_tokens(self, input_tokens)


_SetLocated = Callable[[Located, object], None]
_set_where: _SetLocated = vars(Located)["where"].__set__
_set_event: _SetLocated = vars(Located)["event"].__set__
_set_turn: _SetLocated = vars(Located)["turn"].__set__
_set_tokens: _SetLocated = vars(Located)["tokens"].__set__
_set_timestamp: _SetLocated = vars(Located)["timestamp"].__set__
_set_project: _SetLocated = vars(Located)["project"].__set__
_set_input_tokens: _SetLocated = vars(Located)["input_tokens"].__set__


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
