"""A broken state's error is compared whole: the path, the value found there, and the message."""

from __future__ import annotations

import pytest

from repeat_guard import (
    Chain,
    CodecError,
    GuardConfig,
    GuardState,
    Memory,
    decode_state,
    encode_state,
)

CONFIG = GuardConfig(cycle_period=2, budgets=(("u", 5),))
CHAIN = [1, "t", "k", 1]
MEMORY = [2, [["t", "k"]], [1], None, [], None]


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ([], CodecError("state", [], "a state must be a mapping")),
        ({"chains": {}}, CodecError("state.version", None, "state version must be 1")),
        ({"version": 2}, CodecError("state.version", 2, "state version must be 1")),
        ({"version": 1.0}, CodecError("state.version", 1.0, "state version must be 1")),
        ({"version": True}, CodecError("state.version", True, "state version must be 1")),
        ({"version": 1}, CodecError("state.chains", None, "chains must be a mapping")),
        (
            {"version": 1, "chains": [CHAIN]},
            CodecError("state.chains", [CHAIN], "chains must be a mapping"),
        ),
        (
            {"version": 1, "chains": {3: CHAIN}},
            CodecError("state.chains", 3, "an agent id must be a string"),
        ),
        (
            {"version": 1, "chains": {"a": CHAIN, "b": [1, "t", "k", 0]}},
            CodecError("state.chains['b'][3]", 0, "repeats must be an integer of 1 or more"),
        ),
        (
            {"version": 1, "chains": {}, "memories": None},
            CodecError("state.memories", None, "memories must be a mapping"),
        ),
        (
            {"version": 1, "chains": {}, "memories": [MEMORY]},
            CodecError("state.memories", [MEMORY], "memories must be a mapping"),
        ),
        (
            {"version": 1, "chains": {}, "memories": {("a",): MEMORY}},
            CodecError("state.memories", ("a",), "an agent id must be a string"),
        ),
        (
            {"version": 1, "chains": {}, "memories": {"a": MEMORY, "b": [1, [], [], 7, []]}},
            CodecError("state.memories['b'][3]", 7, "a result key must be a string or null"),
        ),
    ],
)
def test_a_broken_state_names_where_what_and_why(raw: object, error: CodecError) -> None:
    assert decode_state(raw, CONFIG).failure() == error


def test_every_agent_comes_back_with_its_own_chain_and_memory() -> None:
    raw = {
        "version": 1,
        "chains": {"a": CHAIN, "b": [1, "u", "j", 4]},
        "memories": {"a": MEMORY, "b": [2, [], [], "r", [2], None]},
        "policies": [2, [["u", 5]]],
    }
    state = decode_state(raw, CONFIG).unwrap()
    assert state.config is CONFIG
    assert dict(state.chains) == {"a": Chain("t", "k", 1), "b": Chain("u", "j", 4)}
    assert dict(state.memories) == {
        "a": Memory((("t", "k"),), (1,), None, ()),
        "b": Memory((), (), "r", (2,)),
    }
    assert encode_state(state) == raw


def test_a_state_without_memories_decodes_to_one_without_memories() -> None:
    state = decode_state({"version": 1, "chains": {"a": CHAIN}}, CONFIG).unwrap()
    assert state == GuardState.from_chains(CONFIG, {"a": Chain("t", "k", 1)})
    assert dict(state.memories) == {}
