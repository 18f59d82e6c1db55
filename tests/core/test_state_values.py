"""States as values: hashing follows equality; a value that is not an event is a bug."""

from __future__ import annotations

import pytest

from repeat_guard import (
    GuardConfig,
    GuardState,
    ToolCallFinished,
    argument_key,
    canonical_arguments,
    reduce,
)


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


@pytest.mark.parametrize(
    "config", [GuardConfig(), GuardConfig(exclude=("todo_write",)), GuardConfig(cycle_period=2)]
)
def test_a_chain_keeps_short_arguments_as_text_and_long_ones_as_a_digest(
    config: GuardConfig,
) -> None:
    # 64 characters of canonical text are the key itself; 65 are digested, on each of the three
    # paths through reduce: every tool tracked and no policy, some tools left out (each call
    # asks the config), and the opt-in policies.
    keys = []
    for text in ("x" * 62, "x" * 63):
        state, _ = reduce(GuardState.initial(config), ToolCallFinished("a", "write", text))
        chain = state.chain("a")
        assert chain is not None
        assert chain.key == argument_key(canonical_arguments(text))
        keys.append(chain.key)
    assert keys[0] == '"' + "x" * 62 + '"'
    assert keys[1].startswith("#")
    assert len(keys[1]) == 33
