"""The opt-in policies, one scripted example per rule, through the public API only."""

from __future__ import annotations

import pytest
from returns.pipeline import is_successful

from repeat_guard import (
    Admit,
    AgentDisposed,
    Deny,
    Event,
    GuardConfig,
    GuardState,
    Memory,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    admit,
    argument_key,
    canonical_arguments,
    parse_config,
    reduce,
)


def run(state: GuardState, *events: Event) -> tuple[GuardState, list[Reminder]]:
    fired: list[Reminder] = []
    for event in events:
        state, reminders = reduce(state, event)
        fired.extend(reminders)
    return state, fired


def call(
    tool: str, arguments: object = None, result: object = None, agent: str = "a"
) -> ToolCallFinished:
    return ToolCallFinished(agent, tool, {} if arguments is None else arguments, result=result)


WRITE, READ, LIST = call("write_file", {"x": 1}), call("read_file", {"p": "f"}), call("ls")


# -- off by default -------------------------------------------------------------------------


def test_every_policy_is_off_by_default_and_leaves_no_memory() -> None:
    config = GuardConfig()
    assert (config.cycle_period, config.progress, config.budgets, config.deny_at) == (
        0,
        "off",
        (),
        None,
    )
    assert not config.policies
    state, fired = run(GuardState.initial(), *[WRITE, READ] * 6, call("x", result="r"))
    assert fired == []
    assert state.memories == {}
    assert state.memory("a") == Memory()
    assert isinstance(admit(state, WRITE), Admit)


# -- cycles ----------------------------------------------------------------------------------


def test_a_two_call_cycle_fires_at_its_thresholds_naming_both_calls() -> None:
    state = GuardState.initial(GuardConfig(cycle_period=2, cycle_thresholds=(3, 4)))
    _, fired = run(state, *[WRITE, READ] * 4)
    assert [(r.form, r.count, r.tool) for r in fired] == [
        ("cycle", 3, "read_file"),
        ("cycle", 4, "read_file"),
    ]
    text = fired[0].text
    assert "same cycle of 2 tool calls 3 times" in text
    assert '`write_file` {"x":1} → `read_file` {"p":"f"}' in text
    assert fired[0].arguments == '{"p":"f"}'


def test_a_three_call_cycle_needs_a_period_of_three() -> None:
    three = [WRITE, READ, LIST] * 3
    _, short = run(GuardState.initial(GuardConfig(cycle_period=2)), *three)
    _, long = run(GuardState.initial(GuardConfig(cycle_period=3)), *three)
    assert short == []
    assert [(r.form, r.count, r.tool) for r in long] == [("cycle", 3, "ls")]


def test_a_back_to_back_repeat_is_not_a_cycle() -> None:
    config = GuardConfig(thresholds=(9,), cycle_period=3, cycle_thresholds=(2,))
    _, fired = run(GuardState.initial(config), *[WRITE] * 8)
    assert fired == []


def test_a_broken_cycle_starts_counting_again() -> None:
    config = GuardConfig(cycle_period=2, cycle_thresholds=(3,))
    _, fired = run(GuardState.initial(config), WRITE, READ, WRITE, READ, LIST, *[WRITE, READ] * 2)
    assert fired == []
    _, fired = run(GuardState.initial(config), WRITE, READ, WRITE, LIST, *[WRITE, READ] * 3)
    assert [r.count for r in fired] == [3]


def test_untracked_calls_are_transparent_to_cycles_and_a_prompt_resets_them() -> None:
    config = GuardConfig(cycle_period=2, cycle_thresholds=(3,), exclude=("todo_*",))
    todo = call("todo_write")
    _, fired = run(GuardState.initial(config), *[WRITE, todo, READ] * 3)
    assert [r.form for r in fired] == ["cycle"]
    _, fired = run(GuardState.initial(config), WRITE, READ, WRITE, PromptSubmitted("a"), READ)
    state, fired = run(
        GuardState.initial(config), WRITE, READ, PromptSubmitted("a"), *[WRITE, READ] * 2
    )
    assert fired == []
    assert state.memory("a").recent[-1][0] == "read_file"


# -- progress --------------------------------------------------------------------------------


def test_a_changed_result_is_progress_and_starts_the_chain_over() -> None:
    config = GuardConfig(thresholds=(3,), progress="result")
    polls = [call("ci_status", result={"state": s}) for s in ("queued", "running", "running")]
    state, fired = run(GuardState.initial(config), *polls)
    assert fired == []
    chain = state.chain("a")
    assert chain is not None
    assert chain.repeats == 2
    _, fired = run(state, call("ci_status", result={"state": "running"}))
    assert [r.count for r in fired] == [3]


def test_an_unreported_result_is_never_progress() -> None:
    config = GuardConfig(thresholds=(3,), progress="result")
    events = [call("poll", result="a"), call("poll"), call("poll", result="b")]
    _, fired = run(GuardState.initial(config), *events)
    assert [r.count for r in fired] == [3]


def test_without_progress_results_are_ignored() -> None:
    polls = [call("poll", result=n) for n in range(3)]
    _, fired = run(GuardState.initial(), *polls)
    assert [r.count for r in fired] == [3]


def test_only_a_fixed_size_key_of_the_result_is_kept() -> None:
    config = GuardConfig(progress="result")
    state, _ = run(GuardState.initial(config), call("read", result="x" * 100_000))
    kept = state.memory("a").result
    assert kept is not None
    assert len(kept) < 100


def returned(tool: str, result: object, arguments: object = None) -> ToolCallReturned:
    return ToolCallReturned("a", tool, {} if arguments is None else arguments, result)


PROGRESS = GuardConfig(thresholds=(3,), progress="result")


def test_admit_counts_the_calls_still_running_as_if_they_had_finished() -> None:
    state = GuardState.initial(GuardConfig(deny_at=3, budgets=(("read", 2),)))
    grep = call("grep", {"q": 1})
    assert isinstance(admit(state, grep, [grep]), Admit)
    assert isinstance(admit(state, grep, [grep, grep]), Deny)
    after, _ = run(state, grep, grep)
    assert admit(state, grep, [grep, grep]) == admit(after, grep)
    # Other agents' running calls are theirs; budgets count running calls too.
    assert isinstance(admit(state, grep, [call("grep", {"q": 1}, agent="b")] * 2), Admit)
    assert isinstance(admit(state, call("read"), [call("read"), call("read")]), Deny)
    assert isinstance(admit(state, ToolCallFinished(None, "grep", {}), [grep, grep]), Admit)


def test_a_denied_attempts_result_is_never_progress() -> None:
    # A harness reports the refused attempt with the refusal it gave the model as its result:
    # the tool did not run, so that text is no news about its output.
    config = GuardConfig(thresholds=(9,), progress="result", deny_at=3)
    state, _ = run(GuardState.initial(config), *[call("status", result="pending")] * 2)
    for _ in range(3):
        attempt = call("status", result="denied: the limit is reached")
        assert isinstance(admit(state, attempt), Deny)
        state, _ = run(state, ToolCallFinished("a", "status", {}, True, attempt.result))
    chain = state.chain("a")
    assert chain is not None
    assert chain.repeats == 5
    # As for any call whose result was not reported, the next call's result has nothing to be
    # compared with: it is not progress either.
    state, _ = run(state, call("status", result="done"))
    assert state.chain("a") == chain._replace(repeats=6)


def test_a_result_reported_after_its_call_is_compared_when_it_comes() -> None:
    # A hook counts at PreToolUse and learns the result at PostToolUse.
    state = GuardState.initial(PROGRESS)
    repeats = []
    for output in ("building", "building", "passed", "passed", "passed"):
        state, fired = run(state, call("ci_status"))
        assert fired == [] or [r.count for r in fired] == [3]
        state, after = run(state, returned("ci_status", {"log": output}))
        assert after == []
        chain = state.chain("a")
        assert chain is not None
        repeats.append((chain.repeats, [r.count for r in fired]))
    # Each call is counted before its result is known, as if it made no progress: the third
    # reminds (two identical results so far); its result, "passed" after "building", is
    # progress, so the chain starts over at that call and the fifth reminds again.
    assert repeats == [(1, []), (2, []), (1, [3]), (2, []), (3, [3])]


def test_results_reported_later_that_always_change_never_remind() -> None:
    state = GuardState.initial(PROGRESS)
    for n in range(10):
        state, fired = run(state, call("BashOutput"), returned("BashOutput", f"{n} bytes read"))
        assert fired == []
    assert state.memory("a").result is not None


def test_a_result_for_another_call_or_an_already_known_one_changes_nothing() -> None:
    state, _ = run(GuardState.initial(PROGRESS), call("poll"), call("poll"))
    for event in (
        returned("poll", "x", {"n": 2}),  # not the last call's arguments
        returned("read", "x"),  # nor its tool
        ToolCallReturned("b", "poll", {}, "x"),  # nor its agent
        ToolCallReturned(None, "poll", {}, "x"),
        returned("poll", None),  # a result that is not reported
    ):
        assert reduce(state, event) == (state, ())
    state, _ = run(state, returned("poll", "x"))
    assert reduce(state, returned("poll", "y")) == (state, ())  # already known
    known, _ = run(GuardState.initial(PROGRESS), call("poll", result="x"), call("poll", result="x"))
    assert reduce(known, returned("poll", "y")) == (known, ())
    # A result not reported, for a call whose previous identical call's result is known, is
    # not a result that differs from it: the chain keeps its count.
    waiting, _ = run(GuardState.initial(PROGRESS), call("poll", result="x"), call("poll"))
    assert reduce(waiting, returned("poll", None)) == (waiting, ())


def test_without_progress_a_reported_result_changes_nothing() -> None:
    assert PROGRESS.reads_results
    config = GuardConfig(cycle_period=2, budgets=(("*", 9),), deny_at=5)
    assert not config.reads_results
    state, _ = run(GuardState.initial(config), call("poll"), call("poll"))
    assert reduce(state, returned("poll", "x")) == (state, ())
    state, _ = run(GuardState.initial(), call("poll"), call("poll"))
    assert reduce(state, returned("poll", "x")) == (state, ())


def test_an_earlier_result_is_kept_only_while_the_chain_is_one_call() -> None:
    state, _ = run(GuardState.initial(PROGRESS), call("poll", result="x"), call("poll"))
    assert state.memory("a").earlier == argument_key(canonical_arguments("x"))
    state, _ = run(state, call("read"))
    assert state.memory("a").earlier is None
    state, _ = run(state, returned("read", "y"), call("read"), returned("read", "y"))
    chain = state.chain("a")
    assert chain is not None
    assert (chain.repeats, state.memory("a").earlier) == (2, state.memory("a").result)


# -- budgets ---------------------------------------------------------------------------------


def test_a_budget_counts_calls_by_name_and_fires_at_its_limit() -> None:
    config = GuardConfig(budgets=(("Bash", 3), ("mcp_*", 2)))
    bash = [call("Bash", {"cmd": n}) for n in range(4)]
    state, fired = run(GuardState.initial(config), *bash)
    assert [(r.agent, r.form, r.count, r.tool) for r in fired] == [("a", "budget", 3, "Bash")]
    assert "3 calls to tools matching `Bash`" in fired[0].text
    assert fired[0].arguments == '{"cmd":2}'  # the call that spent the budget, in full
    assert state.memory("a").spent == (4, 0)
    state, _ = run(state, PromptSubmitted("a"))
    assert state.memory("a") == Memory()


def test_a_budget_of_one_call_is_valid_and_speaks_at_the_first() -> None:
    assert is_successful(parse_config({"budgets": {"Bash": 1}}))
    _, fired = run(GuardState.initial(GuardConfig(budgets=(("Bash", 1),))), call("Bash"))
    assert [(r.form, r.count, r.tool) for r in fired] == [("budget", 1, "Bash")]


def test_a_budget_sees_excluded_tools_and_only_the_first_reached_budget_speaks() -> None:
    config = GuardConfig(exclude=("todo_*",), budgets=(("todo_*", 2), ("*", 2)))
    state, fired = run(GuardState.initial(config), call("todo_write"), call("todo_write", {"n": 1}))
    assert [r.tool for r in fired] == ["todo_write"]
    assert state.memory("a").spent == (2, 2)
    assert state.chain("a") is None


def test_a_call_matching_no_budget_leaves_the_state_as_it_was() -> None:
    state = GuardState.initial(GuardConfig(budgets=(("Bash", 3),), exclude=("ls",)))
    after, _ = reduce(state, LIST)
    assert after is state


# -- admit -----------------------------------------------------------------------------------


def test_admit_denies_the_call_that_would_reach_deny_at() -> None:
    state = GuardState.initial(GuardConfig(deny_at=3))
    state, _ = run(state, WRITE, WRITE)
    verdict = admit(state, WRITE)
    assert isinstance(verdict, Deny)
    assert "3rd identical call to `write_file`" in verdict.reason
    assert isinstance(admit(state, READ), Admit)
    assert isinstance(admit(state, call("write_file", {"x": 1}, agent="b")), Admit)
    assert isinstance(admit(state, ToolCallFinished(None, "write_file", {"x": 1})), Admit)
    denied_attempt = ToolCallFinished("a", "write_file", {"x": 1}, denied=True)
    state, fired = run(state, denied_attempt)
    assert [r.count for r in fired] == [3]  # the refused attempt still counts
    assert isinstance(admit(state, WRITE), Deny)


def test_at_the_smallest_deny_at_only_the_second_identical_call_is_refused() -> None:
    # deny_at = 2: a call that starts a chain is the first of its run and always runs.
    state = GuardState.initial(GuardConfig(deny_at=2))
    assert isinstance(admit(state, WRITE), Admit)
    state, _ = run(state, READ)
    assert isinstance(admit(state, WRITE), Admit)
    verdict = admit(state, READ)
    assert isinstance(verdict, Deny)
    assert "2nd identical call to `read_file`" in verdict.reason


def test_admit_ignores_untracked_tools_and_a_result_it_cannot_know() -> None:
    config = GuardConfig(deny_at=2, progress="result", exclude=("ls",))
    state, _ = run(GuardState.initial(config), LIST, call("poll", result=1))
    assert isinstance(admit(state, LIST), Admit)
    assert isinstance(admit(state, call("poll", result=2)), Deny)


def test_admit_denies_a_call_past_a_spent_budget_and_never_changes_the_state() -> None:
    config = GuardConfig(budgets=(("Bash", 2),))
    state, _ = run(GuardState.initial(config), call("Bash", {"n": 1}), call("Bash", {"n": 2}))
    verdict = admit(state, call("Bash", {"n": 3}))
    assert isinstance(verdict, Deny)
    assert "budget of 2 calls to tools matching `Bash`" in verdict.reason
    assert isinstance(admit(state, READ), Admit)
    assert isinstance(admit(GuardState.initial(config), call("Bash")), Admit)
    before = state
    admit(state, call("Bash"))
    assert state is before


# -- config ----------------------------------------------------------------------------------


def test_the_policy_keys_parse_in_both_spellings_and_round_trip() -> None:
    raw = {
        "cyclePeriod": 3,
        "cycleThresholds": [4, 2],
        "progress": "result",
        "budgets": {"Bash": 20, "mcp_*": 5},
        "denyAt": 10,
        "errorsAreProgress": True,
    }
    config = parse_config(raw).unwrap()
    assert config.cycle_thresholds == (2, 4)
    assert config.budgets == (("Bash", 20), ("mcp_*", 5))
    assert config.policies
    assert config.to_mapping() == {
        "thresholds": [3, 5, 8],
        "include": [],
        "exclude": [],
        "argumentsPreviewChars": 500,
        **raw,
        "cycleThresholds": [2, 4],
    }
    assert parse_config(config.to_mapping()).unwrap() == config
    snake = {"cycle_period": 2, "deny_at": 4, "budgets": [["Bash", 2]]}
    assert parse_config(snake).unwrap() == GuardConfig(
        cycle_period=2, deny_at=4, budgets=(("Bash", 2),)
    )
    assert GuardConfig(progress="result").policies
    assert not GuardConfig(deny_at=3).policies  # admit needs no memory
    # The bounds of the period are both allowed (9 and 1 are refused below).
    assert [parse_config({"cyclePeriod": p}).unwrap().cycle_period for p in (0, 2, 8)] == [0, 2, 8]


@pytest.mark.parametrize(
    ("raw", "key", "message"),
    [
        (
            {"cyclePeriod": 1},
            "cyclePeriod",
            "cyclePeriod must be 0 (off) or an integer from 2 to 8, got 1",
        ),
        (
            {"cycle_period": 9},
            "cyclePeriod",
            "cyclePeriod must be 0 (off) or an integer from 2 to 8, got 9",
        ),
        (
            {"cyclePeriod": True},
            "cyclePeriod",
            "cyclePeriod must be 0 (off) or an integer from 2 to 8, got True",
        ),
        ({"cycleThresholds": []}, "cycleThresholds", "cycleThresholds must not be empty"),
        (
            {"cycleThresholds": [1]},
            "cycleThresholds",
            "cycleThresholds must be 2 or more, got 1 in [1]",
        ),
        ({"progress": "results"}, "progress", "progress must be 'off' or 'result', got 'results'"),
        (
            {"budgets": "Bash"},
            "budgets",
            "budgets must map tool-name patterns to limits, got 'Bash'",
        ),
        ({"budgets": 3}, "budgets", "budgets must map tool-name patterns to limits, got 3"),
        (
            {"budgets": [["Bash"]]},
            "budgets",
            "budgets must map tool-name patterns to limits, got [['Bash']]",
        ),
        (
            {"budgets": {1: 2}},
            "budgets",
            "budgets must map tool-name patterns to limits, got {1: 2}",
        ),
        (
            {"budgets": {"Bash": 0}},
            "budgets",
            "budgets limits must be integers of 1 or more, got 0 for 'Bash'",
        ),
        (
            {"budgets": {"Bash": "2"}},
            "budgets",
            "budgets limits must be integers of 1 or more, got '2' for 'Bash'",
        ),
        ({"denyAt": 1}, "denyAt", "denyAt must be an integer of 2 or more (or absent), got 1"),
        ({"deny_at": 2.5}, "denyAt", "denyAt must be an integer of 2 or more (or absent), got 2.5"),
        (
            {"errorsAreProgress": "yes"},
            "errorsAreProgress",
            "errorsAreProgress must be true or false, got 'yes'",
        ),
    ],
)
def test_each_policy_key_fails_naming_itself(
    raw: dict[str, object], key: str, message: str
) -> None:
    result = parse_config(raw)
    assert not is_successful(result)
    assert (result.failure().key, result.failure().message) == (key, message)
    with pytest.raises(ValueError, match="must"):
        GuardConfig(**{_field(key): next(iter(raw.values()))})  # type: ignore[arg-type]  # on purpose


def _field(key: str) -> str:
    return {
        "cyclePeriod": "cycle_period",
        "cycleThresholds": "cycle_thresholds",
        "denyAt": "deny_at",
        "errorsAreProgress": "errors_are_progress",
    }.get(key, key)


def test_dispose_drops_the_memory_too() -> None:
    config = GuardConfig(cycle_period=2)
    state, _ = run(GuardState.initial(config), WRITE, call("x", agent="b"))
    assert set(state.memories) == {"a", "b"}
    state, _ = run(state, AgentDisposed("a"))
    assert set(state.memories) == {"b"}
    assert "memories=" in repr(state)
    assert "memories=" not in repr(GuardState.initial(config))


def test_budgets_given_as_an_iterator_are_refused_not_spent_by_the_check() -> None:
    # An iterator would be used up validating it, leaving no budgets at all.
    result = parse_config({"budgets": iter([("grep", 1)])})
    assert result.failure().message.startswith("budgets must map tool-name patterns to limits")
    with pytest.raises(ValueError, match="budgets must map"):
        GuardConfig(budgets=(pair for pair in [("grep", 1)]))  # type: ignore[arg-type]  # on purpose
