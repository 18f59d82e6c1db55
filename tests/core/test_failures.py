"""Failed results under ``progress = "result"``: a failure is no news after a failure.

Scripted examples of each branch, so coverage does not hang on what the state machine draws.
"""

from __future__ import annotations

from repeat_guard import (
    Event,
    GuardConfig,
    GuardState,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    decode_state,
    encode_state,
    reduce,
)

PROGRESS = GuardConfig(thresholds=(3,), progress="result")
MAKE = {"command": "make"}


def run(config: GuardConfig, *events: Event) -> tuple[GuardState, list[Reminder]]:
    state = GuardState.initial(config)
    fired: list[Reminder] = []
    for event in events:
        state, reminders = reduce(state, event)
        fired.extend(reminders)
    return state, fired


def make(result: object, *, failed: bool = False) -> ToolCallFinished:
    return ToolCallFinished("a", "Bash", MAKE, result=result, failed=failed)


def test_failures_whose_text_changes_keep_counting() -> None:
    # Texts that differ in more than their fingerprint: another error each time.
    errors = [make(f"undefined: {name}", failed=True) for name in ("foo", "bar", "baz")]
    state, fired = run(PROGRESS, *errors)
    assert [(r.form, r.count) for r in fired] == [("gentle", 3)]
    assert state.chain("a").repeats == 3  # type: ignore[union-attr]  # the agent has one


def test_unless_errors_are_progress() -> None:
    config = GuardConfig(thresholds=(3,), progress="result", errors_are_progress=True)
    errors = [make(f"undefined: {name}", failed=True) for name in ("foo", "bar", "baz")]
    state, fired = run(config, *errors)
    assert fired == []
    assert state.chain("a").repeats == 1  # type: ignore[union-attr]


def test_a_success_after_a_failure_is_progress_and_a_failure_after_a_success_too() -> None:
    state, fired = run(PROGRESS, make("boom", failed=True), make("ok"), make("boom", failed=True))
    assert fired == []
    assert state.chain("a").repeats == 1  # type: ignore[union-attr]


def test_a_failure_without_a_text_is_known_and_compares_as_a_failure() -> None:
    state, _ = run(PROGRESS, make("ok"), make(None, failed=True))
    assert state.chain("a").repeats == 1  # type: ignore[union-attr]  # news: it failed now
    state, fired = run(
        PROGRESS, make("boom", failed=True), make(None, failed=True), make("x", failed=True)
    )
    assert [r.count for r in fired] == [3]


def test_a_failure_reported_after_its_call_keeps_the_chain() -> None:
    bare = ToolCallFinished("a", "Bash", MAKE)
    events: list[Event] = []
    for name in ("foo", "bar", "baz", "qux"):
        events += [bare, ToolCallReturned("a", "Bash", MAKE, f"undefined: {name}", failed=True)]
    state, fired = run(PROGRESS, *events)
    assert [r.count for r in fired] == [3]
    assert state.chain("a").repeats == 4  # type: ignore[union-attr]
    # Without the flag the same texts are progress each time.
    plain = [
        ToolCallReturned(e.agent, e.tool, e.arguments, e.result)
        if isinstance(e, ToolCallReturned)
        else e
        for e in events
    ]
    state, _ = run(PROGRESS, *plain)
    assert state.chain("a").repeats == 1  # type: ignore[union-attr]


def test_a_failure_without_text_reported_late_is_known() -> None:
    bare = ToolCallFinished("a", "Bash", MAKE)
    state, _ = run(
        PROGRESS, make("ok"), bare, ToolCallReturned("a", "Bash", MAKE, None, failed=True)
    )
    assert state.chain("a").repeats == 1  # type: ignore[union-attr]


def test_the_flag_changes_nothing_with_progress_off() -> None:
    errors = [make(f"line {n}", failed=True) for n in range(3)]
    assert (
        run(GuardConfig(thresholds=(3,)), *errors)[1]
        == run(GuardConfig(thresholds=(3,)), *[make(f"line {n}") for n in range(3)])[1]
    )


def test_a_denied_attempt_is_not_a_failure_of_the_tool() -> None:
    denied = ToolCallFinished("a", "Bash", MAKE, denied=True, result="refused", failed=True)
    state, _ = run(PROGRESS, make("ok"), denied)
    assert state.memory("a").result is None
    assert state.chain("a").repeats == 2  # type: ignore[union-attr]


def test_a_stored_state_keeps_what_failed() -> None:
    state, _ = run(PROGRESS, make("boom", failed=True))
    stored = encode_state(state)
    again = decode_state(stored, PROGRESS).unwrap()
    fired: list[Reminder] = []
    for event in (make("other", failed=True), make("third", failed=True)):
        again, reminders = reduce(again, event)
        fired.extend(reminders)
    assert [r.count for r in fired] == [3]


def test_a_memory_stored_before_failures_were_told_apart_still_loads() -> None:
    # A state as the previous release wrote it: memory version 2, results as plain keys.
    old = {
        "version": 1,
        "chains": {"a": [1, "Bash", '{"command":"make"}', 2]},
        "memories": {"a": [2, [], [], '"done"', [], '"done"']},
        "policies": [0, []],
    }
    state = decode_state(old, PROGRESS).unwrap()
    state, fired = reduce(state, make("done"))
    assert [r.count for r in fired] == [3]
    state, _ = reduce(state, make("broken", failed=True))
    assert state.chain("a").repeats == 1  # type: ignore[union-attr]  # a failure after success
