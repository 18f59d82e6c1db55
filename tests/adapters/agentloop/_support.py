"""Shared helpers for the agent-loop tests: tools, script shorthands and log queries."""

from __future__ import annotations

import json
from collections.abc import Iterable

from repeat_guard_agentloop import (
    ContextMessage,
    Event,
    ToolCall,
    ToolCallRequest,
    ToolRegistry,
    ToolResult,
)


def call(tool: str, arguments: object = None, call_id: str = "") -> tuple[ToolCallRequest, ...]:
    """A model turn of one tool call."""
    return (ToolCallRequest(tool, {} if arguments is None else arguments, call_id),)


async def echo(arguments: object) -> str:
    """A tool whose content is its arguments as JSON, so results are easy to predict."""
    return json.dumps(arguments, sort_keys=True)


def tools(*names: str) -> ToolRegistry:
    """A registry where every tool in ``names`` is ``echo``."""
    registry = ToolRegistry()
    for name in names:
        registry.register(name, echo, description=f"the {name} tool")
    return registry


def contexts(events: Iterable[Event]) -> list[ContextMessage]:
    """The injected context messages among ``events``."""
    return [event for event in events if isinstance(event, ContextMessage)]


def results(events: Iterable[Event]) -> list[ToolResult]:
    """The tool results among ``events``."""
    return [event for event in events if isinstance(event, ToolResult)]


def kinds(events: Iterable[Event]) -> list[str]:
    """Each event's type name, in order."""
    return [event.kind for event in events]


def reminders(events: Iterable[Event]) -> list[tuple[int, str]]:
    """Each guard reminder as (the ordinal of the call it follows, its summary).

    Ordinals count the tool calls among ``events`` from 1; only contexts carrying a reminder
    count, and their source must name the guard.
    """
    ordinal: dict[str, int] = {}
    found: list[tuple[int, str]] = []
    for event in events:
        if isinstance(event, ToolCall):
            ordinal[event.call_id] = len(ordinal) + 1
        elif isinstance(event, ContextMessage) and event.reminder is not None:
            assert event.source.get("plugin") == GUARD
            found.append((ordinal[event.call_id], event.reminder.summary))
    return found


GUARD = "repeat-tool-guard"
