"""The model-facing reminder texts, pinned word for word."""

from __future__ import annotations

from repeat_guard import GuardConfig, GuardState, ToolCallFinished, reduce
from repeat_guard._reminders import deny_repeat_reason, ordinal

GENTLE = (
    "<system-reminder>\n"
    "You are repeating the exact same tool call. Stop and analyse the result you already have, "
    "then try something different.\n"
    "</system-reminder>"
)

DETAILED = (
    "<system-reminder>\n"
    'You have called the tool `grep` 4 times in a row with identical arguments: {"q":"x"}\n'
    "These repeated calls made no progress. Do not call this tool with these exact arguments "
    "again: change your approach, or, if you have already gathered enough evidence, stop "
    "calling tools and finish your answer.\n"
    "</system-reminder>"
)


def test_gentle_and_detailed_texts() -> None:
    state = GuardState.initial(GuardConfig(thresholds=(2, 4)))
    texts: list[str] = []
    for _ in range(4):
        state, reminders = reduce(state, ToolCallFinished("a", "grep", {"q": "x"}))
        texts.extend(r.text for r in reminders)
    assert texts == [GENTLE, DETAILED]


def test_a_refusal_counts_in_english_ordinals() -> None:
    ordinals = [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112, 1000)]
    assert ordinals == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th",
        "21st", "22nd", "23rd", "101st", "111th", "112th", "1000th",
    ]  # fmt: skip
    assert deny_repeat_reason("grep", 3).startswith(
        "refused: this would be the 3rd identical call to `grep` in a row"
    )
