"""The JSON form of a reminder, one mapping for ``replay --format json`` and ``serve`` alike."""

from __future__ import annotations

from repeat_guard import Reminder, reminder_to_json

__all__ = ["reminder_fields"]


def reminder_fields(reminder: Reminder) -> dict[str, object]:
    """The reminder as the command writes it, in ``replay --format json`` and ``serve`` alike.

    The core's one mapping (``reminder_to_json``), less its constant source label and the full
    argument text, plus the one-line ``summary``.
    """
    mapped = reminder_to_json(reminder)
    shown = {key: mapped[key] for key in ("agent", "tool", "count", "form")}
    return {**shown, "summary": reminder.summary, "text": mapped["text"]}
