"""repeat-guard for Agent Client Protocol traffic: replay a transcript through the guard.

Lines are raw JSON-RPC messages or recorder records (``{"dir": "c2a"|"a2c", "msg": ...}``)::

    from repeat_guard import GuardConfig
    from repeat_guard_acp import FileSummary, ReplayReminder, replay_transcript

    with open("session.jsonl", "rb") as lines:
        for item in replay_transcript(lines, GuardConfig(), file="session.jsonl"):
            ...
"""

from ._annotate import annotate_transcript, reminder_notification
from ._model import (
    Diagnostic,
    FileSummary,
    RecordedReminder,
    ReplayItem,
    ReplayReminder,
    SessionTotals,
)
from ._replay import MAX_LINE_BYTES, Replayer, replay_transcript, tool_name

__all__ = [
    "MAX_LINE_BYTES",
    "Diagnostic",
    "FileSummary",
    "RecordedReminder",
    "ReplayItem",
    "ReplayReminder",
    "Replayer",
    "SessionTotals",
    "annotate_transcript",
    "reminder_notification",
    "replay_transcript",
    "tool_name",
]
