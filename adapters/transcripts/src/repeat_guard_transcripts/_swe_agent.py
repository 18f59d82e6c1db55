"""The SWE-agent reader: a ``.traj`` file (one JSON document) to guard events.

The document's ``trajectory`` is the list of steps; each step's ``action`` is the command the
model issued, such as ``submit flag{...}`` or ``edit 287:295`` with the lines to write. The
tool is the command's first word and the arguments the rest of the action, both stripped of
surrounding whitespace; a step counts at the line its ``action`` is on, with its
``observation`` as the result, and a step without an ``observation`` never finished. A step
whose ``action`` is empty (the model's reply did not parse, so nothing ran) is a note, data
about the run; one without an ``action`` string is a diagnostic. One file is one session and
one agent, named after the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

from repeat_guard import ToolCallFinished

from ._document import Cursor, Element, line_of, walk_object
from ._items import Diagnostic, Item, Located, Location, Unfinished
from ._reading import document_items, file_session

__all__ = ["SweAgentReader", "split_action"]


def split_action(action: str) -> tuple[str, str]:
    """``(command, rest)`` of an action: its first word, and the text after it."""
    stripped = action.strip()
    command, _, rest = stripped.partition(" ")
    head, newline, body = command.partition("\n")
    if newline:  # a command alone on its line, its text below
        return head, (body + (" " + rest if rest else "")).strip()
    return command, rest.strip()


def _trajectory(cursor: Cursor) -> Iterator[Element | Diagnostic]:
    return walk_object(cursor, "trajectory")


class _SweFile:
    def __init__(self, file: str) -> None:
        self.file = file
        self.session = file_session(file)

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        return document_items(lines, self.file, self.session, _trajectory, self._step)

    def _step(self, text: str, element: Element) -> Iterator[Item]:
        line, step = element.line, element.value
        if not isinstance(step, dict):
            yield Diagnostic(self.file, line, "a trajectory step that is not an object")
            return
        action = step.get("action")
        if not isinstance(action, str):
            yield Diagnostic(self.file, line, "a trajectory step without an action")
            return
        where = Location(self.file, line_of(text, element, '"action"'), self.session)
        if not action.strip():
            message = "a step with an empty action (the model's reply did not parse): no call"
            yield Diagnostic(self.file, where.line, message, severity="note")
            return
        tool, arguments = split_action(action)
        if "observation" not in step:
            yield Unfinished(where, tool)
            return
        event = ToolCallFinished(self.session, tool, arguments, False, step["observation"])
        yield Located(where, event)


class SweAgentReader:
    """Reads SWE-agent trajectories (``.traj``)."""

    name: Final = "swe-agent"
    description: Final = "SWE-agent .traj files"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a SWE-agent trajectory."""
        start = head.lstrip()[:1]
        return start == b"{" and b'"trajectory"' in head and b'"action"' in head

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one trajectory; never raises for bad input."""
        return _SweFile(file).read(lines)
