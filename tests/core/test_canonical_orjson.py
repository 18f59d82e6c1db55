"""The orjson path of canonical_arguments writes byte for byte what the earlier encoder wrote.

``_canonical(value, 0)`` is the encoder every value went through before the orjson path was
added (the C encoder of ``json`` for plain data, the general encoder for the rest); it is still
the path for whatever orjson is not given. Each test compares the two on values that take the
orjson path, or that look as if they might and must not.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from typing import Any

import orjson
from hypothesis import example, given
from hypothesis import strategies as st

from repeat_guard import canonical_arguments
from repeat_guard._canonical import _canonical, _orjson_ready

# Every code point, lone surrogates included (Hypothesis leaves them out unless asked).
any_text = st.text(st.characters(exclude_categories=()), max_size=8) | st.sampled_from(
    ["\ud800", "a\udfffb", "\x00\x1f\x7f", '"\\/', "\u2028\u2029", "é😀", "\b\f\n\r\t"]
)
orjson_leaves = st.none() | st.booleans() | st.integers() | any_text
orjson_shaped = st.recursive(
    orjson_leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(any_text, inner, max_size=4)
    ),
    max_leaves=24,
)


@given(orjson_shaped)
@example(2**64)
@example(-(2**63) - 1)
@example([2**63, -(2**63), 2**64 - 1])
@example({"big": 10**40})
@example({"\ud800": "key with a lone surrogate"})
def test_the_orjson_path_writes_the_earlier_text(value: Any) -> None:
    assert canonical_arguments(value) == _canonical(value, 0)


def nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


def test_nesting_on_both_sides_of_orjsons_depth_limit() -> None:
    for depth in (250, 254, 255, 256, 300):
        value = nested(depth)
        assert (
            canonical_arguments(value)
            == _canonical(value, 0)
            == "[" * (depth + 1) + "]" * (depth + 1)
        )


class Text(str):
    pass


class Number(int):
    pass


class Colour(enum.IntEnum):
    RED = 1


def test_values_orjson_would_write_differently_take_the_earlier_path() -> None:
    values: list[object] = [
        {Text("b"): 1, "a": 2},  # orjson refuses a key that is not exactly a str
        {1: "int key"},
        {"x": Text("sub")},
        {"x": Number(3)},
        {"x": Colour.RED},  # orjson would write the member's value
        {"x": 1.0},  # orjson would write 1.0
        {"x": 1e16},  # orjson would write 1e16
        {"x": OrderedDict(b=1, a=2)},
        [orjson.Fragment(b"[1]")],  # orjson would paste the fragment's bytes
        {"x": [1, 2.5]},
        ({"a": (1, None)},),
    ]
    for value in values:
        assert canonical_arguments(value) == _canonical(value, 0)
    assert canonical_arguments({"x": Colour.RED}) == '{"x":1}'
    assert canonical_arguments({"x": 1e16}) == '{"x":10000000000000000}'


def test_what_the_orjson_path_takes() -> None:
    assert _orjson_ready({"a": [1, (True, None)], "b": {"c": "d"}})
    assert _orjson_ready("text")
    assert _orjson_ready(())
    assert not _orjson_ready({"a": [1, 2.0]})
    assert not _orjson_ready([{"a": Text("x")}])
    assert not _orjson_ready(OrderedDict())
    assert not _orjson_ready(1.5)
