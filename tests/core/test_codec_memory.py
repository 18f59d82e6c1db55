"""The state codec carries the opt-in policies' memory, and refuses a broken one."""

from __future__ import annotations

import pytest

from repeat_guard import (
    Admit,
    CodecError,
    GuardConfig,
    GuardState,
    Memory,
    ToolCallFinished,
    admit,
    decode_memory,
    decode_memory_or_error,
    decode_state,
    encode_memory,
    encode_memory_settings,
    encode_state,
    memory_fits,
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
    assert set(encoded) == {"version", "chains", "memories", "policies"}
    assert encoded["policies"] == [3, [["grep", 5]]]
    assert decode_state(encoded, CONFIG).unwrap() == state
    assert decode_memory(encode_memory(memory)).unwrap() == memory
    assert "memories" not in encode_state(GuardState.initial())
    assert decode_memory(encode_memory(Memory())).unwrap() == Memory()


SHAPE = "a memory must be a list of 8 items (7 in version 3, 6 in 2, 5 in 1)"
VERSION = "memory version must be 4 (8 items), 3 (7), 2 (6) or 1 (5)"
OUTCOMES = "outcomes must be a list of result keys or nulls"
FAILURES = "failures must be a list of [tool, key, key or null]"
RECENT = "recent calls must be a list of [tool, key]"
COUNTS = "must be a list of counts (0 or more)"
RESULT = "a result key must be a string or null"


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        ("x", "memory", SHAPE),
        ([1, [], [], None], "memory", SHAPE),
        ([1, [], [], None, [], None, [], None, None], "memory", SHAPE),
        ([1, [], [], None, [], None, [], []], "memory[0]", VERSION),
        ([4, [], [], None, [], None, [], "x"], "memory[7]", FAILURES),
        ([4, [], [], None, [], None, [], [["t", "k"]]], "memory[7]", FAILURES),
        ([4, [], [], None, [], None, [], [["t", 1, None]]], "memory[7]", FAILURES),
        ([4, [], [], None, [], None, [], [[1, "k", None]]], "memory[7]", FAILURES),
        ([4, [], [], None, [], None, [], [["t", "k", 2]]], "memory[7]", FAILURES),
        ([4, [], [], None, [], None, [], [("t", "k", None)]], "memory[7]", FAILURES),
        ([1, [], [], None, [], None, []], "memory[0]", VERSION),
        ([3, [], [], None, [], None, "x"], "memory[6]", OUTCOMES),
        ([3, [], [], None, [], None, [3]], "memory[6]", OUTCOMES),
        ([2, [], [], None, []], "memory[0]", VERSION),
        ([1, [], [], None, [], None], "memory[0]", VERSION),
        ([3, [], [], None, [], None], "memory[0]", VERSION),
        ([4, [], [], None, [], None, []], "memory[0]", VERSION),
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


def test_a_memory_with_a_retry_window_is_version_4_and_versions_3_and_2_still_load() -> None:
    window = (("Bash", "k", "!x"), ("Edit", "e", None))
    memory = Memory(failures=window)
    encoded = encode_memory(memory)
    assert encoded == [4, [], [], None, [], None, [], [["Bash", "k", "!x"], ["Edit", "e", None]]]
    assert decode_memory_or_error(encoded) == memory
    assert encode_memory(Memory(outcomes=("r",))) == [3, [], [], None, [], None, ["r"]]
    assert decode_memory_or_error([3, [], [], None, [], None, ["r"]]) == Memory(outcomes=("r",))
    assert decode_memory_or_error([2, [], [], "r", [], None]) == Memory(result="r")


def test_a_memory_of_version_1_is_read_with_no_earlier_result() -> None:
    # Stores written before ``earlier`` existed hold 5 items; they keep their meaning.
    raw = [1, [["grep", "k"]], [2], "r", [1]]
    assert decode_memory_or_error(raw) == Memory((("grep", "k"),), (2,), "r", (1,), None)
    assert encode_memory(Memory(result="r", earlier="q")) == [2, [], [], "r", [], "q"]
    assert decode_memory_or_error([2, [], [], "r", [], "q"]) == Memory(result="r", earlier="q")


def test_a_memory_of_version_3_carries_its_outcomes() -> None:
    memory = Memory((("grep", "k"),), (1,), None, (), None, ("r", None))
    assert encode_memory(memory) == [3, [["grep", "k"]], [1], None, [], None, ["r", None]]
    assert decode_memory_or_error(encode_memory(memory)) == memory


def test_a_broken_memories_mapping_names_where() -> None:
    base = {"version": 1, "chains": {}}
    assert decode_state({**base, "memories": []}, CONFIG).failure().path == "state.memories"
    bad_agent = {**base, "memories": {1: [1, [], [], None, []]}}
    assert decode_state(bad_agent, CONFIG).failure().path == "state.memories"
    bad_item = {**base, "memories": {"a": "x"}}
    assert decode_state(bad_item, CONFIG).failure().path == "state.memories['a']"


def _read_twice(config: GuardConfig) -> GuardState:
    state = GuardState.initial(config)
    for line in (1, 2):
        state, _ = reduce(state, ToolCallFinished("a", "read_file", {"line": line}))
    return state


def test_memories_made_under_other_settings_are_dropped_and_the_chains_kept() -> None:
    # Budget counts are per budget, in order: read under new budgets they would count the
    # wrong tools (reordered) or be read past their end (one more budget).
    old = GuardConfig(budgets=(("read_*", 2),))
    state = _read_twice(old)
    assert admit(state, ToolCallFinished("a", "read_file", {"line": 3})) != Admit()
    encoded = encode_state(state)
    for new in (
        GuardConfig(budgets=(("grep", 10), ("read_*", 2))),
        GuardConfig(budgets=(("read_*", 2), ("grep", 3))),
        GuardConfig(budgets=(("read_*", 3),)),
        GuardConfig(cycle_period=2, budgets=(("read_*", 2),)),
    ):
        decoded = decode_state(encoded, new).unwrap()
        assert decoded.chains == state.chains
        assert decoded.memories == {}
        for tool in ("read_file", "grep"):
            call = ToolCallFinished("a", tool, {"line": 3})
            assert admit(decoded, call) == Admit()
            reduce(decoded, call)
    assert decode_state(encoded, old).unwrap() == state


def test_a_state_written_before_it_carried_settings_keeps_the_memories_that_fit() -> None:
    old = GuardConfig(budgets=(("read_*", 5),))
    encoded = encode_state(_read_twice(old))
    del encoded["policies"]
    assert decode_state(encoded, old).unwrap().memory("a").spent == (2,)
    grown = GuardConfig(budgets=(("read_*", 5), ("grep", 3)))
    assert decode_state(encoded, grown).unwrap().memories == {}


def test_a_memory_that_contradicts_its_own_settings_is_refused() -> None:
    config = GuardConfig(budgets=(("read_*", 5),))
    encoded = encode_state(_read_twice(config))
    encoded["memories"] = {"a": [2, [], [], None, [1, 1], None]}
    error = decode_state(encoded, config).failure()
    assert error.path == "state.memories['a']"
    assert error.value == [2, [], [], None, [1, 1], None]
    assert error.message == "does not fit the state's policies"


def test_a_state_with_an_unknown_key_is_refused() -> None:
    error = decode_state({"version": 1, "chains": {}, "extra": 1}, CONFIG).failure()
    assert error == CodecError(
        "state", "extra", "unknown key 'extra' (known: chains, memories, policies, version)"
    )


def test_a_memory_fits_the_shape_its_config_gives_one() -> None:
    config = GuardConfig(cycle_period=3, budgets=(("grep", 5), ("read", 2)))
    assert encode_memory_settings(config) == [3, [["grep", 5], ["read", 2]]]
    assert memory_fits(config, Memory())
    assert memory_fits(config, Memory((("t", "k"),) * 3, (1, 2), None, (0, 1)))
    assert not memory_fits(config, Memory((("t", "k"),) * 4))
    assert not memory_fits(config, Memory(runs=(1,)))
    assert not memory_fits(config, Memory(spent=(1,)))
    assert not memory_fits(GuardConfig(progress="result"), Memory(runs=(0,)))
    assert memory_fits(GuardConfig(progress="result"), Memory(result="r"))
    with pytest.raises(ValueError, match="not made under this config"):
        GuardState.from_chains(config, {}, {"a": Memory(spent=(1,))})


def test_memory_under_is_the_one_judge_of_a_stored_memory() -> None:
    from repeat_guard import CodecError, encode_memory_settings, memory_under

    config = GuardConfig(budgets=(("grep", 3),))
    fits = Memory(spent=(1,))
    settings = encode_memory_settings(config)
    assert memory_under(fits, settings, config) == fits
    other = encode_memory_settings(GuardConfig(budgets=(("read", 3),)))
    assert memory_under(fits, other, config) is None  # made under other settings: afresh
    misfit = Memory(spent=(1, 2))
    assert memory_under(misfit, settings, config, "m") == CodecError(
        "m", [2, [], [], None, [1, 2], None], "does not fit the state's policies"
    )
