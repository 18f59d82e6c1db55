"""canonical_arguments: key order, JSON round trip, number equivalence, and totality."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from repeat_guard import argument_key, arguments_from_text, canonical_arguments
from repeat_guard._canonical import KEY_TEXT_LIMIT

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


def normalized(value: Any) -> Any:
    """The JSON value as JSON compares it: integral floats are integers."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: normalized(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalized(item) for item in value]
    return value


def reversed_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(item) for item in value]
    return value


def test_the_documented_example() -> None:
    assert canonical_arguments({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'


def test_numbers_compare_as_json_compares_them() -> None:
    assert canonical_arguments(1) == canonical_arguments(1.0) == "1"
    assert canonical_arguments({"n": 1e20}) == canonical_arguments({"n": 10**20})
    assert canonical_arguments(True) == "true"
    assert canonical_arguments(True) != canonical_arguments(1)
    assert canonical_arguments("1") != canonical_arguments(1)
    assert canonical_arguments(0.5) == "0.5"
    assert canonical_arguments(None) == "null"


def test_tuples_are_lists_and_mappings_are_objects() -> None:
    assert canonical_arguments((1, [2.0])) == "[1,[2]]"
    assert canonical_arguments(OrderedDict([("b", 1), ("a", 2)])) == '{"a":2,"b":1}'


@given(json_values)
def test_json_values_round_trip(value: Any) -> None:
    text = canonical_arguments(value)
    assert json.loads(text) == normalized(value)
    assert canonical_arguments(json.loads(text)) == text


@given(json_values)
def test_key_order_is_irrelevant_at_every_depth(value: Any) -> None:
    assert canonical_arguments(reversed_keys(value)) == canonical_arguments(value)


@given(st.dictionaries(st.text(max_size=3), st.integers(), max_size=5))
def test_output_is_compact(value: dict[str, int]) -> None:
    assert canonical_arguments(value) == json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"


class BrokenRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_non_json_values_get_deterministic_non_json_text() -> None:
    cases: dict[str, object] = {
        "NaN": math.nan,
        "Infinity": math.inf,
        "-Infinity": -math.inf,
        "<bytes 6869>": b"hi",
        "<set [1,3]>": {3, 1},
        f"<{__name__}.Opaque Opaque()>": Opaque(),
        f"<{__name__}.BrokenRepr>": BrokenRepr(),
    }
    for expected, value in cases.items():
        assert canonical_arguments(value) == expected
        assert canonical_arguments([value]) == f"[{expected}]"
    assert canonical_arguments(frozenset({"b", "a"})) == '<set ["a","b"]>'
    assert canonical_arguments(bytearray(b"\x00")) == "<bytes 00>"
    assert canonical_arguments({"x": float("nan"), "y": 2.0}) == '{"x":NaN,"y":2}'


def test_non_string_and_mixed_keys_are_sorted_deterministically() -> None:
    one = {2: "b", "1": "c", 1: "a", None: 0, (1, 2): "t"}
    two = dict(reversed(list(one.items())))
    assert canonical_arguments(one) == canonical_arguments(two)
    assert canonical_arguments({1: "a"}) == '{"1":"a"}'
    assert canonical_arguments({True: 1}) == '{"true":1}'


def test_subclasses_of_json_types_are_written_as_their_base() -> None:
    class Name(str):
        pass

    class Count(int):
        pass

    class Ratio(float):
        pass

    assert canonical_arguments({"k": Name("v"), "n": Count(3), "r": Ratio(2.0)}) == (
        '{"k":"v","n":3,"r":2}'
    )
    assert canonical_arguments({"r": Ratio(0.25)}) == '{"r":0.25}'


def test_huge_integers_do_not_raise() -> None:
    huge = 10**5000
    text = canonical_arguments({"n": huge})
    assert text.startswith('{"n":<int 0x')
    assert canonical_arguments({"n": huge}) == text


def test_cycles_are_marked_not_followed() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    assert canonical_arguments(loop) == "[1,<cycle>]"
    shared = [1]
    assert canonical_arguments([shared, shared]) == "[[1],[1]]"  # sharing is not a cycle


def test_nesting_100000_deep_is_encoded_without_raising() -> None:
    deep: list[object] = []
    cursor = deep
    for _ in range(100_000):
        inner: list[object] = []
        cursor.append(inner)
        cursor = inner
    text = canonical_arguments(deep)
    assert text == "[" * 100_001 + "]" * 100_001
    deep_dict: dict[str, object] = {}
    node = deep_dict
    for _ in range(100_000):
        child: dict[str, object] = {}
        node["k"] = child
        node = child
    assert canonical_arguments(deep_dict) == '{"k":' * 100_000 + "{}" + "}" * 100_000


junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.binary(max_size=4)
    | st.builds(Opaque),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers() | st.text(max_size=2), max_size=3)
        | st.dictionaries(st.integers() | st.text(max_size=2) | st.none(), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(junk)
def test_total_and_deterministic_on_junk(value: object) -> None:
    text = canonical_arguments(value)
    assert isinstance(text, str)
    assert canonical_arguments(value) == text


# Regressions: values that used to make canonical_arguments raise.


def test_frozensets_nested_deeply_do_not_exhaust_the_stack() -> None:
    value: frozenset[object] = frozenset()
    for _ in range(5_000):
        value = frozenset([value])
    text = canonical_arguments(value)
    assert text == canonical_arguments(value)
    assert text.startswith("<set [<set [")
    assert "<nested too deep>" in text


class _HostileStr(str):
    __slots__ = ()

    def __str__(self) -> str:
        raise RuntimeError("broken __str__")


class _HostileInt(int):
    def __int__(self) -> int:
        raise RuntimeError("broken __int__")


class _HostileFloat(float):
    def __float__(self) -> float:
        raise RuntimeError("broken __float__")


class _HostileList(list[int]):
    def __iter__(self) -> Iterator[int]:
        raise RuntimeError("broken __iter__")


def test_subclasses_with_broken_conversions_are_written_as_their_base() -> None:
    assert canonical_arguments([_HostileStr("a"), _HostileInt(3), _HostileFloat(2.0)]) == (
        '["a",3,2]'
    )
    assert canonical_arguments({_HostileStr("k"): 1}) == '{"k":1}'


def test_a_container_whose_iteration_raises_is_opaque() -> None:
    text = canonical_arguments(_HostileList([1]))
    assert text.startswith("<")
    assert "_HostileList" in text
    assert text.endswith(" [1]>")
    assert text == canonical_arguments(_HostileList([1]))


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("broken __repr__")


class _LazyProxy:
    """A proxy whose target failed to load: even ``isinstance`` raises, reading ``__class__``."""

    @property  # type: ignore[misc]  # a property over __class__, as lazy proxies define it
    def __class__(self) -> type:
        raise RuntimeError("lazy target failed to load")

    def __repr__(self) -> str:
        return "<lazy>"


def test_an_object_whose_class_raises_is_opaque() -> None:
    assert canonical_arguments({"value": _LazyProxy()}) == (
        f'{{"value":<{__name__}._LazyProxy <lazy>>}}'
    )
    assert canonical_arguments(_LazyProxy()) == f"<{__name__}._LazyProxy <lazy>>"


def test_keys_with_the_same_text_are_ordered_by_their_values() -> None:
    first, second = _Unprintable(), _Unprintable()
    forward = canonical_arguments({first: 1, second: 2})
    assert forward == canonical_arguments({second: 2, first: 1})
    assert forward.index(":1") < forward.index(":2")


# argument_key: the chain's half that compares arguments.


@given(junk)
def test_no_canonical_text_starts_with_the_digest_mark(value: object) -> None:
    assert not canonical_arguments(value).startswith("#")


def test_short_texts_are_their_own_key_and_long_ones_a_fixed_size_digest() -> None:
    limit = "x" * (KEY_TEXT_LIMIT - 2)
    assert argument_key(canonical_arguments(limit)) == f'"{limit}"'
    longer = canonical_arguments(limit + "y")
    key = argument_key(longer)
    assert len(longer) == KEY_TEXT_LIMIT + 1
    assert key.startswith("#")
    assert len(key) == 33
    assert argument_key(canonical_arguments("w" * 10_000_000)) != key
    assert len(argument_key(canonical_arguments("w" * 10_000_000))) == 33


@given(st.text(), st.text())
def test_keys_are_equal_exactly_when_texts_are(first: str, second: str) -> None:
    assert (argument_key(first) == argument_key(second)) == (first == second)


def test_a_lone_surrogate_is_digested_without_raising() -> None:
    text = '"' + "\ud800" * KEY_TEXT_LIMIT + '"'
    assert argument_key(text) != argument_key(text[:-2] + '\udc00"')


def test_arguments_from_text_parses_json_and_keeps_other_text() -> None:
    assert arguments_from_text('{"b": 1, "a": [1, 2]}') == {"a": [1, 2], "b": 1}
    assert arguments_from_text("{not json") == "{not json"
    assert arguments_from_text("") == ""
    too_deep = "[" * 100_000 + "]" * 100_000
    assert arguments_from_text(too_deep) == too_deep
