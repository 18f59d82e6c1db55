"""The hooks' translation, driven with CrewAI's own hook contexts as its executors build them
(fast; the crews themselves run in ``test_e2e_crews.py``)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from crewai.hooks import get_before_llm_call_hooks, get_before_tool_call_hooks

from repeat_guard import Event, GuardConfig, GuardState, Reminder
from repeat_guard_crewai import GuardConfigError, RepeatGuard, reminder_message

from ._support import DETAILED_MARK, GENTLE_MARK, Run, reminders

GREP = {"pattern": "TODO"}


def step(guard: RepeatGuard, run: Run, name: str = "grep", arguments: Any = GREP) -> str | None:
    """One tool call of ``run`` through the guard's hooks, and the model call after it: the
    result the model reads for the call."""
    before = run.tool_call(name, dict(arguments))
    blocked = guard.before_tool_call(before) is False
    result = f"Tool execution blocked by hook. Tool: {name}" if blocked else "no match"
    replaced = guard.after_tool_call(run.tool_call(name, dict(arguments), result))
    final = replaced if replaced is not None else result
    run.messages.append({"role": "tool", "content": final})
    guard.before_llm_call(run.model_call())
    return final


def test_the_gentle_reminder_follows_the_third_call_as_a_message_of_its_own() -> None:
    guard, run = RepeatGuard(), Run()
    guard.before_llm_call(run.model_call())
    for _ in range(3):
        step(guard, run)
    *_, result, reminder = run.messages
    assert result == {"role": "tool", "content": "no match"}
    assert reminder["role"] == "user"
    assert reminder["content"].startswith("<system-reminder>\n" + GENTLE_MARK)
    step(guard, run)
    step(guard, run)
    assert DETAILED_MARK in reminders(run.messages)[-1]
    assert len(reminders(run.messages)) == 2


def test_alternating_tools_are_left_alone() -> None:
    guard, run = RepeatGuard(), Run()
    guard.before_llm_call(run.model_call())
    for _ in range(5):
        step(guard, run, "grep")
        step(guard, run, "read", {"path": "a"})
    assert reminders(run.messages) == []


def test_runs_are_kept_apart_and_a_new_run_starts_over() -> None:
    guard, one, two = RepeatGuard({"thresholds": [2]}), Run(), Run()
    for run in (one, two):
        guard.before_llm_call(run.model_call())
    step(guard, one)
    step(guard, two)
    assert reminders(one.messages) == reminders(two.messages) == []
    step(guard, one)
    assert len(reminders(one.messages)) == 1
    assert reminders(two.messages) == []
    one.iterations = 0  # the same agent and task, kicked off again
    guard.before_llm_call(one.model_call())
    step(guard, one)
    assert len(reminders(one.messages)) == 1


def test_deny_at_refuses_and_the_result_says_why() -> None:
    guard, run = RepeatGuard({"denyAt": 3, "thresholds": [4]}), Run()
    guard.before_llm_call(run.model_call())
    assert [step(guard, run) for _ in range(2)] == ["no match", "no match"]
    refused = step(guard, run)
    assert refused is not None
    assert refused.startswith("refused: this would be the 3rd identical call to `grep`")
    refused = step(guard, run)
    assert refused is not None
    assert "4th" in refused
    assert len(reminders(run.messages)) == 1  # refused attempts count too


def test_calls_admitted_and_still_running_count_first() -> None:
    guard, run = RepeatGuard({"denyAt": 2}), Run()
    first, second = run.tool_call("grep", dict(GREP)), run.tool_call("grep", dict(GREP))
    assert guard.before_tool_call(first) is None
    assert guard.before_tool_call(second) is False  # the first has not finished yet
    assert guard.after_tool_call(run.tool_call("grep", dict(GREP), "x")) is None
    blocked = "Tool execution blocked by hook. Tool: grep"
    reason = guard.after_tool_call(run.tool_call("grep", dict(GREP), blocked))
    assert reason is not None
    assert reason.startswith("refused")
    # a call another hook blocked keeps CrewAI's text, and counts as a call of its own
    assert guard.after_tool_call(run.tool_call("grep", dict(GREP), blocked)) is None


def test_a_result_without_its_call_still_counts() -> None:
    guard, run = RepeatGuard({"thresholds": [2]}), Run()
    run.iterations = 1  # a run already under way
    assert guard.before_tool_call(run.tool_call("read", {"path": "a"})) is None
    # the guard was registered after this call started: no before hook saw it
    assert guard.after_tool_call(run.tool_call("grep", dict(GREP), "x")) is None
    assert guard.after_tool_call(run.tool_call("grep", dict(GREP), "x")) is None
    guard.before_llm_call(run.model_call())
    assert len(reminders(run.messages)) == 1


def test_registering_adds_the_hooks_and_leaving_removes_them() -> None:
    guard = RepeatGuard()
    with guard as entered:
        assert entered is guard
        assert guard.before_tool_call in get_before_tool_call_hooks()
        assert guard.before_llm_call in get_before_llm_call_hooks()
    assert guard.before_tool_call not in get_before_tool_call_hooks()
    assert guard.before_llm_call not in get_before_llm_call_hooks()


def test_config_is_resolved_by_the_core() -> None:
    assert RepeatGuard().config == GuardConfig()
    config = GuardConfig(thresholds=(2,))
    assert RepeatGuard(config).config is config
    assert RepeatGuard({"thresholds": [4]}).config.thresholds == (4,)
    with pytest.raises(GuardConfigError, match="thresholds must not be empty"):
        RepeatGuard({"thresholds": []})


def test_the_guard_fails_open_when_its_own_code_raises(caplog: pytest.LogCaptureFixture) -> None:
    def broken(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
        raise RuntimeError("boom")

    guard, run = RepeatGuard(reducer=broken), Run()
    with caplog.at_level(logging.ERROR, logger="repeat_guard_crewai"):
        assert step(guard, run) == "no match"
        context = run.model_call()
        context.messages = None  # type: ignore[assignment]  # a context the guard cannot extend
        guard.before_llm_call(context)
        unreadable = run.tool_call("grep", dict(GREP))
        unreadable.tool_input = None  # type: ignore[assignment]  # what a broken caller might send
        assert guard.before_tool_call(unreadable) is None
        unreadable.tool_result = "x"
        assert guard.after_tool_call(unreadable) is None
    assert caplog.messages == [
        # the finished call is counted at the next model call, and the reducer raises there
        "repeat-tool-guard failed (RuntimeError: boom); the model is called with its messages as"
        " they are",
        "repeat-tool-guard failed (AttributeError: 'NoneType' object has no attribute 'extend');"
        " the model is called with its messages as they are",
        "repeat-tool-guard failed (TypeError: 'NoneType' object is not iterable); the call runs"
        " unguarded",
        "repeat-tool-guard failed (TypeError: 'NoneType' object is not iterable); the call's"
        " result is kept as it is",
    ]


def test_reminder_message_is_a_user_message() -> None:
    from repeat_guard import ToolCallFinished, reduce

    state = GuardState.initial(GuardConfig(thresholds=(2,)))
    call = ToolCallFinished("a", "grep", {})
    _, (reminder,) = reduce(reduce(state, call)[0], call)
    assert reminder_message(reminder) == {"role": "user", "content": reminder.text}


MAKE = {"target": "all"}


def failed_step(guard: RepeatGuard, run: Run, text: str, records: list[Any], **of: Any) -> None:
    """A call of ``make`` whose result is ``text``, and the failure CrewAI records for it after
    the hooks (``of``: the agent's role and the task's id it writes), then the model call."""
    from crewai.tools.tool_failure import ToolFailure, ToolFailureRecord

    assert guard.before_tool_call(run.tool_call("make", dict(MAKE))) is None
    assert guard.after_tool_call(run.tool_call("make", dict(MAKE), text)) is None
    failure = ToolFailure(message=text)
    records.append(ToolFailureRecord(tool_name="make", failure=failure, tool_args=dict(MAKE), **of))
    guard.before_llm_call(run.model_call())


def test_a_call_crewai_records_as_failed_is_a_failed_result() -> None:
    from crewai.tools.tool_failure import tool_failure_collector

    guard, run = RepeatGuard({"thresholds": [2], "progress": "result"}), Run()
    guard.before_llm_call(run.model_call())
    with tool_failure_collector() as records:
        failed_step(guard, run, "Error executing tool: alpha", records)
        failed_step(guard, run, "Error executing tool: beta", records)
    # the texts differ, yet a failure is no progress over a failure
    assert len(reminders(run.messages)) == 1


def test_records_of_other_runs_or_of_no_collector_mark_nothing() -> None:
    from crewai.tools.tool_failure import tool_failure_collector

    guard, run = RepeatGuard({"thresholds": [2], "progress": "result"}), Run()
    guard.before_llm_call(run.model_call())
    with tool_failure_collector() as records:
        failed_step(guard, run, "alpha", records, agent_role="coworker")
        failed_step(guard, run, "beta", records, task_id="another task")
    failed_step(guard, run, "gamma", [])  # outside an execution: CrewAI collects nothing
    # each result differs and none is this run's failure: progress each time
    assert reminders(run.messages) == []


def test_a_failure_record_is_read_once_and_marks_one_call() -> None:
    from crewai.tools.tool_failure import tool_failure_collector

    guard, run = RepeatGuard({"thresholds": [2], "progress": "result"}), Run()
    guard.before_llm_call(run.model_call())
    with tool_failure_collector() as records:
        failed_step(guard, run, "same", records)
        # the same text, not failed: a success after a failure is progress
        assert guard.before_tool_call(run.tool_call("make", dict(MAKE))) is None
        assert guard.after_tool_call(run.tool_call("make", dict(MAKE), "same")) is None
        guard.before_llm_call(run.model_call())
    assert reminders(run.messages) == []
