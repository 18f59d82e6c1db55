"""The session log: an append-only sequence of typed, frozen events, shared by every agent.

One log per loop, each event naming its agent, so one JSONL stream shows how concurrent agents
interleaved while ``SessionLog.for_agent`` recovers any one agent's history. An agent's own
events are also exactly what its model is shown (see ``ToolResult.model_content``), so what the
model saw and what was logged cannot drift apart.

Ids are deterministic: an event's ``id`` is ``"<agent id>/<n>"`` with ``n`` counting that
agent's events from 1, so it does not depend on how agents interleave. Nothing in an event is a
timestamp or a random value; the JSONL of a scripted run is byte-for-byte reproducible.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import ClassVar, Literal

from repeat_guard import Reminder, reminder_to_json

__all__ = [
    "AssistantMessage",
    "ContextMessage",
    "Event",
    "Outcome",
    "SessionLog",
    "ToolCall",
    "ToolResult",
    "UserMessage",
]

Outcome = Literal["accepted", "replaced", "blocked"]


def _dumps(data: Mapping[str, object]) -> str:
    # Arguments come from a model's JSON, so they are JSON data; ``repr`` is only a last resort
    # that keeps serialisation from failing on a value some custom model adapter produced.
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=repr)


def _event_json(event: Event) -> str:
    """One line of JSON: ``type`` first, then the event's fields in declaration order."""
    record: dict[str, object] = {"type": event.kind}
    for item in fields(event):
        value = getattr(event, item.name)
        if isinstance(value, Reminder):
            value = reminder_to_json(value)
        elif item.name == "source":
            value = dict(value)
        record[item.name] = value
    return _dumps(record)


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user's prompt reached ``agent``."""

    kind: ClassVar[str] = "user_message"
    id: str
    agent: str
    text: str

    def to_json(self) -> str:
        """Return this event as one line of JSON (no trailing newline)."""
        return _event_json(self)


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """The model answered ``agent``'s request with text, ending the turn."""

    kind: ClassVar[str] = "assistant_message"
    id: str
    agent: str
    text: str

    def to_json(self) -> str:
        """Return this event as one line of JSON (no trailing newline)."""
        return _event_json(self)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asked for ``tool`` with ``arguments`` (parsed JSON, or the raw string)."""

    kind: ClassVar[str] = "tool_call"
    id: str
    agent: str
    call_id: str
    tool: str
    arguments: object

    def to_json(self) -> str:
        """Return this event as one line of JSON (no trailing newline)."""
        return _event_json(self)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A finished call: the tool's own output, and what the model was shown for it.

    ``content`` and ``is_error`` are what the tool returned (or the denial a pre-execute listener
    gave, with ``denied`` set): the audit record, never rewritten. ``outcome`` says what the
    post-execute decision did with it: ``"accepted"`` shows ``content`` itself, ``"replaced"``
    shows a plugin's replacement, ``"blocked"`` shows a plugin's feedback as an error.
    ``model_content`` and ``model_is_error`` are what the model saw, whichever it was.
    """

    kind: ClassVar[str] = "tool_result"
    id: str
    agent: str
    call_id: str
    tool: str
    content: str
    is_error: bool
    denied: bool
    outcome: Outcome
    model_content: str
    model_is_error: bool

    def to_json(self) -> str:
        """Return this event as one line of JSON (no trailing newline)."""
        return _event_json(self)


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """Context a post-execute plugin attached to ``call_id``, injected after the step's results.

    ``source`` is the contributing plugin's provenance label, kept as it gave it. ``reminder``
    is the guard's ``Reminder`` value when the guard attached it (``None`` for other plugins);
    the log writes it with the core's ``reminder_to_json``.
    """

    kind: ClassVar[str] = "context_message"
    id: str
    agent: str
    call_id: str
    text: str
    source: Mapping[str, str] = field(default_factory=dict)
    reminder: Reminder | None = None

    def to_json(self) -> str:
        """Return this event as one line of JSON (no trailing newline)."""
        return _event_json(self)


Event = UserMessage | AssistantMessage | ToolCall | ToolResult | ContextMessage


class SessionLog:
    """Every event of every agent of one loop, in the order they happened. Append-only."""

    __slots__ = ("_events",)

    def __init__(self) -> None:
        self._events: list[Event] = []

    def append(self, event: Event) -> None:
        """Add ``event`` at the end. Earlier events never change."""
        self._events.append(event)

    @property
    def events(self) -> tuple[Event, ...]:
        """A snapshot of every event so far."""
        return tuple(self._events)

    def for_agent(self, agent: str) -> tuple[Event, ...]:
        """Return the events of the agent whose id is ``agent``, in order."""
        return tuple(event for event in self._events if event.agent == agent)

    def to_jsonl(self) -> str:
        """Return the log as JSON Lines: one event per line, each line ending in a newline."""
        return "".join(event.to_json() + "\n" for event in self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(tuple(self._events))

    def __len__(self) -> int:
        return len(self._events)
