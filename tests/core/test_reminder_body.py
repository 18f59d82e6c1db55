"""``Reminder.body``: the reminder text without the envelope, for hosts that add their own."""

from __future__ import annotations

from repeat_guard import GuardState, Reminder, ToolCallFinished, reduce


def _fired(count: int) -> list[Reminder]:
    state = GuardState.initial()
    fired: list[Reminder] = []
    for _ in range(count):
        state, reminders = reduce(state, ToolCallFinished("a", "grep", {"pattern": "x"}))
        fired.extend(reminders)
    return fired


def _fire(count: int) -> str:
    return _fired(count)[-1].body


def test_body_is_the_text_inside_one_envelope() -> None:
    fired = _fired(5)
    assert len(fired) == 2
    for reminder in fired:
        assert reminder.text == f"<system-reminder>\n{reminder.body}\n</system-reminder>"
        assert "system-reminder" not in reminder.body


def test_gentle_and_detailed_bodies() -> None:
    assert _fire(3).startswith("You are repeating the exact same tool call.")
    detailed = _fire(5)
    assert detailed.startswith("You have called the tool `grep` 5 times in a row")
    assert detailed.endswith("finish your answer.")
