"""The GitHub Copilot CLI reader: ``~/.copilot/session-state/<id>/events.jsonl`` to guard
events.

Each line is an event ``{"type", "data", "id", "timestamp", "parentId"}`` (undocumented; read
from files the real Copilot CLI 1.0.102 wrote). ``session.start`` names the session
(``data.sessionId``) and its working directory (``data.context.cwd``); ``user.message`` is a
prompt; ``tool.execution_start`` (``toolCallId``, ``toolName``, ``arguments``) opens a call,
which counts at its ``tool.execution_complete``: ``success`` false is a failure, and an
``error.code`` of ``denied`` (or a ``permission.completed`` for the call whose result's
``kind`` starts with ``denied``) a denial; its ``result.content`` is the result. A call still
open at the next prompt or at the file's end never finished. One file is one session and one
agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._calls import DONE_MARKS, OpenCall, OpenCalls, RecentMarks
from ._items import Item, Located, Location, SessionSeen
from ._reading import file_session, object_items, string
from ._registry import head_objects

__all__ = ["CopilotCliReader"]

_TYPES = frozenset({"session.start", "user.message", "assistant.message", "tool.execution_start"})


def _result(data: Mapping[str, object]) -> object:
    """What a completed call returned: its result's ``content``, else its error's message."""
    result, error = data.get("result"), data.get("error")
    if isinstance(result, dict) and "content" in result:
        return result["content"]
    if isinstance(error, dict) and "message" in error:
        return error["message"]
    return result


class _CopilotFile:
    """The state of one events file being read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.session = file_session(file)
        self.project: str | None = None
        self.seen = False
        self.calls: OpenCalls[str] = OpenCalls()
        self.denied: RecentMarks[str] = RecentMarks(DONE_MARKS)

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        yield from object_items(lines, self.file, self._event)
        yield from self.calls.drop_all()

    def _event(self, line: int, event: dict[str, object]) -> list[Item]:
        kind, data = event.get("type"), event.get("data")
        if not isinstance(data, dict):
            return []
        items: list[Item] = []
        if kind == "session.start":
            self._start(data)
        if not self.seen:
            self.seen = True
            items.append(SessionSeen(Location(self.file, line, self.session)))
        where = Location(self.file, line, self.session)
        stamp = string(event, "timestamp")
        if kind == "user.message":
            items += self.calls.drop_agent(self.session)
            items.append(Located(where, PromptSubmitted(self.session), timestamp=stamp))
        elif kind == "tool.execution_start":
            items += self._start_call(where, data, stamp)
        elif kind == "tool.execution_complete":
            items += self._complete(where, data, stamp)
        elif kind == "permission.completed":
            self._permission(data)
        return items

    def _start(self, data: Mapping[str, object]) -> None:
        session, context = string(data, "sessionId"), data.get("context")
        if session is not None and not self.seen:
            self.session = session
        if isinstance(context, dict):
            self.project = string(context, "cwd")

    def _start_call(
        self, where: Location, data: Mapping[str, object], stamp: str | None
    ) -> tuple[Item, ...]:
        ident, tool = string(data, "toolCallId"), string(data, "toolName")
        if ident is None or tool is None:
            return ()
        arguments = data.get("arguments")
        call = OpenCall(where, self.session, tool, arguments, string(data, "turnId"), None, stamp)
        return self.calls.add(ident, call)

    def _complete(
        self, where: Location, data: Mapping[str, object], stamp: str | None
    ) -> list[Item]:
        ident = string(data, "toolCallId")
        call = self.calls.finish(ident) if ident is not None else None
        if call is None:
            return []
        error = data.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        denied = code == "denied" or ident in self.denied
        failed = data.get("success") is False and not denied
        event = ToolCallFinished(
            self.session, call.tool, call.arguments, denied, _result(data), failed
        )
        return [Located(where, event, call.turn, timestamp=stamp, project=self.project)]

    def _permission(self, data: Mapping[str, object]) -> None:
        ident, result = string(data, "toolCallId"), data.get("result")
        kind = result.get("kind") if isinstance(result, dict) else None
        denied = isinstance(kind, str) and kind.startswith("denied")
        if ident is not None and denied and ident not in self.denied:
            self.denied.mark(ident)


class CopilotCliReader:
    """Reads GitHub Copilot CLI session events."""

    name: Final = "copilot-cli"
    description: Final = "~/.copilot/session-state/<id>/events.jsonl"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a Copilot CLI events file."""
        return any(
            isinstance(record.get("type"), str)
            and record["type"] in _TYPES
            and isinstance(record.get("data"), dict)
            and "parentId" in record
            for record in head_objects(head)[:3]
        )

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one events file; never raises for bad input."""
        return _CopilotFile(file).read(lines)
