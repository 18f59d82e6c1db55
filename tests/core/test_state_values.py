"""States as values: hashing follows equality; a value that is not an event is a bug."""

from __future__ import annotations

import pytest

from repeat_guard import GuardState, ToolCallFinished, reduce


def test_equal_states_hash_alike_and_different_states_spread() -> None:
    states = [GuardState.initial()]
    for n in range(40):
        states.append(reduce(states[-1], ToolCallFinished(f"a{n % 5}", "grep", n))[0])
    again = GuardState.initial()
    for n in range(40):
        again = reduce(again, ToolCallFinished(f"a{n % 5}", "grep", n))[0]
    assert again == states[-1]
    assert hash(again) == hash(states[-1])
    assert len({hash(state) for state in states}) > 20


def test_reduce_rejects_a_value_that_is_not_an_event() -> None:
    with pytest.raises(AssertionError, match="'not an event'"):
        reduce(GuardState.initial(), "not an event")  # type: ignore[arg-type]  # misuse on purpose
