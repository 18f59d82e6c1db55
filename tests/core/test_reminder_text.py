"""The model-facing reminder texts, pinned word for word."""

from __future__ import annotations

import json

from repeat_guard import Deny, GuardConfig, GuardState, Reminder, ToolCallFinished, admit, reduce
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


BUDGET = (
    "<system-reminder>\n"
    "You have made 2 calls to tools matching `gr*` (this one to `grep`) since the user's last "
    "message, which is the budget for them. Do not call them again for this task: finish with "
    "what you have.\n"
    "</system-reminder>"
)

CYCLE = (
    "<system-reminder>\n"
    'You have repeated the same cycle of 2 tool calls 3 times: `read` {"p":0} → `write` {"p":1}\n'
    "Going round this cycle again will not give a different result: change your approach, or, "
    "if you have already gathered enough evidence, stop calling tools and finish your answer.\n"
    "</system-reminder>"
)


def test_budget_and_cycle_texts() -> None:
    state = GuardState.initial(GuardConfig(budgets=(("gr*", 2),), cycle_period=2))
    texts: list[str] = []
    for n in range(8):
        call = ToolCallFinished("a", "grep" if n < 2 else ["read", "write"][n % 2], {"p": n % 2})
        state, reminders = reduce(state, call)
        texts.extend(r.text for r in reminders)
    assert texts == [BUDGET, CYCLE]


def test_a_cycle_shows_the_calls_whose_arguments_were_kept_only_as_a_digest_as_long() -> None:
    # A loop seen in real sessions: write the same long file, read it, write it again. The write's
    # arguments are over the key's text limit, so its key is a digest the model cannot read.
    write = ToolCallFinished("a", "write_file", {"path": "x.py", "content": "print(1)\n" * 20})
    read = ToolCallFinished("a", "read_file", {"path": "x.py"})
    fired: list[str] = []
    for cycle in ([write, read], [read, write]):
        state = GuardState.initial(GuardConfig(cycle_period=2, arguments_preview_chars=40))
        for call in cycle * 3:
            state, reminders = reduce(state, call)
            fired.extend(r.text for r in reminders)
    assert len(fired) == 2
    assert (
        "3 times: `write_file` (arguments too long to show, the same each time) → "
        '`read_file` {"path":"x.py"}\n'
    ) in fired[0]
    # Ending with the long call, the cycle shows that call's own arguments, cut to the preview.
    assert (
        '3 times: `read_file` {"path":"x.py"} → `write_file` '
        '{"content":"print(1)\\nprint(1)\\nprint(1)… (+188 more chars)\n'
    ) in fired[1]
    assert "#" not in fired[0] + fired[1]


def test_a_cycle_of_three_names_its_calls_in_order_ending_with_the_one_just_made() -> None:
    calls = [ToolCallFinished("a", tool, {"n": n}) for n, tool in enumerate(("ls", "cat", "rm"))]
    state = GuardState.initial(GuardConfig(cycle_period=3))
    fired: list[Reminder] = []
    for call in calls * 3:
        state, reminders = reduce(state, call)
        fired.extend(reminders)
    assert [(r.form, r.count, r.tool, r.agent) for r in fired] == [("cycle", 3, "rm", "a")]
    assert '3 times: `ls` {"n":0} → `cat` {"n":1} → `rm` {"n":2}\n' in fired[0].text


def test_a_reminder_under_an_include_list_names_its_agent() -> None:
    # A config with include or exclude takes the reducer's general path, not its written-out one.
    state = GuardState.initial(GuardConfig(thresholds=(2,), exclude=("todo",)))
    fired: list[Reminder] = []
    for _ in range(2):
        state, reminders = reduce(state, ToolCallFinished("agent-7", "grep", {"q": 1}))
        fired.extend(reminders)
    assert [(r.agent, r.tool, r.count) for r in fired] == [("agent-7", "grep", 2)]


def test_the_reasons_admit_gives() -> None:
    state = GuardState.initial(GuardConfig(budgets=(("gr*", 2),), deny_at=3))
    call = ToolCallFinished("a", "grep", {"q": "x"})
    for _ in range(2):
        state, _ = reduce(state, call)
    assert admit(state, call) == Deny(
        "refused: this would be the 3rd identical call to `grep` in a row, and the limit is "
        "reached. Change the arguments or the approach, or finish your answer."
    )
    other = ToolCallFinished("a", "grep", {"q": "y"})
    assert admit(state, other) == Deny(
        "refused: the budget of 2 calls to tools matching `gr*` since the user's last message "
        "is spent, so `grep` cannot run now. Finish with what you have."
    )


def test_what_a_reminder_quotes_cannot_close_its_envelope() -> None:
    # A model can write anything into arguments, and a harness can name a tool anything.
    tag = "</system-reminder>"
    config = GuardConfig(
        thresholds=(2, 3), cycle_period=2, cycle_thresholds=(2,), budgets=((f"x{tag}*", 6),)
    )
    state = GuardState.initial(config)
    a, b = {"q": f"a{tag}"}, {"q": "b"}
    texts: list[str] = []
    for arguments in (a, a, a, b, a, b):
        state, reminders = reduce(state, ToolCallFinished("a", f"x{tag}", arguments))
        texts.extend(r.text for r in reminders)
    assert len(texts) == 4  # gentle, detailed, cycle, budget
    for text in texts:
        assert text.count(tag) == 1
        assert text.endswith(f"\n{tag}")
    assert "x<\\/system-reminder>` 3 times" in texts[1]
    assert '{"q":"a<\\/system-reminder>"}' in texts[1]
    assert json.loads('{"q":"a<\\/system-reminder>"}') == a
