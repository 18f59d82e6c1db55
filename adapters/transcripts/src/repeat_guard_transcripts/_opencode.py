"""The opencode reader: its SQLite database (``~/.local/share/opencode/opencode.db``) to guard
events.

opencode keeps a ``session`` table, each session's ``message`` rows and each message's
``part`` rows, every message and part a JSON ``data`` column. A ``tool`` part is one call: the
tool is its ``tool``, the arguments its ``state.input``, and its ``state.status`` says how it
ended: ``completed`` (the result is ``state.output``), ``error`` (the result is
``state.error``; an error saying the user rejected the call is a denial), or ``pending`` /
``running`` (unfinished). A ``user`` message is a prompt, at its first part. Each session is
one agent (a subagent's session, with a ``parent_id``, is a session of its own). The "line" of
an item is the ``rowid`` of its part in the ``part`` table.

An assistant message's ``tokens`` (``input``, ``output``, ``reasoning``, ``cache.read``,
``cache.write``) go with its first call that counts. opencode takes the cached tokens out of
``input`` and the reasoning out of ``output`` to price each apart (its ``getUsage``), so the
step's output tokens are ``output`` + ``reasoning`` and its input tokens ``input`` +
``cache.read`` + ``cache.write``.

Sessions are read in the order they were made, messages in the order they were made, parts in
their id order, a chunk of rows at a time (``_sqlite``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._items import Diagnostic, Item, Located, Location, SessionSeen, Unfinished
from ._reading import token_count
from ._sqlite import SQLITE_MAGIC, Chunks, database_items, stream_note, text

__all__ = ["OpenCodeReader"]

DENIALS: Final = ("The user rejected permission", "The user dismissed")
"""How the ``error`` of a tool part the user refused begins."""

_SESSIONS = "SELECT id, directory FROM session ORDER BY time_created, id"
_MESSAGES = (
    "SELECT rowid, id, data FROM message WHERE session_id = ? AND rowid > ? ORDER BY rowid LIMIT ?"
)
_PARTS = "SELECT rowid, data FROM part WHERE message_id = ? ORDER BY id"


def _object(text: object) -> dict[str, object] | str:
    """The JSON object ``text`` holds, or why it holds none."""
    if not isinstance(text, str | bytes):
        return "its data is not text"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        return f"its data is not JSON: {error}"
    return value if isinstance(value, dict) else "its data is not a JSON object"


def _time(milliseconds: object) -> str | None:
    if not isinstance(milliseconds, int) or isinstance(milliseconds, bool):
        return None
    try:
        moment = datetime.fromtimestamp(milliseconds / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Database:
    def __init__(self, file: str) -> None:
        self.file = file

    def read(self, chunks: Chunks, reached: list[int]) -> Iterator[Item]:
        for session, directory in chunks.all(_SESSIONS):
            name = text(session)
            project = directory if isinstance(directory, str) else None
            yield SessionSeen(Location(self.file, 0, name))
            messages = chunks.keyed(_MESSAGES, (session,), key=lambda row: row[0])
            for _, ident, data in messages:
                yield from self._message(chunks, name, project, ident, data, reached)

    def _message(
        self,
        chunks: Chunks,
        session: str,
        project: str | None,
        ident: object,
        data: object,
        reached: list[int],
    ) -> Iterator[Item]:
        message = _object(data)
        parts = chunks.all(_PARTS, (ident,))
        if isinstance(message, str):
            line = parts[0][0] if parts else 0
            yield Diagnostic(
                self.file, _line(line), f"a message whose {message.removeprefix('its ')}"
            )
            return
        prompt = message.get("role") == "user"
        cost = _tokens(message)
        for rowid, part in parts:
            reached[0] = _line(rowid)
            where = Location(self.file, reached[0], session)
            if prompt:
                prompt = False
                when = _time(_dig(message, "time", "created"))
                yield Located(where, PromptSubmitted(session), timestamp=when, project=project)
            for item in self._part(where, session, project, part, cost):
                if isinstance(item, Located):
                    cost = (None, None)  # the step's tokens go with its first call
                yield item

    def _part(
        self,
        where: Location,
        session: str,
        project: str | None,
        data: object,
        cost: tuple[int | None, int | None],
    ) -> Iterator[Item]:
        part = _object(data)
        if isinstance(part, str):
            yield Diagnostic(where.file, where.line, f"a part whose {part.removeprefix('its ')}")
            return
        if part.get("type") != "tool":
            return
        tool, state = part.get("tool"), part.get("state")
        if not isinstance(tool, str) or not isinstance(state, dict):
            yield Diagnostic(where.file, where.line, "a tool part without its tool and state")
            return
        status = state.get("status")
        when = _time(_dig(state, "time", "start"))
        if status == "completed":
            event = ToolCallFinished(session, tool, state.get("input"), False, state.get("output"))
        elif status == "error":
            error = state.get("error")
            denied = isinstance(error, str) and error.startswith(DENIALS)
            event = ToolCallFinished(session, tool, state.get("input"), denied, error)
        else:  # pending, running: it never finished in the database
            yield Unfinished(where, tool)
            return
        tokens, input_tokens = cost
        yield Located(where, event, None, tokens, when, project, input_tokens)


def _tokens(message: dict[str, object]) -> tuple[int | None, int | None]:
    """An assistant message's output and input tokens (see the module's docstring)."""
    tokens = message.get("tokens")
    if not isinstance(tokens, dict):
        return None, None
    cache = tokens.get("cache")
    cached = token_count(cache, "read", "write") if isinstance(cache, dict) else None
    fresh = token_count(tokens, "input")
    known = [count for count in (fresh, cached) if count is not None]
    return token_count(tokens, "output", "reasoning"), (sum(known) if known else None)


def _line(rowid: object) -> int:
    return rowid if isinstance(rowid, int) and not isinstance(rowid, bool) else 0


def _dig(record: dict[str, object], *keys: str) -> object:
    value: object = record
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


class OpenCodeReader:
    """Reads opencode's SQLite database."""

    name: Final = "opencode"
    description: Final = "~/.local/share/opencode/opencode.db (SQLite: session, message, part)"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts a SQLite database with opencode's ``session`` and ``part``
        tables (their schema is on its first pages)."""
        return (
            head.startswith(SQLITE_MAGIC)
            and b"CREATE TABLE `part`" in head
            and b"CREATE TABLE `session`" in head
        )

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """A database is not read from a stream: one diagnostic."""
        yield stream_note(file, "an opencode database")

    def read_path(self, path: str, file: str) -> Iterator[Item]:
        """Yield the items of the database at ``path``; never raises for what it holds."""
        return database_items(path, file, _Database(file).read)
