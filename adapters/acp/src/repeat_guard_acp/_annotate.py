"""Write a transcript back with the guard's reminders injected where they fire.

Each reminder becomes a ``session/update`` notification of kind ``user_message_chunk`` whose
``_meta.repeatGuard`` carries the reminder's source, tool, count and form, so a replay (and
``--check``) recognises it as the guard's own and never as a user prompt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from repeat_guard import GuardConfig, Reminder

from ._model import Diagnostic, FileSummary, ReplayReminder
from ._replay import Replayer, _Line, numbered

__all__ = ["annotate_transcript", "reminder_notification"]


def reminder_notification(session_id: str, reminder: Reminder) -> dict[str, object]:
    """Return the JSON-RPC notification that carries ``reminder`` into session ``session_id``."""
    label = {
        "source": reminder.source,
        "tool": reminder.tool,
        "count": reminder.count,
        "form": reminder.form,
    }
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session_id,
            "update": {
                "sessionUpdate": "user_message_chunk",
                "content": {"type": "text", "text": reminder.text},
                "_meta": {"repeatGuard": label},
            },
        },
    }


def annotate_transcript(
    lines: Iterable[bytes], config: GuardConfig, *, file: str = "<stdin>"
) -> Iterator[bytes | Diagnostic | FileSummary]:
    """Yield the transcript's lines with a reminder line after each line where one fires.

    Lines are yielded as bytes ending in a newline; reminders recorded by an earlier annotation
    are dropped, so annotating again replaces them. Diagnostics come as they are found, the
    summary last (its ``recorded`` lists the reminders that were dropped).
    """
    replayer = Replayer(config, file)
    for number, raw, last in numbered(lines):
        line = replayer.feed(raw, number, last=last)
        if not line.recorded:
            yield raw if raw.endswith(b"\n") else raw + b"\n"
        yield from _injected(line)
    yield from _injected(replayer.finish())
    yield replayer.summary()


def _injected(line: _Line) -> Iterator[bytes | Diagnostic | FileSummary]:
    for item in line.items:
        if isinstance(item, ReplayReminder):
            message = reminder_notification(item.session, item.reminder)
            wrapped = {"dir": "a2c", "msg": message} if line.record_form else message
            yield json.dumps(wrapped, ensure_ascii=False).encode() + b"\n"
        else:
            yield item
