"""The goose reader: its SQLite database (``~/.local/share/goose/sessions/sessions.db``) to
guard events.

goose keeps a ``sessions`` table and each session's ``messages``, every message's content a
JSON list (``content_json``) of items tagged with their ``type``. An assistant's
``toolRequest`` (or ``frontendToolRequest``) is a call: the tool is its ``toolCall.value.name``
and the arguments its ``toolCall.value.arguments``; it counts at the ``toolResponse`` with the
same ``id`` in the session, whose ``toolResult`` is the result. A response whose text is
goose's ``DECLINED_RESPONSE`` ("The user has declined to run this tool") is a denial. A request
goose could not parse (``toolCall.status`` ``error``) makes no call: a note. A ``user`` message
with text and no tool response is a prompt. Each session is one agent. The "line" of an item
is the ``id`` of its row in ``messages``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._calls import OpenCall, OpenCalls
from ._items import Diagnostic, Item, Located, Location, SessionSeen
from ._reading import string
from ._sqlite import SQLITE_MAGIC, Chunks, database_items, stream_note, text

__all__ = ["GooseReader"]

DECLINED: Final = "The user has declined to run this tool"
"""How goose's answer to a call the user refused begins."""

_REQUESTS = frozenset({"toolRequest", "frontendToolRequest"})
_SESSIONS = "SELECT id, working_dir FROM sessions ORDER BY created_at, id"
_MESSAGES = (
    "SELECT id, role, content_json FROM messages "
    "WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?"
)


def _content(text: object) -> list[object] | str:
    if not isinstance(text, str | bytes):
        return "content_json is not text"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        return f"content_json is not JSON: {error}"
    return value if isinstance(value, list) else "content_json is not a JSON list"


def _texts(result: Mapping[str, object]) -> Iterator[str]:
    value = result.get("value")
    content = value.get("content") if isinstance(value, dict) else value
    for item in content if isinstance(content, list) else ():
        text = item.get("text") if isinstance(item, dict) else None
        if isinstance(text, str):
            yield text


class _Session:
    def __init__(self, file: str, session: str, project: str | None) -> None:
        self.file = file
        self.session = session
        self.project = project
        self.calls: OpenCalls[str] = OpenCalls()

    def message(self, line: int, role: object, content: list[object]) -> Iterator[Item]:
        where = Location(self.file, line, self.session)
        kinds = [item.get("type") if isinstance(item, dict) else None for item in content]
        if role == "user" and "text" in kinds and "toolResponse" not in kinds:
            yield from self.calls.drop_agent(self.session)
            yield Located(where, PromptSubmitted(self.session), project=self.project)
            return
        for item in content:
            if isinstance(item, dict):
                yield from self._item(where, item)

    def _item(self, where: Location, item: Mapping[str, object]) -> Iterator[Item]:
        kind, ident = item.get("type"), string(item, "id")
        if ident is None:
            return
        if kind in _REQUESTS:
            call = item.get("toolCall")
            value = call.get("value") if isinstance(call, dict) else None
            name = value.get("name") if isinstance(value, dict) else None
            if not isinstance(value, dict) or not isinstance(name, str):
                message = f"a tool request goose could not parse ({ident!r}): no call"
                yield Diagnostic(where.file, where.line, message, "note")
                return
            opened = OpenCall(where, self.session, name, value.get("arguments"))
            yield from self.calls.add(ident, opened)
        elif kind == "toolResponse":
            result = item.get("toolResult")
            answer = result if isinstance(result, dict) else {}
            call = self.calls.finish(ident)
            if call is not None:
                error = answer.get("error")
                denied = any(text.startswith(DECLINED) for text in _texts(answer))
                outcome = error if isinstance(error, str) else answer.get("value")
                event = ToolCallFinished(call.agent, call.tool, call.arguments, denied, outcome)
                yield Located(where, event, project=self.project)


class _Database:
    def __init__(self, file: str) -> None:
        self.file = file

    def read(self, chunks: Chunks, reached: list[int]) -> Iterator[Item]:
        for session, directory in chunks.all(_SESSIONS):
            project = directory if isinstance(directory, str) else None
            reading = _Session(self.file, text(session), project)
            yield SessionSeen(Location(self.file, 0, reading.session))
            for row, role, content_json in chunks.keyed(_MESSAGES, (session,), lambda r: r[0]):
                line = row if isinstance(row, int) else 0
                reached[0] = line
                content = _content(content_json)
                if isinstance(content, str):
                    yield Diagnostic(self.file, line, f"a message whose {content}")
                    continue
                yield from reading.message(line, role, content)
            yield from reading.calls.drop_all()


class GooseReader:
    """Reads goose's SQLite database of sessions."""

    name: Final = "goose"
    description: Final = "~/.local/share/goose/sessions/sessions.db (SQLite: sessions, messages)"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts a SQLite database with goose's ``sessions`` and ``messages``
        tables (their schema is on its first pages)."""
        return (
            head.startswith(SQLITE_MAGIC)
            and b"CREATE TABLE messages" in head
            and b"content_json" in head
        )

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """A database is not read from a stream: one diagnostic."""
        yield stream_note(file, "a goose database")

    def read_path(self, path: str, file: str) -> Iterator[Item]:
        """Yield the items of the database at ``path``; never raises for what it holds."""
        return database_items(path, file, _Database(file).read)
