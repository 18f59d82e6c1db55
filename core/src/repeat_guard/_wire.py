"""Core values as JSON-ready mappings: the one codec every adapter writes and reads them with.

A mapping holds only ``str``, ``int``, ``bool``, ``None``, lists and str-keyed dicts (plus an
event's ``arguments``, which are whatever the harness passed), so any JSON encoder writes it.
"""

from __future__ import annotations

from ._reminders import Reminder

__all__ = ["reminder_to_json"]


def reminder_to_json(reminder: Reminder) -> dict[str, object]:
    """Return ``reminder`` as a mapping: every field under its own name, ``source`` first."""
    return {
        "source": reminder.source,
        "agent": reminder.agent,
        "tool": reminder.tool,
        "count": reminder.count,
        "form": reminder.form,
        "arguments": reminder.arguments,
        "text": reminder.text,
    }
