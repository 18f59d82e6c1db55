"""The SWE-agent reader: a ``.traj`` file (one JSON document) to guard events.

The document's ``trajectory`` is the list of steps; each step's ``action`` is the command the
model issued, such as ``submit flag{...}`` or ``edit 287:295`` with the lines to write. The
tool is the command's first word and the arguments the rest of the action, both stripped of
surrounding whitespace; a step counts at the line its ``action`` is on, with its
``observation`` as the result, and a step without an ``observation`` never finished. One file
is one session and one agent, named after the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Final

from repeat_guard import ToolCallFinished

from ._document import cursor, gather, line_of, walk_object
from ._items import Diagnostic, Item, Located, Location, SessionSeen, Unfinished

__all__ = ["SweAgentReader", "split_action"]


def split_action(action: str) -> tuple[str, str]:
    """``(command, rest)`` of an action: its first word, and the text after it."""
    stripped = action.strip()
    command, _, rest = stripped.partition(" ")
    head, newline, body = command.partition("\n")
    if newline:  # a command alone on its line, its text below
        return head, (body + (" " + rest if rest else "")).strip()
    return command, rest.strip()


class _SweFile:
    def __init__(self, file: str) -> None:
        self.file = file
        self.session = os.path.splitext(os.path.basename(file))[0] or file

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        text: str | None = None
        for part in gather(lines, self.file):
            if isinstance(part, Diagnostic):
                yield part
            else:
                text = part
        if text is None:
            return
        yield SessionSeen(Location(self.file, 1, self.session))
        for element in walk_object(cursor(text, self.file), "trajectory"):
            if isinstance(element, Diagnostic):
                yield element
            else:
                yield from self._step(
                    element.line, element.value, line_of(text, element, '"action"')
                )

    def _step(self, line: int, step: object, action_line: int) -> Iterator[Item]:
        if not isinstance(step, dict):
            yield Diagnostic(self.file, line, "a trajectory step that is not an object")
            return
        action = step.get("action")
        if not isinstance(action, str) or not action.strip():
            yield Diagnostic(self.file, line, "a trajectory step without an action")
            return
        where = Location(self.file, action_line, self.session)
        tool, arguments = split_action(action)
        if "observation" not in step:
            yield Unfinished(where, tool)
            return
        event = ToolCallFinished(self.session, tool, arguments, False, step["observation"])
        yield Located(where, event)


class SweAgentReader:
    """Reads SWE-agent trajectories (``.traj``)."""

    name: Final = "swe-agent"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a SWE-agent trajectory."""
        start = head.lstrip()[:1]
        return start == b"{" and b'"trajectory"' in head and b'"action"' in head

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one trajectory; never raises for bad input."""
        return _SweFile(file).read(lines)
