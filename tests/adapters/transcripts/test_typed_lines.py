"""Typed decoding (``typed_lines``): a reader declares what it reads of a line, and reads the
same items and diagnostics as when each line is decoded whole.

The Claude Code reader decodes with msgspec ``Struct`` types; a line they refuse is decoded
whole and converted (``_convert``). Forcing every line down that second path gives what the
reader read before it declared its types, so the two must agree on any transcript.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from repeat_guard import GuardConfig, ToolCallFinished
from repeat_guard_transcripts import (
    MAX_LINE_BYTES,
    READERS,
    Diagnostic,
    Item,
    LineFault,
    Located,
    ResultsOptional,
    read_items,
)
from repeat_guard_transcripts import _claude_code as claude_code
from repeat_guard_transcripts._lines import _may_hold_a_long_integer, typed_lines

from ._support import diagnostics, run_reader, summary
from .fuzzing import damaged, fuzz_settings, sample_window

EXAMPLES = int(os.environ.get("REPEAT_GUARD_FUZZ", "3000"))


class _Point(msgspec.Struct):
    x: int = 0


def _point(value: object) -> _Point | str:
    if not isinstance(value, dict):
        return "expected a JSON object"
    x = value.get("x")
    return _Point(x if isinstance(x, int) else 0)


def test_typed_lines_yield_what_json_lines_yields_for_every_kind_of_line() -> None:
    lines = [
        b'{"x": 1, "skipped": [1, {"a": "\xc3\xa9"}]}\n',  # declared and skipped fields
        b"   \n",  # blank: nothing
        LineFault("gone"),
        b" " * (MAX_LINE_BYTES + 1),
        b"[\n",  # not JSON
        b'{"x": "a"}\n',  # another type than declared: decoded whole, then converted
        b'{"x": 2, "s": "\\ud800"}\n',  # a lone surrogate: msgspec refuses, the standard
        b"[1]\n",  # library reads it; not an object: the converter's message
        b'{"x": 3, "s": "\xff"}\n',  # not UTF-8 in a field msgspec would skip unchecked
    ]
    got = list(typed_lines(lines, "f", msgspec.json.Decoder(_Point).decode, _point))
    assert got[0] == (1, _Point(1))
    assert got[1] == Diagnostic("f", 3, "gone")
    assert isinstance(got[2], Diagnostic)
    assert got[2].message.startswith(f"line of {MAX_LINE_BYTES + 1} bytes")
    assert isinstance(got[3], Diagnostic)
    assert got[3].message.startswith("invalid JSON")
    assert got[4:7] == [
        (6, _Point(0)),
        (7, _Point(2)),
        Diagnostic("f", 8, "expected a JSON object"),
    ]
    assert got[7] == Diagnostic("f", 9, "not UTF-8 (invalid start byte at byte 15)")
    assert len(got) == 8


def test_a_line_nested_past_msgspecs_depth_is_still_read() -> None:
    deep = b"[" * 1010 + b"]" * 1010  # within the standard library's depth, past msgspec's
    line = b'{"x": 5, "deep": ' + deep + b"}\n"
    got = list(typed_lines([line], "f", msgspec.json.Decoder(_Point).decode, _point))
    assert got == [(1, _Point(5))]


@pytest.mark.parametrize("limit", [4300, 0], ids=["limited", "unlimited"])
def test_an_integer_longer_than_the_standard_library_converts_is_told_as_it_tells_it(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # msgspec skips an integer of any length in a field it does not read; the standard
    # library refuses one of more than sys.get_int_max_str_digits() digits (0: no limit).
    monkeypatch.setattr(sys, "get_int_max_str_digits", lambda: limit)
    lines = [
        b'{"x": 1, "s": [' + b"7" * 4301 + b"]}\n",  # one digit too many (when limited)
        b'{"x": 2, "s": ' + b"7" * 4300 + b"}\n",  # as many as converted
        b'{"x": 3, "s": "' + b"7" * 9000 + b'"}\n',  # digits in a string are text
        b'{"x": 4, "s": ' + b"7" * 9000 + b".5}\n",  # a fraction is a float: no limit
    ]
    decode = msgspec.json.Decoder(_Point).decode
    got = list(typed_lines(lines, "f", decode, _point))
    first = got[0]
    if limit:
        assert isinstance(first, Diagnostic)
        assert first.message == "invalid JSON: a number has more than 4300 digits"
    else:
        assert first == (1, _Point(1))
    assert got[1:] == [(2, _Point(2)), (3, _Point(3)), (4, _Point(4))]


@given(
    st.integers(min_value=3, max_value=40),
    st.lists(st.tuples(st.booleans(), st.integers(min_value=1, max_value=90)), max_size=12),
)
def test_a_line_with_a_run_of_too_many_digits_is_always_decoded_whole(
    limit: int, runs: list[tuple[bool, int]]
) -> None:
    raw = b"".join((b"5" if digits else b"x") * size for digits, size in runs)
    if len(raw) > limit and re.search(rb"[0-9]{%d}" % (limit + 1), raw):
        assert _may_hold_a_long_integer(raw, limit)


def test_a_line_without_digits_where_sampled_is_decoded_as_typed() -> None:
    assert not _may_hold_a_long_integer(b"5" * 11 + b"x" * 30, 30)
    assert _may_hold_a_long_integer(b"x" * 5 + b"5" * 31 + b"x" * 5, 30)


def _whole(raw: bytes) -> object:
    raise msgspec.DecodeError("every line decoded whole")


def _read(lines: list[bytes], whole: bool, results: bool = True) -> list[Item]:
    reader = READERS["claude-code"]
    if not whole:
        return list(read_items(reader, lines, "f", results))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(claude_code, "_decode_record", _whole)
        return list(read_items(reader, lines, "f", results))


@fuzz_settings(EXAMPLES)
@given(st.data())
def test_the_typed_claude_code_reader_reads_as_the_whole_line_reader(data: st.DataObject) -> None:
    noise = data.draw(st.sampled_from([0, 1, 3, 8]))
    lines = data.draw(sample_window("claude-code", noise))
    if noise:
        lines = data.draw(damaged(lines))
    assert _read(lines, whole=False) == _read(lines, whole=True)


def _line(record: dict[str, object]) -> bytes:
    return msgspec.json.encode({"sessionId": "s", **record}) + b"\n"


def _call(ident: str = "t1", name: str = "Bash") -> bytes:
    use = {"type": "tool_use", "id": ident, "name": name, "input": {"command": "ls"}}
    return _line({"type": "assistant", "message": {"content": [use]}})


def _result(content: object, error: bool = False, **extra: object) -> bytes:
    block = {"type": "tool_result", "tool_use_id": "t1", "content": content, "is_error": error}
    return _line({"type": "user", "message": {"content": [block]}, **extra})


def _finished(items: Iterator[Item] | list[Item]) -> list[ToolCallFinished]:
    return [
        item.event
        for item in items
        if isinstance(item, Located) and isinstance(item.event, ToolCallFinished)
    ]


@pytest.mark.parametrize("whole", [False, True], ids=["typed", "whole"])
def test_without_results_a_call_has_none_and_a_refusal_is_still_told(whole: bool) -> None:
    refused = "The user doesn't want to proceed with this tool use"
    lines = [_call(), _result([{"type": "text", "text": refused}], error=True)]
    (kept,) = _finished(_read(lines, whole))
    (left,) = _finished(_read(lines, whole, results=False))
    assert kept.denied
    assert left.denied
    assert kept.result == [{"type": "text", "text": refused}]
    assert left.result is None
    assert left == ToolCallFinished("s", "Bash", {"command": "ls"}, True, None)


def test_a_refusal_said_only_in_the_records_own_result_is_told() -> None:
    lines = [_call(), _result("no", error=True, toolUseResult="User rejected tool use")]
    (call,) = _finished(_read(lines, whole=False, results=False))
    assert call.denied


def test_a_reader_that_cannot_leave_results_out_reads_them_all_the_same() -> None:
    assert isinstance(READERS["claude-code"], ResultsOptional)
    assert not isinstance(READERS["acp"], ResultsOptional)
    update = {"sessionUpdate": "tool_call", "toolCallId": "c", "status": "completed"}
    line = msgspec.json.encode(
        {"method": "session/update", "params": {"sessionId": "s", "update": update}}
    )
    items = list(read_items(READERS["acp"], [line + b"\n"], "f", results=False))
    assert items == list(READERS["acp"].read([line + b"\n"], "f"))


def test_a_line_msgspec_would_take_that_is_not_utf8_is_a_diagnostic_and_reading_goes_on() -> None:
    bad = _call().replace(b'{"sessionId"', b'{"uuid":"\xff","sessionId"')  # a field skipped
    outcomes = run_reader("claude-code", [bad, _call(), _result("out")], GuardConfig())
    assert diagnostics(outcomes) == [(1, "not UTF-8 (invalid start byte at byte 9)")]
    assert summary(outcomes).tally.calls == 1
