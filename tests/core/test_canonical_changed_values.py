"""The orjson path rewrites a container's values that orjson would write differently (a float
with an integral value is written as an integer): when several of one container's values need
it, every one is rewritten, not only the first. Written out, so the branch is covered by a
fixed case and not only when a property test happens to draw one."""

from __future__ import annotations

import pytest

from repeat_guard import canonical_arguments


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"a": 1.0, "b": 2.0}, '{"a":1,"b":2}'),
        ({"a": 1.0, "b": "x", "c": 3.0}, '{"a":1,"b":"x","c":3}'),
        ([1.0, 2.5, 3.0], "[1,2.5,3]"),
        ((1.0, 2.0), "[1,2]"),
        ({"a": [1.0, 2.0], "b": {"c": 2.0, "d": 4.0}}, '{"a":[1,2],"b":{"c":2,"d":4}}'),
    ],
)
def test_every_value_that_needs_rewriting_is_rewritten(value: object, text: str) -> None:
    assert canonical_arguments(value) == text
