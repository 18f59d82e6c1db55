"""The general encoder of ``canonical_arguments``, case by case, and the fast path's reach.

Plain JSON data is written by the C encoder; anything else (a set, a non-string key, NaN, an
object) sends the whole value through the general encoder, which must write the JSON parts of
it exactly as the fast path would. Each case here pins text that only the general path writes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

import pytest

import repeat_guard._canonical as canonical_module
from repeat_guard import canonical_arguments


def nested_sets(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = frozenset([value])
    return value


def test_null_true_and_false_inside_a_general_value() -> None:
    # A non-string key forces the general encoder for the whole mapping.
    assert canonical_arguments({1: None, 2: True, 3: False}) == '{"1":null,"2":true,"3":false}'
    assert canonical_arguments([None, True, False, {0}]) == "[null,true,false,<set [0]>]"


def test_infinities_keep_their_sign() -> None:
    assert canonical_arguments([math.inf, -math.inf]) == "[Infinity,-Infinity]"


def test_the_depth_limit_falls_exactly_after_fifty_nested_sets() -> None:
    assert canonical_arguments(nested_sets(50)) == "<set [" * 50 + "0" + "]>" * 50
    assert canonical_arguments(nested_sets(51)) == ("<set [" * 51 + "<nested too deep>" + "]>" * 51)


def test_a_non_string_key_counts_as_one_level_of_nesting() -> None:
    # The key's own text is one level down, its innermost member 49 or 50 levels below that.
    assert "<nested too deep>" not in canonical_arguments({nested_sets(49): 1})
    assert "<nested too deep>" in canonical_arguments({nested_sets(50): 1})


def test_sharing_is_not_a_cycle_in_the_general_encoder_either() -> None:
    shared = [1]
    assert canonical_arguments([shared, shared, {2}]) == "[[1],[1],<set [2]>]"
    assert canonical_arguments({1: shared, 2: shared}) == '{"1":[1],"2":[1]}'
    loop: list[object] = [1]
    loop.append(loop)
    assert canonical_arguments([loop, loop, {2}]) == "[[1,<cycle>],[1,<cycle>],<set [2]>]"


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("broken __repr__")


def test_keys_order_by_text_then_type_then_value() -> None:
    # 1 and "1" share the text "1": the int sorts before the str whatever their values say.
    assert canonical_arguments({1: "b", "1": "a"}) == '{"1":"b","1":"a"}'
    assert canonical_arguments({"1": "a", 1: "b"}) == '{"1":"b","1":"a"}'
    # Keys whose text and type tie are ordered by their values' text, never compared directly
    # (two dicts cannot be compared), and the text still sorts before the tie-break.
    first, second = _Unprintable(), _Unprintable()
    name = f"<{__name__}._Unprintable>"
    expected = f'{{"!":0,"{name}":{{"a":1}},"{name}":{{"b":2}}}}'
    assert canonical_arguments({first: {"a": 1}, second: {"b": 2}, "!": 0}) == expected
    assert canonical_arguments({second: {"b": 2}, "!": 0, first: {"a": 1}}) == expected


def test_plain_json_data_never_reaches_the_general_encoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(value: object, depth: int) -> str:
        raise AssertionError(f"general encoder used for {value!r}")

    monkeypatch.setattr(canonical_module, "_encode_general", refuse)
    plain: list[object] = [
        "s",
        1,
        True,
        None,
        1.5,
        2.0,
        [1, (2, 3)],
        {"b": [1.0, {"c": None}], "a": False},
    ]
    assert canonical_arguments(plain) == (
        '["s",1,true,null,1.5,2,[1,[2,3]],{"a":false,"b":[1,{"c":null}]}]'
    )
    with pytest.raises(AssertionError, match="general encoder used"):
        canonical_arguments({1: "non-string key"})
    with pytest.raises(AssertionError, match="general encoder used"):
        canonical_arguments([math.nan])


class _FrozenMapping(Mapping[object, object]):
    """A mapping that can sit in a set: the way to put a mapping many levels deep."""

    def __init__(self, *items: tuple[object, object]) -> None:
        self._items = dict(items)

    def __getitem__(self, key: object) -> object:
        return self._items[key]

    def __iter__(self) -> Iterator[object]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return id(self)


def _tied_keys_at(depth: int, *values: int) -> str:
    """The text of a mapping ``depth`` nested sets down whose keys all share one text."""
    keys = [_Unprintable() for _ in values]
    inner: object = _FrozenMapping(*zip(keys, values, strict=True))
    for _ in range(depth):
        inner = frozenset([inner])
    return canonical_arguments(inner)


def test_the_tie_break_between_keys_sees_the_same_depth_limit() -> None:
    # The values of tied keys are compared one level below their mapping, like its keys. Just
    # above the limit, they still order the keys whatever the insertion order.
    assert _tied_keys_at(49, 2, 1) == _tied_keys_at(49, 1, 2)
    assert _tied_keys_at(49, 2, 1).index(":1") < _tied_keys_at(49, 2, 1).index(":2")
    # At the limit the keys' texts and the values compared are all the fixed marker, so the
    # tie stands and the mapping keeps its own order: how deep the cut is stays visible.
    tied = '{"<nested too deep>":2,"<nested too deep>":1}'
    assert _tied_keys_at(50, 2, 1) == "<set [" * 50 + tied + "]>" * 50
