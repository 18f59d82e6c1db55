"""The JSON form of a reminder, one mapping for ``replay --format json`` and ``serve`` alike."""

from __future__ import annotations

from repeat_guard import Reminder

__all__ = ["reminder_fields"]


def reminder_fields(reminder: Reminder) -> dict[str, object]:
    """The reminder as the command writes it, in ``replay --format json`` and ``serve`` alike."""
    return {
        "agent": reminder.agent,
        "tool": reminder.tool,
        "count": reminder.count,
        "form": reminder.form,
        "summary": reminder.summary,
        "text": reminder.text,
    }
