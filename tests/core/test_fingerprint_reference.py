"""``normalise`` gives what its first, plain form gave, for every text.

``normalise`` skips a rule when the text lacks a literal every match of it holds, and its
patterns are written to start with a character; ``reference`` is the form the module's list
was first written in (each pattern applied in turn, as the list reads), kept in
``bench/fingerprint.py``, which times the two: compared on generated texts made of the rules'
own pieces, on every string of the evaluation corpus and of the recorded fixtures, on the
benchmark's texts, and on scripted texts that take each gate both ways.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bench.fingerprint import bash_text, csv_text, log_text, python_text
from bench.fingerprint import reference_normalise as reference
from hypothesis import example, given, settings
from hypothesis import strategies as st

from repeat_guard.fingerprint import normalise

# The rules' pieces, and what stands next to them: digits (also other scripts' digits, which
# \d matches), units, paths, error locations, process ids, hex ids, every character that
# matches a letter of "line" under re.IGNORECASE, word characters and not.
_PIECES = st.sampled_from(
    [
        *"0123456789",
        "٣",
        "０",
        "12",
        "0.003",
        ".5",
        *("ns", "us", "µs", "μs", "ms", "s", "nsec", "usec", "msec", "sec", "secs"),
        *("second", "seconds", "min", "mins", "minute", "minutes", "h", "hr", "hrs"),
        *("hour", "hours", "m", "1m30s", "0m0.003s", "1h2m", "10m", "v1.2s", "x2s"),
        *(
            f"{number}{space}{unit}"
            for number in ("7", "0.25")
            for space in ("", " ")
            for unit in ("ns", "µs", "μs", "ms", "s", "usec", "min", "h", "hrs", "m")
        ),
        *("line", "LINE", "Line", "lİne", "lıne", "LİNE", "lina", "line 12", "line 4:"),
        'File "x", line 3',
        "File 'app.py', LINE 7, in f",
        "./build.sh: line 12: ",
        '", ',
        "', ",
        "sh:12:",
        ": 4:",
        "a.py:1:2",
        "x.c:7",
        ".Z9:3",
        "Background PIDs: 3841, 3842",
        "Process Group PGID: 3839",
        "(PID: 3841)",
        "pid: 12",
        "bg_0a1b2c3d",
        "<shellId: 4 completed with exit code 1>",
        "deadbeef",
        "3fa0b1c2",
        "DEADBEEF12",
        "12345678",
        "abcdefab",
        "abc1234567",
        "0b5e2f3c-6a1d-4b8e-9c2f-1234567890ab",
        "2026-01-02T03:04:05Z",
        "2026-12-06 01:02:03.456+01:00",
        "1999-12-31 23:59",
        "/tmp/",
        "/tmp/q",
        "/private/tmp/x",
        "/var/folders/z/y",
        "/private/var/folders/a",
        "x/tmp/y",
        "//tmp/",
        "/tmpx",
        "\x1b[1;31m",
        "\x1b]2;t\x07",
        "\x1b]8;;u\x1b\\",
        "\x1b",
        "\x1bM",
        *("é", "_", "-", "+", "'", '"', "`", ",", ":", ".", "/", " ", "T", "Z", "a", "F"),
        *("\t", "\r", "\n", "\r\n", " \n", "  "),
    ]
)
_TEXTS = st.one_of(
    st.text(),
    st.lists(_PIECES | st.text(max_size=3), max_size=40).map("".join),
    st.lists(_PIECES, max_size=60).map("".join),
)


@settings(max_examples=3000, deadline=None)
@given(_TEXTS)
@example('File "x", lİne 3, in y')
@example("./run.sh: lıne 12: no such file")
@example("took 0m0.003s, 12 ms, 2 hours")
def test_normalise_is_the_reference(text: str) -> None:
    assert normalise(text) == reference(text)


# Scripted: each rule's gate both open and shut, whatever Hypothesis draws.
_SCRIPTED = [
    "",
    "plain words and no digits",
    "\x1b[1;31mred\x1b[0m",
    "at 2026-12-06T01:02:03Z, 2026-12-06 01:02",
    "2026-12-06",
    "id 0b5e2f3c-6a1d-4b8e-9c2f-1234567890ab done",
    "commit abc1234567 and 12345678 and abcdefab and 3fa0b1c2",
    "wrote /tmp/x/y and /private/var/folders/q/r 'x/tmp/z'",
    "took 0.003s and 1m30s and 5 ms, 10m left",
    "12µs, 3 µs, 4 nsec, 2 hrs, 1 hour",
    'File "a.py", line 3, in f\n./b.sh: LINE 4: oops\nlİne 5: and line 100 of 400',
    "a.py:1:2 x.c:7 sh:12: : 4:",
    "trailing \nspace\t\nand crlf\r\nend  ",
    "ends with a tab\t",
    "ends with a carriage return\r",
    "LINE 0LINE 0",
]


def test_only_l_and_capital_l_match_l_in_any_case() -> None:
    # normalise's _LINE starts with [lL] where the first form had IGNORECASE's l.
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert re.findall("l", every, re.IGNORECASE) == ["L", "l"]
    assert len(re.findall("i", every, re.IGNORECASE)) == 4  # i, I, İ, ı: _PIECES has each


@pytest.mark.parametrize("text", _SCRIPTED)
def test_normalise_is_the_reference_on_scripted_texts(text: str) -> None:
    assert normalise(text) == reference(text)


_ROOT = Path(__file__).resolve().parents[1]
_CORPORA = [
    _ROOT / "data" / "eval",
    _ROOT / "adapters" / "hooks" / "fixtures",
    _ROOT / "adapters" / "transcripts" / "fixtures",
    _ROOT / "adapters" / "cli" / "fixtures",
]


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _texts(path: Path) -> Iterator[str]:
    """The file's text, and every string of every JSON value on its lines or in it whole."""
    text = path.read_bytes().decode("utf-8", "replace")
    yield text
    for chunk in (text, *text.splitlines()):
        try:
            yield from _strings(json.loads(chunk))
        except ValueError:
            continue


def _files() -> list[Path]:
    return sorted(path for corpus in _CORPORA for path in corpus.rglob("*") if path.is_file())


def test_the_corpora_are_there() -> None:
    files = _files()
    assert len(files) > 100
    assert any(path.suffix == ".jsonl" for path in files)


@pytest.mark.parametrize("path", _files(), ids=lambda path: path.name)
def test_normalise_is_the_reference_on_every_recorded_text(path: Path) -> None:
    for text in _texts(path):
        assert normalise(text) == reference(text)


@pytest.mark.parametrize("text", [csv_text, python_text, log_text, bash_text])
def test_normalise_is_the_reference_on_the_benchmark_texts(text: Callable[[], str]) -> None:
    assert normalise(text()) == reference(text())
