"""Other loop detectors' own test scenarios, told as events, decided by the options that match.

Each test restates, in this project's events, a scenario from a peer's test suite (read at the
commit named in its docstring) and checks that the guard, under the options that match the
peer, decides at the same call, or pins where and why it differs. The table in the
core README ("Peers' scenarios") lists them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from repeat_guard import (
    Deny,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    admit,
    parse_config,
    reduce,
)

AGENT = "a"


def call(tool: str, result: object = None, **arguments: object) -> ToolCallFinished:
    return ToolCallFinished(AGENT, tool, arguments, result=result)


PROMPT = PromptSubmitted(AGENT)


def config(**raw: object) -> GuardConfig:
    return parse_config(raw).unwrap()


def reminders(settings: Mapping[str, object], events: Sequence[Event]) -> list[tuple[int, str]]:
    """(the ordinal of the call, from 1, the form) of each reminder the events draw."""
    state, calls = GuardState.initial(config(**settings)), 0
    fired: list[tuple[int, str]] = []
    for event in events:
        calls += isinstance(event, ToolCallFinished)
        state, given = reduce(state, event)
        fired += [(calls, reminder.form) for reminder in given]
    return fired


def refusals(settings: Mapping[str, object], events: Sequence[Event]) -> list[int]:
    """The ordinals of the calls ``admit`` refuses; a refused call is reported as denied."""
    state, calls = GuardState.initial(config(**settings)), 0
    refused: list[int] = []
    for event in events:
        reported = event
        if isinstance(event, ToolCallFinished):
            calls += 1
            if isinstance(admit(state, event), Deny):
                refused.append(calls)
                reported = ToolCallFinished(
                    event.agent, event.tool, event.arguments, result=event.result, denied=True
                )
        state, _ = reduce(state, reported)
    return refused


# OpenHands, StuckDetector: All-Hands-AI/OpenHands @ 156d0686c46aafb0fa9d291da6421fb6f64dddc0,
# tests/unit/controller/test_is_stuck.py. It looks back over the history after each step.


def test_openhands_same_action_and_observation_four_times() -> None:
    """``ls`` answered the same (empty) way: stuck after the fourth pair, not the third.
    ``thresholds = [4]`` reminds at the fourth; the defaults already at the third."""
    ls = [call("execute_bash", "", command="ls")] * 4
    assert reminders({"thresholds": [4]}, ls[:3]) == []
    assert reminders({"thresholds": [4]}, ls) == [(4, "gentle")]
    assert reminders({}, ls) == [(3, "gentle")]


def test_openhands_interactive_mode_starts_over_at_a_user_message() -> None:
    """Interactive mode looks only after the last user message: four ``ls``, a message, two
    more is not stuck. The guard starts every chain over at a prompt (OpenHands' headless mode,
    which ignores user messages, has no counterpart)."""
    ls = call("execute_bash", "", command="ls")
    events = [ls] * 4 + [PROMPT] + [ls] * 2
    assert reminders({"thresholds": [4]}, events) == [(4, "gentle")]


def test_openhands_same_action_different_errors_three_times() -> None:
    """The same command failing three times, with a different error text each time, is stuck
    at the third ("not necessarily the same error"). The defaults ignore results and agree.
    Under ``progress = "result"`` the guard agrees when the calls carry their failure
    (``failed=True``: a failure is no progress over a failure of the same call); a harness that
    reports no failure flag, or ``errorsAreProgress = true``, takes each new error text for
    progress and says nothing."""
    errors = ["Command not found", "Command still not found or another error", "Different error"]
    failing = [
        ToolCallFinished(AGENT, "execute_bash", {"command": "invalid"}, result=e, failed=True)
        for e in errors
    ]
    unflagged = [call("execute_bash", error, command="invalid") for error in errors]
    assert reminders({}, failing) == [(3, "gentle")]
    assert reminders({"progress": "result"}, failing) == [(3, "gentle")]
    assert reminders({"progress": "result", "errorsAreProgress": True}, failing) == []
    assert reminders({"progress": "result"}, unflagged) == []


def test_openhands_pattern_whose_observations_change_is_not_stuck() -> None:
    """The pattern counts only when the observations repeat too: ``ls`` then a read whose
    content changes each time is not stuck. Cycles follow ``progress``: with
    ``progress = "result"`` no cycle reminder; without it, the guard reports the cycle."""
    events = [
        event
        for n in range(3)
        for event in (
            call("execute_bash", "file1.txt", command="ls"),
            call("read", f"File content {n}", path="file1.txt"),
        )
    ]
    cycles = {"cyclePeriod": 2, "cycleThresholds": [3]}
    assert reminders({**cycles, "progress": "result"}, events) == []
    assert reminders(cycles, events) == [(6, "cycle")]


def test_openhands_pattern_of_two_actions_three_times() -> None:
    """``ls`` then a read of ``file1.txt``, the same answers, three times over: stuck at the
    sixth call. ``cyclePeriod = 2`` with ``cycleThresholds = [3]`` gives its cycle reminder at
    the sixth, with or without ``progress = "result"`` (the answers never change)."""
    pair = [
        call("execute_bash", "file1.txt\nfile2.txt", command="ls"),
        call("read", "File content", path="file1.txt"),
    ]
    cycles = {"cyclePeriod": 2, "cycleThresholds": [3]}
    assert reminders(cycles, pair * 3) == [(6, "cycle")]
    assert reminders({**cycles, "progress": "result"}, pair * 3) == [(6, "cycle")]
    assert reminders(cycles, pair * 2 + pair[:1]) == []


# Gemini CLI, LoopDetectionService: google-gemini/gemini-cli @
# 5411f113cafae26161b4969b0237b8e1e024e2c2, packages/core/src/services/loopDetectionService
# .test.ts. It checks each tool call request before it runs; a loop stops the turn.


def test_gemini_fifth_identical_request_is_a_loop() -> None:
    """Four identical requests pass, the fifth is a loop and does not run: ``denyAt = 5``
    refuses exactly the fifth; ``thresholds = [5]`` would advise at it instead."""
    requests = [call("testTool", param="value")] * 5
    assert refusals({"denyAt": 5}, requests[:4]) == []
    assert refusals({"denyAt": 5}, requests) == [5]
    assert reminders({"thresholds": [5]}, requests) == [(5, "gentle")]


def test_gemini_other_events_do_not_reset_the_count() -> None:
    """A thought between the fourth and fifth request does not reset the count. The guard
    sees only calls; a call it does not track (``exclude``) is as transparent."""
    request = call("testTool", param="value")
    events = [request] * 4 + [call("todo_write", items=[])] + [request]
    assert refusals({"denyAt": 5, "exclude": ["todo_*"]}, events) == [6]


def test_gemini_different_requests_are_no_loop() -> None:
    """Three different requests, three times over, are not a loop: a cycle must repeat five
    times before Gemini CLI calls it one, and ``cycleThresholds = [5]`` waits as long."""
    requests = [
        call("testTool", param="value1"),
        call("testTool", param="value2"),
        call("anotherTool", param="value1"),
    ]
    settings = {"cyclePeriod": 5, "cycleThresholds": [5], "denyAt": 5}
    assert reminders(settings, requests * 3) == []
    assert refusals(settings, requests * 3) == []


def test_gemini_cycles_of_two_three_and_five_calls() -> None:
    """A cycle of k different requests is a loop once it has repeated five times (call 5k),
    and Gemini CLI stops the turn there: ``cyclePeriod = 5`` with ``cycleThresholds = [5]``
    reminds at the same call, and ``cycleDenyAt = 5`` refuses it (and each call going on round
    the cycle after it)."""
    settings = {"cyclePeriod": 5, "cycleThresholds": [5]}
    for size in (2, 3, 5):
        cycle = [call("read_file", file_path=f"loop_{n}.txt") for n in range(size)]
        assert reminders(settings, cycle * 6) == [(5 * size, "cycle")]
        assert refusals({**settings, "denyAt": 5}, cycle * 6) == []
        refused = refusals({**settings, "cycleDenyAt": 5}, cycle * 6)
        assert refused == list(range(5 * size, 6 * size + 1))


def test_gemini_an_alternation_that_breaks_is_no_loop() -> None:
    """A, B, A, B then C, then A, B again: no loop, and no cycle reminder."""
    a, b = call("read_file", file_path="loop_a.txt"), call("read_file", file_path="loop_b.txt")
    c = call("read_file", file_path="loop_c.txt")
    events = [a, b, a, b, c, a, b, a, b]
    assert reminders({"cyclePeriod": 5, "cycleThresholds": [5]}, events) == []


# Roo Code, ToolRepetitionDetector: RooCodeInc/Roo-Code @
# cb836567180a3ff1da6d082f3178b90c3bd22a70, src/core/tools/__tests__/ToolRepetitionDetector
# .spec.ts. It answers before each call runs, and asks the user when it blocks one.


def test_roo_limit_n_blocks_call_n_plus_one() -> None:
    """A limit of N lets N identical calls run and blocks the next: ``denyAt = N + 1``."""
    read = call("read_file", path="a.txt")
    for limit in (1, 2, 3):
        assert refusals({"denyAt": limit + 1}, [read] * (limit + 1)) == [limit + 1]


def test_roo_order_of_parameters_and_tool_names() -> None:
    """Parameters in another order are the same call; another tool with the same parameters is
    not."""
    first = ToolCallFinished(AGENT, "read_file", {"path": "a.txt", "line": 1})
    swapped = ToolCallFinished(AGENT, "read_file", {"line": 1, "path": "a.txt"})
    other = ToolCallFinished(AGENT, "list_files", {"path": "a.txt", "line": 1})
    assert refusals({"denyAt": 4}, [first, swapped, first, swapped]) == [4]
    assert refusals({"denyAt": 4}, [first, swapped, other, first]) == []


def test_roo_starts_over_after_a_block_the_guard_does_not() -> None:
    """After blocking, Roo Code forgets the call: the next identical call runs and it takes
    three more to block again. The guard counts the refused attempt like any call, so every
    further identical attempt is refused until the model changes course or the user speaks."""
    read = call("read_file", path="a.txt")
    assert refusals({"denyAt": 4}, [read] * 8) == [4, 5, 6, 7, 8]
    assert refusals({"denyAt": 4}, [read] * 4 + [PROMPT] + [read] * 3) == [4]


def test_roo_limit_zero_never_blocks() -> None:
    """A limit of 0 never blocks: no ``denyAt``."""
    assert refusals({}, [call("read_file", path="a.txt")] * 10) == []


# goose, RepetitionInspector: block/goose, crates/goose/tests/repetition_inspector_tests.rs
# (read in the copy of the fork yanghai092546/goose).


def test_goose_max_repetitions_then_new_parameters() -> None:
    """``max_repetitions = 2``: two identical calls run, the third is denied; new parameters
    start the count over, and their third identical call is denied too: ``denyAt = 3``."""
    v1, v2 = call("fetch_user", id=123), call("fetch_user", id=456)
    assert refusals({"denyAt": 3}, [v1, v1, v1, v2, v2, v2]) == [3, 6]


# LangChain, ToolCallLimitMiddleware: langchain 1.5.2 (as installed here),
# langchain/agents/middleware/tool_call_limit.py and its tests
# (libs/langchain_v1/tests/unit_tests/agents/middleware/implementations/test_tool_call_limit.py).


def test_langchain_run_limit_blocks_the_call_past_it() -> None:
    """``run_limit = 3`` for every tool: three calls of a run are allowed, the fourth is
    blocked, whatever the arguments. ``budgets = {"*" = 3}`` refuses the fourth (and advises at
    the third, which the middleware does not)."""
    calls = [call("search", query=f"q{n}") for n in range(4)]
    assert refusals({"budgets": {"*": 3}}, calls) == [4]
    assert reminders({"budgets": {"*": 3}}, calls) == [(3, "budget")]


def test_langchain_limit_for_one_tool() -> None:
    """``tool_name = "search"``, ``run_limit = 2``: other tools are not limited."""
    events = [call("search", query="a"), call("calc", x=1), call("search", query="b")]
    events += [call("calc", x=2), call("search", query="c"), call("calc", x=3)]
    assert refusals({"budgets": {"search": 2}}, events) == [5]


def test_langchain_run_limit_starts_over_each_run_thread_limit_does_not() -> None:
    """A run limit starts over with each invocation (a new user message), as the guard's
    budgets do at a prompt. A ``thread_limit`` counts across the thread's runs, as budgets do
    with ``budgetScope = "session"``: the second run's calls are refused."""
    run = [call("search", query=f"q{n}") for n in range(2)]
    assert refusals({"budgets": {"*": 2}}, [*run, PROMPT, *run]) == []
    assert refusals({"budgets": {"*": 2}}, [*run, *run]) == [3, 4]
    session = {"budgets": {"*": 2}, "budgetScope": "session"}
    assert refusals(session, [*run, PROMPT, *run]) == [3, 4]
