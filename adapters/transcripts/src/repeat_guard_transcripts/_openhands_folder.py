"""OpenHands V1 conversations as the software-agent-sdk persists them: a folder holding
``base_state.json`` and ``events/event-NNNNN-<id>.json``, one event a file (each one line of
JSON, no newline at its end).

The folder is one transcript: a walk that finds it gives the folder, not its files. The session
is the ``id`` in ``base_state.json`` (the folder's name when it has none); the events are read
in their files' order and mapped as ``_openhands_v1`` maps the same events in one file. An item
names the event's own file, at line 1.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator
from typing import Final

from ._items import Diagnostic, Item, Location, SessionSeen
from ._lines import MAX_LINE_BYTES, JsonValue, decode_json
from ._openhands import _Session, events_note
from ._sqlite import stream_note

__all__ = ["OpenHandsEventsReader"]

ENTRY: Final = "base_state.json"
EVENTS: Final = "events"


def _object(path: str) -> dict[str, object] | str:
    """The JSON object in the file ``path`` (at most ``MAX_LINE_BYTES``), or why there is
    none."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_LINE_BYTES + 1)
    except OSError as error:
        return f"read failed: {error.strerror or error}"
    if len(data) > MAX_LINE_BYTES:
        return f"longer than {MAX_LINE_BYTES} bytes"
    decoded = decode_json(data)
    if not isinstance(decoded, JsonValue):
        return decoded
    return decoded.value if isinstance(decoded.value, dict) else "expected a JSON object"


def _event_files(folder: str) -> list[str] | str:
    try:
        names = os.listdir(os.path.join(folder, EVENTS))
    except OSError as error:
        return f"cannot list {EVENTS}: {error.strerror or error}"
    return sorted(n for n in names if n.startswith("event-") and n.endswith(".json"))


def _items(folder: str, file: str) -> Iterator[Item]:
    base = os.path.join(folder, ENTRY)
    state = _object(base)
    ident = state.get("id") if isinstance(state, dict) else None
    name = ident if isinstance(ident, str) and ident else os.path.basename(folder.rstrip("/"))
    if isinstance(state, str):
        yield Diagnostic(base, 1, state)
    session = _Session(base, name or folder)
    yield SessionSeen(Location(base, 1, session.session))
    files = _event_files(folder)
    if isinstance(files, str):
        yield Diagnostic(folder, 0, files)
        return
    for event_file in files:
        path = os.path.join(folder, EVENTS, event_file)
        event = _object(path)
        if isinstance(event, str):
            yield Diagnostic(path, 1, event)
            continue
        session.file = path
        yield from session.event(1, event)
    yield from session.end()
    yield from events_note(file, OpenHandsEventsReader.name, session.events, session.made_calls)


class OpenHandsEventsReader:
    """Reads an OpenHands V1 conversation folder (``base_state.json`` and ``events/``)."""

    name: Final = "openhands-events"
    description: Final = "an OpenHands V1 conversation folder: base_state.json, events/event-*.json"
    entry: Final = ENTRY

    def claims(self, names: Collection[str]) -> bool:
        """Whether a folder holding ``names`` is a persisted conversation."""
        return ENTRY in names and EVENTS in names

    def sniff(self, head: bytes) -> bool:
        """A folder is told by its files' names (``claims``), never by one file's head."""
        return False

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """A folder is not read from a stream: one diagnostic."""
        yield stream_note(file, "an OpenHands conversation folder")

    def read_path(self, path: str, file: str) -> Iterator[Item]:
        """Yield the items of the conversation in the folder ``path`` (or the folder of the
        ``base_state.json`` at ``path``); never raises for what it holds."""
        folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
        return _items(folder, file)
