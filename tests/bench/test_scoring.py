"""The scorer behind ``make eval`` on a tiny hand-labelled stream: every count it reports."""

from __future__ import annotations

from collections.abc import Mapping

from bench.scoring import Call, Label, Score, agent_calls, parse_labels, score_file

from repeat_guard import GuardConfig, PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import Diagnostic, Item, Located, Location, steps

GREP: Mapping[str, object] = {"pattern": "TODO"}


def located(
    line: int, tool: str, args: Mapping[str, object], result: str = "", session: str = "s"
) -> Located:
    event = ToolCallFinished(agent=session, tool=tool, arguments=args, result=result)
    return Located(Location("f.jsonl", line, session), event)


def stream() -> list[Item]:
    """Session s: calls 1-4 the same failing grep (a loop), 5 an edit, 6 the grep again (a
    retry with 1-4), 7-9 a poll whose output changes; session t: one call."""
    items: list[Item] = [located(10 + n, "grep", GREP, "no match") for n in range(4)]
    items.append(Diagnostic("f.jsonl", 14, "a line that is not JSON"))
    items.append(located(15, "edit", {"path": "a.py"}))
    items.append(located(16, "grep", GREP, "no match"))
    items.append(Located(Location("f.jsonl", 17, "s"), PromptSubmitted("s")))
    items.append(Located(Location("f.jsonl", 18, "s"), ToolCallFinished(None, "grep", GREP)))
    items += [located(19 + n, "poll", {"id": 1}, f"{n * 10}%") for n in range(3)]
    items.append(located(30, "ls", {}, "a b", session="t"))
    return items


LABELS = """\
# file  session agent calls lines kind note
f.jsonl s - 1-4   10-13 loop     the same failing grep four times
f.jsonl s - 1,6   10-16 retry    the grep again after an edit
f.jsonl s - 7-9   19-21 progress a poll whose output grows
"""


def test_parse_labels_reads_each_field() -> None:
    labels, errors = parse_labels(LABELS)
    assert errors == []
    assert labels[0] == Label(
        "f.jsonl", "s", None, (1, 2, 3, 4), (10, 13), "loop", "the same failing grep four times"
    )
    assert [label.calls for label in labels] == [(1, 2, 3, 4), (1, 6), (7, 8, 9)]
    assert [label.kind for label in labels] == ["loop", "retry", "progress"]


def test_parse_labels_names_each_bad_line() -> None:
    text = "\n".join(
        [
            "f - - 1-2 1-2",  # too few fields
            "f - - 2-1 1-2 loop x",  # a falling range
            "f - - 1,1 1-2 loop x",  # a repeated ordinal
            "f - - 0 1-2 loop x",  # ordinals start at 1
            "f - - a-b 1-2 loop x",
            "f - - 1,x 1-2 loop x",
            "f - - 1-2 1,2 loop x",  # lines are a range
            "f - - 1-2 1-2 spin x",
            "",
            "f - - 3 7-7 loop fine",
        ]
    )
    labels, errors = parse_labels(text)
    assert [error.split(":")[1] for error in errors] == ["1", "2", "3", "4", "5", "6", "7", "8"]
    assert "needs file, session" in errors[0]
    assert "kind must be one of loop, retry, progress" in errors[-1]
    assert [(label.session, label.agent, label.calls) for label in labels] == [(None, None, (3,))]


def test_agent_calls_counts_reminders_and_refusals() -> None:
    calls = agent_calls(steps(stream(), GuardConfig(thresholds=(3,), deny_at=4)))
    assert set(calls) == {("s", "s"), ("t", "t")}
    s = calls[("s", "s")]
    assert [call.line for call in s] == [10, 11, 12, 13, 15, 16, 19, 20, 21]
    assert [call.reminders for call in s] == [0, 0, 1, 0, 0, 0, 0, 0, 1]
    assert [call.refused for call in s] == [False, False, False, True] + [False] * 5


def test_score_file_counts_recall_and_false_positives() -> None:
    labels, _ = parse_labels(LABELS)
    score = score_file(labels, agent_calls(steps(stream(), GuardConfig(thresholds=(3,)))))
    assert score.labels == {"loop": 1, "retry": 1, "progress": 1}
    assert score.reminded == {"loop": 1, "retry": 0, "progress": 1}  # the poll's third call
    assert score.reminders == {"loop": 1, "retry": 0, "progress": 1}
    assert score.first == {labels[0]: 3, labels[1]: 0, labels[2]: 3}
    assert score.other == 0
    assert score.caught_by() == (1, 1)
    assert score.caught_by(limit=2) == (0, 1)
    assert score.caught_by(shortest=5) == (0, 0)
    assert score.mismatches == []
    # with progress read from results the poll is quiet and the loop still caught
    quiet = score_file(
        labels,
        agent_calls(steps(stream(), GuardConfig(thresholds=(3,), progress="result"))),
    )
    assert quiet.reminded == {"loop": 1, "retry": 0, "progress": 0}


def test_reminders_outside_labels_are_counted_apart() -> None:
    labels, _ = parse_labels("f.jsonl s - 7-9 19-21 progress the poll only\n")
    score = score_file(labels, agent_calls(steps(stream(), GuardConfig(thresholds=(2,)))))
    assert (score.reminded["progress"], score.reminders["progress"]) == (1, 1)
    assert score.other == 1  # the loop's second call, which no label names here


def test_mismatched_labels_are_reported_not_scored() -> None:
    calls = {("s", "a"): [Call(1, 0, False)], ("s", "b"): [], ("t", "a"): [Call(5, 1, True)]}
    text = "\n".join(
        [
            "f - - 1 1-1 loop two sessions",
            "f s - 1 1-1 loop two agents",
            "f s c 1 1-1 loop no such agent",
            "f u - 1 1-1 loop no such session",
            "f s a 1-2 1-2 loop too few calls",
            "f s a 1 2-2 loop wrong line",
            "f t - 1 5-5 retry fine",
        ]
    )
    labels, _ = parse_labels(text)
    score = score_file(labels, calls)
    assert [mismatch.split(": ", 1)[1] for mismatch in score.mismatches] == [
        "'-' names no session: the file has 2",
        "'-' names no agent: session 's' has 2",
        "no calls of agent 'c' in session 's'",
        "'-' names no agent: session 'u' has 0",
        "s has 1 calls",
        "calls (1,) are on lines 1-1",
    ]
    assert (score.labels["retry"], score.reminded["retry"], score.refused["retry"]) == (1, 1, 1)
    assert score.other == 0


def test_scores_add_up() -> None:
    labels, _ = parse_labels(LABELS)
    one = score_file(labels, agent_calls(steps(stream(), GuardConfig(thresholds=(3,)))))
    total = Score()
    total.add(one)
    total.add(Score(other=2, mismatches=["x"]))
    assert (total.labels, total.reminded) == (one.labels, one.reminded)
    assert total.reminders == one.reminders
    assert (total.other, total.mismatches, total.first) == (2, ["x"], one.first)


def test_dash_names_a_files_only_session() -> None:
    labels, _ = parse_labels("f - a 2 7-7 loop the one session's second call\n")
    score = score_file(labels, {("t", "a"): [Call(5, 0, False), Call(7, 2, False)]})
    assert (score.mismatches, score.first) == ([], {labels[0]: 1})
