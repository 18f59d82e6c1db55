"""Repeated failures: the same call failing the same way, other calls between (``retry``)."""

from __future__ import annotations

import pytest

from repeat_guard import (
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    decode_state,
    encode_memory_settings,
    encode_state,
    memory_fits,
    parse_config,
    reduce,
)
from repeat_guard._policies import Memory

COMMIT = {"command": "git add -A && git commit -m 'fix'"}
HOOK = "pre-commit: ruff....Failed\n- hook id: ruff\n- exit code: 1"
RETRY = GuardConfig(retry_window=12)


def commit(result: object = HOOK, *, failed: bool = True, denied: bool = False) -> ToolCallFinished:
    return ToolCallFinished("a", "Bash", COMMIT, denied, result, failed)


def edit(n: int) -> ToolCallFinished:
    return ToolCallFinished("a", "Edit", {"file": "a.py", "n": n}, result="ok")


def run(config: GuardConfig, *events: Event) -> tuple[GuardState, list[Reminder]]:
    state = GuardState.initial(config)
    fired: list[Reminder] = []
    for event in events:
        state, reminders = reduce(state, event)
        fired.extend(reminders)
    return state, fired


def forms(reminders: list[Reminder]) -> list[tuple[str, int]]:
    return [(r.form, r.count) for r in reminders]


def test_the_same_failure_with_edits_between_gets_retry_reminders() -> None:
    events = [e for n in range(5) for e in (commit(), edit(n))]
    _, fired = run(RETRY, *events)
    assert forms(fired) == [("retry", 3), ("retry", 5)]
    text = fired[0].text
    assert "`Bash`" in text
    assert "git commit" in text
    assert "pre-commit: ruff" in text
    assert "failed 3 times the same way" in text


def test_off_by_default() -> None:
    events = [e for n in range(5) for e in (commit(), edit(n))]
    assert run(GuardConfig(), *events)[1] == []


def test_failures_back_to_back_are_the_chains_to_remind() -> None:
    _, fired = run(RETRY, commit(), commit(), commit())
    assert forms(fired) == [("gentle", 3)]


def test_the_failure_is_compared_by_its_fingerprint() -> None:
    lines = [commit(f"hook.sh: line {n}: ruff: command not found") for n in (3, 9, 27)]
    _, fired = run(RETRY, lines[0], edit(0), lines[1], edit(1), lines[2])
    assert forms(fired) == [("retry", 3)]
    other = [commit("ruff failed"), edit(0), commit("mypy failed"), edit(1), commit("ruff failed")]
    assert run(RETRY, *other)[1] == []


def test_a_failure_without_a_text_counts() -> None:
    events = [commit(None), edit(0), commit(None), edit(1), commit(None)]
    assert forms(run(RETRY, *events)[1]) == [("retry", 3)]


def test_a_success_of_that_call_clears_it() -> None:
    events = [commit(), edit(0), commit(), edit(1), commit("done", failed=False), edit(2)]
    events += [commit(), edit(3), commit()]
    assert run(RETRY, *events)[1] == []


def test_a_prompt_clears_it() -> None:
    events: list[Event] = [commit(), edit(0), commit(), PromptSubmitted("a"), edit(1), commit()]
    assert run(RETRY, *events)[1] == []


def test_a_refused_attempt_neither_fails_nor_clears() -> None:
    refused = commit("refused", denied=True)
    events = [commit(), edit(0), refused, edit(1), commit(), edit(2), commit()]
    assert forms(run(RETRY, *events)[1]) == [("retry", 3)]


def test_only_the_window_counts() -> None:
    config = GuardConfig(retry_window=5)
    events = [commit(), edit(0), edit(1), commit(), edit(2), edit(3), commit()]
    assert run(config, *events)[1] == []
    state, fired = run(config, commit(), edit(0), commit(), edit(1), commit())
    assert forms(fired) == [("retry", 3)]
    assert len(state.memory("a").failures) == 5


def test_untracked_calls_are_not_in_the_window() -> None:
    config = GuardConfig(retry_window=3, exclude=("Edit",))
    events = [commit(), edit(0), edit(1), commit(), edit(2), commit()]
    # The edits are excluded: the three commits are back to back for the chain too.
    state, fired = run(config, *events)
    assert forms(fired) == [("gentle", 3)]
    assert [f[0] for f in state.memory("a").failures] == ["Bash"] * 3


def test_thresholds_come_from_retry_thresholds() -> None:
    config = GuardConfig(retry_window=12, retry_thresholds=(4, 2))
    events = [e for n in range(4) for e in (commit(), edit(n))]
    assert forms(run(config, *events)[1]) == [("retry", 2), ("retry", 4)]


def test_a_stored_window_comes_back_and_fits_only_its_settings() -> None:
    state, _ = run(RETRY, commit(), edit(0), commit(), edit(1))
    stored = encode_state(state)
    assert stored["policies"] == [0, [], 12]
    again = decode_state(stored, RETRY).unwrap()
    again, fired = reduce(again, commit())
    assert forms(list(fired)) == [("retry", 3)]
    other = decode_state(stored, GuardConfig(retry_window=6)).unwrap()
    assert other.memories == {}
    assert encode_memory_settings(GuardConfig()) == [0, []]
    assert memory_fits(GuardConfig(retry_window=2), Memory(failures=(("t", "k", None),) * 2))
    assert not memory_fits(GuardConfig(retry_window=2), Memory(failures=(("t", "k", None),) * 3))


def test_the_config_keys() -> None:
    config = parse_config({"retryWindow": 10, "retryThresholds": [4, 2]}).unwrap()
    assert (config.retry_window, config.retry_thresholds) == (10, (2, 4))
    assert config.policies
    assert config.to_mapping()["retryWindow"] == 10
    assert config.to_mapping()["retryThresholds"] == [2, 4]
    assert "retryWindow" not in GuardConfig().to_mapping()
    assert parse_config({"retry_window": 0}).unwrap() == GuardConfig()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"retryWindow": 1}, "retryWindow must be 0 (off) or an integer from 2 to 64, got 1"),
        ({"retryWindow": 65}, "retryWindow must be 0 (off) or an integer from 2 to 64, got 65"),
        ({"retryWindow": True}, "retryWindow must be 0 (off) or an integer from 2 to 64, got True"),
        ({"retryThresholds": [1]}, "retryThresholds must be 2 or more, got 1 in [1]"),
    ],
)
def test_bad_retry_keys_name_themselves(raw: dict[str, object], message: str) -> None:
    assert parse_config(raw).failure().message == message


def test_a_failure_reported_after_its_call_counts_as_if_it_came_with_it() -> None:
    # A hook counts the call before it runs (no result) and reports its failure afterwards.
    from repeat_guard import ToolCallReturned

    late = ToolCallReturned("a", "Bash", COMMIT, HOOK, failed=True)
    events: list[Event] = []
    for n in range(3):
        events += [edit(n), commit(None, failed=False), late]
    state, fired = run(RETRY, *events)
    assert forms(fired) == [("retry", 3)]
    assert "pre-commit: ruff" in fired[0].text
    assert RETRY.needs_results
    assert not RETRY.reads_results
    # Another call since, a result already known, or a result still unknown: nothing.
    assert reduce(state, late)[1] == ()
    assert reduce(state, ToolCallReturned(None, "Bash", COMMIT, HOOK, failed=True))[1] == ()
    again, _ = reduce(state, commit(None, failed=False))
    assert reduce(again, ToolCallReturned("a", "Bash", COMMIT, None))[0] == again
    assert run(RETRY, edit(0), late)[1] == []
    # A late success clears the call's failures, as one with the call does.
    ok = ToolCallReturned("a", "Bash", COMMIT, "done")
    events = [commit(), edit(0), commit(), edit(1), commit(None, failed=False), ok, edit(2)]
    assert run(RETRY, *events, commit())[1] == []
    # A call never reported holds its place, neither failed nor worked.
    events = [commit(), edit(0), commit(None, failed=False), edit(1), commit(), edit(2), commit()]
    assert forms(run(RETRY, *events)[1]) == [("retry", 3)]
