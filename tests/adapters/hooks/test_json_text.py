"""``splice_json``: a changed value written into the text it was read from, nothing else moved."""

from __future__ import annotations

import json

import pytest

from repeat_guard_hooks.installer import splice_json


def test_an_absent_or_blank_file_gets_the_value_with_two_spaces() -> None:
    assert splice_json(None, {"a": [1]}) == '{\n  "a": [\n    1\n  ]\n}\n'
    assert splice_json(" \r\n", {}) == "{}\n"
    assert splice_json("\ufeff\n", {"a": "é"}) == '{\n  "a": "é"\n}\n'


def test_an_unchanged_value_keeps_its_text() -> None:
    text = '\ufeff {"a" :1.50,"b":[1E5, "\\u00e9\\/"]}  \n'
    assert splice_json(text, json.loads(text[1:])) == text


@pytest.mark.parametrize(
    ("text", "value", "spliced"),
    [
        # A scalar changed in place; another type written afresh, in the file's layout.
        ('{"a": 1.50, "b": "x"}', {"a": 1.5, "b": "y"}, '{"a": 1.50, "b": "y"}'),
        (
            '{\n\t"a": 1,\n\t"b": 2\n}',
            {"a": 1, "b": {"c": [3]}},
            '{\n\t"a": 1,\n\t"b": {\n\t\t"c": [\n\t\t\t3\n\t\t]\n\t}\n}',
        ),
        ("[1, 2]", [1.0, 2], "[1.0, 2]"),  # 1.0 is not 1
        ("[true]", [1], "[1]"),  # nor is true
        # Array elements: put where they belong, removed with their separator.
        ("[1, 2, 3]", [1, 9, 2, 3], "[1, 9, 2, 3]"),
        ("[\n  1,\n  2\n]", [0, 1, 2], "[\n  0,\n  1,\n  2\n]"),
        ("[\n  1,\n  2,\n  3\n]", [3], "[\n  3\n]"),
        ("[\n  1,\n  2,\n  3\n]", [1], "[\n  1\n]"),
        ("[1,2,3,4]", [2, 4], "[2,4]"),
        ('[{"a": 1}, 7]', [{"a": 2}, 8, 9], '[{"a": 2}, 8, 9]'),  # paired, then added
        ("[1, 2, 3]", [1, 5], "[1, 5]"),  # replaced by fewer
        ("[1, 2]", [7, 8], "[7, 8]"),  # nothing stays: written afresh
        ("[\n  1\n]", [], "[]"),
        ("[1]", [1, 2], "[1, 2]"),  # one element on one line: the file's comma
        ('{"a":[1]}', {"a": [1, 2]}, '{"a":[1,2]}'),
        # Object members: kept in place, the new ones at the end.
        (
            '{\r\n  "a": 1,\r\n  "b": 2\r\n}\r\n',
            {"b": 2, "c": [1]},
            '{\r\n  "b": 2,\r\n  "c": [\r\n    1\r\n  ]\r\n}\r\n',
        ),
        ('{"a": 1, "b": 2}', {"a": 1}, '{"a": 1}'),
        ('{"a": 1}', {"z": 1}, '{"z": 1}'),  # nothing stays: written afresh, on its line
        ('{"x": {"a": 1}}', {"x": {}}, '{"x": {}}'),
        ('{"x": {}}', {"x": {"a": [1]}}, '{"x": {"a": [1]}}'),  # one line stays one line
        ('{"k" : 1}', {"k": 1, "l": 2}, '{"k" : 1, "l" : 2}'),
        ('{"k"\n: 1}', {"k": 1, "l": 2}, '{"k"\n: 1, "l": 2}'),  # an odd colon: the usual one
        ("{}", {"a": {}}, '{\n  "a": {}\n}'),
    ],
)
def test_only_what_changed_is_written(text: str, value: object, spliced: str) -> None:
    assert splice_json(text, value) == spliced
    assert json.loads(spliced) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [("{", "Expecting"), ('{"a": 1} x', "text follows it at character 9"), ("", None)],
)
def test_text_that_is_not_one_json_value_is_an_error(text: str, message: str | None) -> None:
    if message is None:
        assert splice_json(text, 1) == "1\n"
        return
    with pytest.raises(ValueError, match=message):
        splice_json(text, {})


def test_a_value_that_json_cannot_write_is_an_error() -> None:
    with pytest.raises(ValueError, match="Out of range float"):
        splice_json("[1]", [1, float("nan")])
