"""The pi reader: ``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`` to guard events.

pi (0.73) writes a session as a tree of entries, one a line, each with its ``id`` and
``parentId``: a ``session`` header (``id``, ``cwd``, ``version``), then ``message`` entries
whose ``message`` has a ``role``. An ``assistant`` message's ``toolCall`` blocks (``id``,
``name``, ``arguments``) are calls; each counts at the ``toolResult`` message with its
``toolCallId``, whose ``content`` is the result and ``isError`` marks it failed. A ``user``
message with text is a prompt. The entries are read in file order: a session branched
in pi's tree reads as one line of calls. One file is one session and one agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._calls import OpenCall, OpenCalls
from ._items import Item, Located, Location, SessionSeen
from ._reading import file_session, object_items, string, token_count
from ._registry import head_objects

__all__ = ["PiReader"]

_Key = tuple[int, str]


def _blocks(message: Mapping[str, object]) -> list[dict[str, object]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _tokens(message: Mapping[str, object]) -> tuple[int | None, int | None]:
    """An assistant message's output tokens and input tokens (new, read from and written to
    the cache)."""
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None, None
    return token_count(usage, "output"), token_count(usage, "input", "cacheRead", "cacheWrite")


class _PiFile:
    """The state of one session being read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.session = file_session(file)
        self.project: str | None = None
        self.seen = False
        self.prompts = 0  # a call is known by its id within a prompt: ids restart elsewhere
        self.calls: OpenCalls[_Key] = OpenCalls()

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        yield from object_items(lines, self.file, self._entry)
        yield from self.calls.drop_all()

    def _entry(self, line: int, entry: dict[str, object]) -> list[Item]:
        kind = entry.get("type")
        items: list[Item] = []
        if kind == "session" and not self.seen:
            self.session = string(entry, "id") or self.session
            self.project = string(entry, "cwd")
        if not self.seen:
            self.seen = True
            items.append(SessionSeen(Location(self.file, line, self.session)))
        message = entry.get("message")
        if kind != "message" or not isinstance(message, dict):
            return items
        where = Location(self.file, line, self.session)
        role, stamp = message.get("role"), string(entry, "timestamp")
        if role == "user" and any(b.get("type") == "text" for b in _blocks(message)):
            self.prompts += 1
            items += self.calls.drop_agent(self.session)
            items.append(Located(where, PromptSubmitted(self.session), timestamp=stamp))
        elif role == "assistant":
            items += self._calls(where, message, stamp)
        elif role == "toolResult":
            items += self._result(where, message, stamp)
        return items

    def _calls(
        self, where: Location, message: Mapping[str, object], stamp: str | None
    ) -> list[Item]:
        items: list[Item] = []
        tokens, input_tokens = _tokens(message)
        for block in _blocks(message):
            ident, tool = string(block, "id"), string(block, "name")
            if block.get("type") != "toolCall" or ident is None or tool is None:
                continue
            arguments = block.get("arguments")
            call = OpenCall(
                where,
                self.session,
                tool,
                arguments,
                None,
                tokens,
                stamp,
                self.project,
                input_tokens,
            )
            tokens = input_tokens = None  # the message's tokens go with its first call
            items += self.calls.add((self.prompts, ident), call)
        return items

    def _result(
        self, where: Location, message: Mapping[str, object], stamp: str | None
    ) -> list[Item]:
        ident = string(message, "toolCallId")
        call = self.calls.finish((self.prompts, ident)) if ident is not None else None
        if call is None:
            return []
        failed = message.get("isError") is True
        result = message.get("content")
        event = ToolCallFinished(self.session, call.tool, call.arguments, False, result, failed)
        return [
            Located(
                where,
                event,
                timestamp=stamp,
                project=call.project,
                tokens=call.tokens,
                input_tokens=call.input_tokens,
            )
        ]


class PiReader:
    """Reads pi sessions."""

    name: Final = "pi"
    description: Final = "~/.pi/agent/sessions/--<cwd>--/*.jsonl"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a pi session (its header first)."""
        return any(
            record.get("type") == "session" and "cwd" in record and "version" in record
            for record in head_objects(head)[:1]
        )

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one session; never raises for bad input."""
        return _PiFile(file).read(lines)
