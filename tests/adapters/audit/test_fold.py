"""Folding one file's items: sessions apart, runs with their lines, steps charged once, days,
``--since``, and bounded memory for long loops and many diagnostics."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

from repeat_guard import (
    AgentDisposed,
    GuardConfig,
    PromptSubmitted,
    ToolCallFinished,
    ToolCallReturned,
)
from repeat_guard_audit import AuditSettings, DayTally, ProjectTally, Run, fold_file
from repeat_guard_audit._fold import MAX_PROBLEMS_KEPT, RUN_LINES_KEPT
from repeat_guard_transcripts import Diagnostic, Item, Located, Location, SessionSeen, Unfinished

F = "t.jsonl"
DAY = "2026-12-01T09:00:00Z"


def call(
    line: int,
    tool: str = "grep",
    arguments: object = None,
    *,
    session: str = "s",
    agent: str | None = "a",
    tokens: int | None = None,
    timestamp: str | None = DAY,
    project: str | None = "/p",
) -> Located:
    event = ToolCallFinished(agent, tool, {"q": 1} if arguments is None else arguments)
    return Located(Location(F, line, session), event, None, tokens, timestamp, project)


def test_a_run_is_reported_with_its_call_and_lines() -> None:
    result = fold_file(
        F, "test", [call(1), call(2), call(3), call(4, "read")], 123, AuditSettings(GuardConfig())
    )
    (session,) = result.sessions
    assert (session.session, session.project, result.format) == ("s", "/p", "test")
    assert session.waste.worst == (Run(3, "grep", '{"q":1}', F, "s", "a", (1, 2, 3)),)
    assert result.waste.counts.wasted == 2
    assert result.waste.counts.reminders_by_form["gentle"] == 1
    assert (result.waste.files, result.waste.bytes, result.waste.sessions) == (1, 123, 1)
    assert result.waste.days == {"2026-12-01": DayTally(4, 2)}
    assert result.waste.projects == {"/p": ProjectTally(1, 4, 2, 0)}
    assert result.waste.worst_sessions[0].wasted == 2


def test_sessions_keep_their_own_chains() -> None:
    items: list[Item] = [call(1), call(2, session="t"), call(3), call(4, session="t")]
    result = fold_file(F, "test", items, 0, AuditSettings(GuardConfig()))
    assert [s.session for s in result.sessions] == ["s", "t"]
    assert [s.waste.counts.wasted for s in result.sessions] == [1, 1]


def test_a_prompt_or_a_disposal_ends_a_run() -> None:
    items: list[Item] = [
        call(1),
        call(2),
        Located(Location(F, 3, "s"), PromptSubmitted("a")),
        call(4),
        call(5),
        Located(Location(F, 6, "s"), AgentDisposed("a")),
        call(7),
    ]
    result = fold_file(F, "test", items, 0, AuditSettings(GuardConfig()))
    assert [run.lines for run in result.waste.worst] == [(1, 2), (4, 5)]
    assert result.waste.counts.wasted == 2


def test_a_late_result_is_no_call_and_ends_no_run() -> None:
    late = Located(Location(F, 3, "s"), ToolCallReturned("a", "grep", {"q": 1}, "found"))
    result = fold_file(
        F, "test", [call(1), call(2), late, call(4)], 0, AuditSettings(GuardConfig())
    )
    assert [run.lines for run in result.waste.worst] == [(1, 2, 4)]
    assert result.waste.counts.calls == 3


def test_untracked_and_agentless_calls_leave_runs_alone() -> None:
    config = GuardConfig(exclude=("todo",))
    items: list[Item] = [call(1), call(2, "todo"), call(3, agent=None), call(4)]
    result = fold_file(F, "test", items, 0, AuditSettings(config))
    assert result.waste.worst[0].lines == (1, 4)
    assert result.waste.counts.calls == 3


def test_an_untracked_call_a_budget_remembers_leaves_runs_alone() -> None:
    # With a budget on, an untracked call changes the state (the budget's memory): it must
    # still neither end the agent's run nor start one of its own.
    config = GuardConfig(exclude=("todo",), budgets=(("todo", 9),))
    items: list[Item] = [call(1), call(2, "todo"), call(3), call(4, "todo")]
    result = fold_file(F, "test", items, 0, AuditSettings(config))
    assert result.waste.worst == (Run(2, "grep", '{"q":1}', F, "s", "a", (1, 3)),)
    assert result.waste.counts.wasted == 1


def test_a_step_is_charged_once_whichever_of_its_calls_is_wasted() -> None:
    items: list[Item] = [
        call(1, tokens=10),  # step 1: one call
        call(2, tokens=20),  # step 2: two parallel calls, both repeats
        call(3),
        call(4, "read", tokens=40),  # step 3: a new call, then a repeat in the same step
        call(5, "read"),
        call(6, "read", tokens=None, agent="b"),  # another agent, no usage recorded
        call(7, "read", agent="b"),
    ]
    result = fold_file(F, "test", items, 0, AuditSettings(GuardConfig()))
    assert result.waste.counts.wasted == 4
    assert (result.waste.wasted_turns, result.waste.wasted_tokens) == (2, 60)


def test_days_come_from_timestamps_and_odd_ones_are_unknown() -> None:
    items: list[Item] = [
        call(1, timestamp="2026-11-30T23:59:59Z"),
        call(2, timestamp=None),
        call(3, timestamp="2026-13-01T00:00:00Z"),
        call(4, timestamp="20261201T000000Z"),
        call(5, timestamp="yesterday"),
    ]
    result = fold_file(F, "test", items, 0, AuditSettings(GuardConfig()))
    assert result.waste.days == {"2026-11-30": DayTally(1, 0), "unknown": DayTally(4, 4)}


def test_since_replays_earlier_calls_without_counting_them() -> None:
    items: list[Item] = [
        call(1, timestamp="2026-11-30T10:00:00Z"),
        call(2, timestamp="2026-11-30T10:00:00Z"),
        call(3),
        call(4, "read", timestamp=None),
        SessionSeen(Location(F, 5, "old")),
        call(6, session="old", timestamp="2026-11-01T00:00:00Z"),
        call(7, session="old", timestamp="2026-11-01T00:00:00Z"),
    ]
    result = fold_file(F, "test", items, 0, AuditSettings(GuardConfig(), since="2026-12-01"))
    # The chain saw 1 and 2, so 3 is the third call of its run; 4 has no date, so it counts.
    assert [s.session for s in result.sessions] == ["s"]
    assert result.waste.counts.calls == 2
    assert result.waste.counts.wasted == 1
    assert result.waste.counts.reminders_by_form["gentle"] == 1
    assert result.waste.worst[0].length == 3


def test_a_session_without_calls_still_counts() -> None:
    items: list[Item] = [SessionSeen(Location(F, 1, "quiet"))]
    result = fold_file(F, "test", items, 0, AuditSettings(GuardConfig()))
    assert result.waste.sessions == 1
    assert result.sessions[0].waste.worst_sessions == ()
    assert result.sessions[0].project == ""


def test_long_loops_keep_a_bounded_list_of_lines() -> None:
    items: list[Item] = [call(n) for n in range(1, 1001)]
    result = fold_file(F, "test", items, 0, AuditSettings(GuardConfig()))
    (run,) = result.waste.worst
    assert run.length == 1000
    # The first lines, then always the run's last: where the loop ended is findable.
    assert run.lines == (*range(1, RUN_LINES_KEPT), 1000)
    assert len(run.lines) == RUN_LINES_KEPT == 50


class _Output:
    """A tool's result that a weak reference can follow."""


def test_an_open_loop_keeps_none_of_its_calls_results() -> None:
    outputs: list[weakref.ref[_Output]] = []

    def items() -> Iterator[Item]:
        for line in (1, 2, 3):
            output = _Output()
            outputs.append(weakref.ref(output))
            event = ToolCallFinished("a", "grep", {"q": 1}, result=output)
            yield Located(Location(F, line, "s"), event, None, None, DAY, "/p")
            del output, event
        yield SessionSeen(Location(F, 4, "s"))
        gc.collect()
        # The loop is still open; its calls wait in the tally as what it reads of them.
        assert [output() is None for output in outputs] == [True, True, True]

    result = fold_file(F, "test", items(), 0, AuditSettings(GuardConfig()))
    assert result.waste.worst[0].length == 3


def test_many_runs_are_cut_to_the_worst_as_they_come() -> None:
    items: list[Item] = []
    for n in range(200):
        items += [call(3 * n + 1, arguments=n), call(3 * n + 2, arguments=n)]
    items += [call(1000, "read"), call(1001, "read"), call(1002, "read")]
    result = fold_file(F, "test", items, 0, AuditSettings(GuardConfig(), keep=2))
    assert [run.length for run in result.waste.worst] == [3, 2]
    assert result.waste.worst[1].lines == (1, 2)


def test_long_arguments_are_cut_in_a_run() -> None:
    big = {"text": "x" * 5000}
    result = fold_file(
        F, "test", [call(1, arguments=big), call(2, arguments=big)], 0, AuditSettings(GuardConfig())
    )
    assert result.waste.worst[0].arguments.endswith("more chars)")
    assert len(result.waste.worst[0].arguments) < 600


def test_diagnostics_are_counted_and_the_first_ones_kept() -> None:
    items: list[Item] = [Diagnostic(F, n, "bad") for n in range(1, MAX_PROBLEMS_KEPT + 6)]
    items.append(Unfinished(Location(F, 1, "s"), "grep"))
    result = fold_file(F, "test", items, 0, AuditSettings(GuardConfig()))
    assert result.waste.diagnostics == MAX_PROBLEMS_KEPT + 5
    assert len(result.problems) == MAX_PROBLEMS_KEPT
    assert result.problems[0].line == 1
