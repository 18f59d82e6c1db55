"""The state codec: encode and decode are inverses, and decoding junk is a value, not a raise."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from repeat_guard import (
    CHAIN_VERSION,
    STATE_VERSION,
    AgentDisposed,
    Chain,
    CodecError,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    decode_chain,
    decode_chain_or_error,
    decode_state,
    encode_chain,
    encode_state,
    reduce,
)

AGENTS = [f"agent-{n}" for n in range(11)]
calls = st.builds(
    ToolCallFinished,
    st.sampled_from(AGENTS),
    st.sampled_from(["grep", "read"]),
    st.sampled_from([{"p": 1}, "x" * 100, [1, 2], {"p": 1.0}]),
)
events: st.SearchStrategy[Event] = (
    calls
    | st.builds(PromptSubmitted, st.sampled_from(AGENTS))
    | st.builds(AgentDisposed, st.sampled_from(AGENTS))
)
CONFIG = GuardConfig(thresholds=(2, 3, 5))


def replay(state: GuardState, script: list[Event]) -> tuple[GuardState, list[tuple[str, int]]]:
    fired: list[tuple[str, int]] = []
    for event in script:
        state, reminders = reduce(state, event)
        fired.extend((r.text, r.count) for r in reminders)
    return state, fired


@given(st.lists(events, max_size=40), st.lists(events, max_size=20))
def test_a_round_trip_changes_nothing_now_or_later(before: list[Event], after: list[Event]) -> None:
    state, _ = replay(GuardState.initial(CONFIG), before)
    encoded = json.loads(json.dumps(encode_state(state)))
    decoded = decode_state(encoded, CONFIG).unwrap()
    assert decoded == state
    assert replay(decoded, after) == replay(state, after)


def test_the_encoding_is_versioned_plain_data() -> None:
    state, _ = replay(GuardState.initial(), [ToolCallFinished("a", "grep", {"q": 1})] * 2)
    assert encode_state(state) == {
        "version": STATE_VERSION,
        "chains": {"a": [CHAIN_VERSION, "grep", '{"q":1}', 2]},
    }
    assert encode_chain(Chain("t", "k", 4)) == [CHAIN_VERSION, "t", "k", 4]
    assert decode_chain([1, "t", "k", 4]).unwrap() == Chain("t", "k", 4)


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        ("nope", "chain", "a chain must be a list of 4 items"),
        ([1, "t", "k"], "chain", "a chain must be a list of 4 items"),
        ([2, "t", "k", 1], "chain[0]", "chain version must be 1"),
        ([True, "t", "k", 1], "chain[0]", "chain version must be 1"),
        ([1, 5, "k", 1], "chain[1]", "the tool must be a string"),
        ([1, "t", None, 1], "chain[2]", "the argument key must be a string"),
        ([1, "t", 7, 1], "chain[2]", "the argument key must be a string"),
        ([1, "t", "k", 0], "chain[3]", "repeats must be an integer of 1 or more"),
        ([1, "t", "k", True], "chain[3]", "repeats must be an integer of 1 or more"),
        ([1, "t", "k", 1.5], "chain[3]", "repeats must be an integer of 1 or more"),
    ],
)
def test_a_bad_chain_is_named(raw: object, path: str, message: str) -> None:
    error = decode_chain(raw).failure()
    assert (error.path, error.message) == (path, message)
    at = raw if path == "chain" else raw[int(path[-2])]  # type: ignore[index]  # a list here
    assert error.value == at
    assert str(error) == f"{path}: {message}"


def test_the_unwrapped_decoder_names_the_same_place_by_default() -> None:
    shape = "a chain must be a list of 4 items"
    assert decode_chain_or_error("x") == CodecError("chain", "x", shape)
    assert decode_chain_or_error("x", "c") == CodecError("c", "x", shape)
    assert decode_chain_or_error([1, "t", "k", 2]) == Chain("t", "k", 2)


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ([], "state"),
        ({"chains": {}}, "state.version"),
        ({"version": 2, "chains": {}}, "state.version"),
        ({"version": 1.0, "chains": {}}, "state.version"),
        ({"version": 1, "chains": []}, "state.chains"),
        ({"version": 1, "chains": {3: [1, "t", "k", 1]}}, "state.chains"),
        ({"version": 1, "chains": {"a": [1, "t", "k", -1]}}, "state.chains['a'][3]"),
    ],
)
def test_a_bad_state_is_named(raw: object, path: str) -> None:
    error = decode_state(raw, CONFIG).failure()
    assert isinstance(error, CodecError)
    assert error.path == path


json_junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=15,
)


@given(json_junk | st.fixed_dictionaries({"version": st.just(1), "chains": json_junk}))
def test_decoding_junk_never_raises(raw: object) -> None:
    result = decode_state(raw, CONFIG)
    assert is_successful(result) or isinstance(result.failure(), CodecError)
    chain = decode_chain(raw)
    assert is_successful(chain) or isinstance(chain.failure(), CodecError)
