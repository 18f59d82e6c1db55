"""The state codec carries the opt-in policies' memory, and refuses a broken one."""

from __future__ import annotations

import pytest

from repeat_guard import (
    CodecError,
    GuardConfig,
    GuardState,
    Memory,
    ToolCallFinished,
    decode_memory,
    decode_memory_or_error,
    decode_state,
    encode_memory,
    encode_state,
    reduce,
)

CONFIG = GuardConfig(cycle_period=3, progress="result", budgets=(("grep", 5),))


def test_every_memory_field_round_trips_and_an_all_off_state_writes_none() -> None:
    state = GuardState.initial(CONFIG)
    for n in range(4):
        state, _ = reduce(state, ToolCallFinished("a", "grep", {"n": n % 2}, result=n))
    memory = state.memory("a")
    assert memory.recent
    assert memory.runs
    assert memory.result
    assert memory.spent
    encoded = encode_state(state)
    assert set(encoded) == {"version", "chains", "memories"}
    assert decode_state(encoded, CONFIG).unwrap() == state
    assert decode_memory(encode_memory(memory)).unwrap() == memory
    assert "memories" not in encode_state(GuardState.initial())
    assert decode_memory(encode_memory(Memory())).unwrap() == Memory()


SHAPE = "a memory must be a list of 6 items (5 in version 1)"
VERSION = "memory version must be 2 (6 items) or 1 (5)"
RECENT = "recent calls must be a list of [tool, key]"
COUNTS = "must be a list of counts (0 or more)"
RESULT = "a result key must be a string or null"


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        ("x", "memory", SHAPE),
        ([1, [], [], None], "memory", SHAPE),
        ([1, [], [], None, [], None, None], "memory", SHAPE),
        ([2, [], [], None, []], "memory[0]", VERSION),
        ([1, [], [], None, [], None], "memory[0]", VERSION),
        ([3, [], [], None, [], None], "memory[0]", VERSION),
        ([2.0, [], [], None, [], None], "memory[0]", VERSION),
        ([True, [], [], None, []], "memory[0]", VERSION),
        ([2, [], [], None, [], 3], "memory[5]", RESULT),
        ([2, [], [], None, [], ["k"]], "memory[5]", RESULT),
        ([1, [["t"]], [], None, []], "memory[1]", RECENT),
        ([1, [["t", 2]], [], None, []], "memory[1]", RECENT),
        ([1, "x", [], None, []], "memory[1]", RECENT),
        ([1, [], [-1], None, []], "memory[2]", COUNTS),
        ([1, [], "x", None, []], "memory[2]", COUNTS),
        ([1, [], [], None, [True]], "memory[4]", COUNTS),
        ([1, [], [], 3, []], "memory[3]", RESULT),
    ],
)
def test_a_broken_memory_names_where(raw: object, path: str, message: str) -> None:
    value = raw if path == "memory" else raw[int(path[-2])]  # type: ignore[index]  # a list
    assert decode_memory(raw).failure() == CodecError(path, value, message)


def test_a_count_of_zero_is_a_count() -> None:
    # A budget nothing has spent yet and a period with no run both store 0.
    memory = Memory((("grep", "k"),), (0, 2), None, (0, 3))
    assert decode_memory(encode_memory(memory)).unwrap() == memory


def test_the_unwrapped_decoder_names_the_same_place_by_default() -> None:
    assert decode_memory_or_error("x") == CodecError("memory", "x", SHAPE)
    assert decode_memory_or_error("x", "m") == CodecError("m", "x", SHAPE)
    assert decode_memory_or_error([2, [], [], None, [], None]) == Memory()


def test_a_memory_of_version_1_is_read_with_no_earlier_result() -> None:
    # Stores written before ``earlier`` existed hold 5 items; they keep their meaning.
    raw = [1, [["grep", "k"]], [2], "r", [1]]
    assert decode_memory_or_error(raw) == Memory((("grep", "k"),), (2,), "r", (1,), None)
    assert encode_memory(Memory(result="r", earlier="q")) == [2, [], [], "r", [], "q"]
    assert decode_memory_or_error([2, [], [], "r", [], "q"]) == Memory(result="r", earlier="q")


def test_a_broken_memories_mapping_names_where() -> None:
    base = {"version": 1, "chains": {}}
    assert decode_state({**base, "memories": []}, CONFIG).failure().path == "state.memories"
    bad_agent = {**base, "memories": {1: [1, [], [], None, []]}}
    assert decode_state(bad_agent, CONFIG).failure().path == "state.memories"
    bad_item = {**base, "memories": {"a": "x"}}
    assert decode_state(bad_item, CONFIG).failure().path == "state.memories['a']"
