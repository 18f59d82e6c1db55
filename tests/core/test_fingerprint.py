"""The result fingerprint: what it removes, what it keeps, and its properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repeat_guard import argument_key, canonical_arguments
from repeat_guard.fingerprint import MAX_DEPTH, fingerprint, normalise


def key(result: object) -> str:
    return argument_key(canonical_arguments(fingerprint(result)))


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("\x1b[31mFAILED\x1b[0m test_x", "FAILED test_x"),
        ("\x1b]0;title\x07done", "done"),
        ("\x1bMup", "up"),
        ("at 2026-12-06T01:02:03.456Z: boom", "at <time>: boom"),
        ("at 2026-12-06 01:02 boom", "at <time> boom"),
        ("at 2026-12-06T01:02:03+01:00 boom", "at <time> boom"),
        ("request 0b5e2f3c-6a1d-4b8e-9c2f-1234567890ab failed", "request <uuid> failed"),
        ("container 3f9a1c2b7e4d failed", "container <hex> failed"),
        ("commit deadbeef12 and word deadbeef", "commit <hex> and word deadbeef"),
        ("wrote /tmp/tmpab_3x/out.log: ok", "wrote <tmp> ok"),
        ("see '/var/folders/xy/T/build' now", "see '<tmp>' now"),
        ("/private/var/folders/a/b missing", "<tmp> missing"),
        (
            "./build.sh: line 12: javac: command not found",
            "./build.sh: line <n>: javac: command not found",
        ),
        ('File "app.py", Line 7, in main', 'File "app.py", Line <n>, in main'),
        ("src/app.py:12:3: E501 line too long", "src/app.py:<n>:<n>: E501 line too long"),
        ("main.c:40: error: expected ';'", "main.c:<n>: error: expected ';'"),
        ("sh: 12: frobnicate: not found", "sh: <n>: frobnicate: not found"),
        ("a:1:2:3", "a:<n>:<n>:3"),
        ("trailing   \nspaces\t\r\nkept inside  here", "trailing\nspaces\nkept inside  here"),
        ("build 60% done, 12 of 40 tests", "build 60% done, 12 of 40 tests"),
        ("Ran 1 test in 0.003s\n\nOK", "Ran 1 test in <n>s\n\nOK"),
        ("=== 2 passed in 0.05s ===", "=== 2 passed in <n>s ==="),
        ("took 1.2 s, then 12 ms", "took <n> s, then <n> ms"),
        ("real\t0m0.003s\nuser\t1h2m", "real\t<n>m<n>s\nuser\t<n>h<n>m"),
        ("Wall time: 5.0011 seconds", "Wall time: <n> seconds"),
        ("215 nsec per loop, 3 µs, 2 hours, 1min", "<n> nsec per loop, <n> µs, <n> hours, <n>min"),
        ("v1.2s x2s 10m 3 sheep 3 secrets", "v1.2s x2s 10m 3 sheep 3 secrets"),
        ("Fetched 2460 kB in 1s (2365 kB/s)", "Fetched 2460 kB in <n>s (2365 kB/s)"),
        ("processed line 100 of 400", "processed line 100 of 400"),
        ("error at line 3, line 4 column 5", "error at line 3, line 4 column 5"),
        ("SyntaxError ('x.py', line 3)", "SyntaxError ('x.py', line <n>)"),
        ("", ""),
    ],
)
def test_what_normalise_rewrites_and_what_it_keeps(text: str, normalised: str) -> None:
    assert normalise(text) == normalised
    assert normalise(normalised) == normalised


def test_a_bash_error_naming_another_line_each_time_is_one_fingerprint() -> None:
    errors = [f"./gradlew: line {n}: javac: command not found\n" for n in (12, 40, 41)]
    assert len({key(error) for error in errors}) == 1
    assert key(errors[0]) != key("./gradlew: line 12: java: command not found\n")


def test_a_passing_run_that_only_took_another_time_is_one_fingerprint() -> None:
    # Claude Code's Bash, recorded: the same passing test run, under the shell's ``time``.
    runs = [
        f".\nRan 1 test in 0.05{n}s\n\nOK\n\nreal\t0m0.{n}11s\nuser\t0m0.098s\nsys\t0m0.0{n}4s"
        for n in (0, 1, 4)
    ]
    assert len({key(run) for run in runs}) == 1
    assert key(runs[0]) != key(runs[0].replace("OK", "FAILED (failures=1)"))
    assert key("Ran 1 test in 5ms") != key("Ran 1 test in 5s")  # the unit is kept


def test_a_counter_naming_a_line_keeps_its_progress() -> None:
    polls = [f"processed line {n} of 400" for n in (100, 200, 300)]
    assert len({key(text) for text in polls}) == 3
    assert len({key(f"reading line {n}") for n in (1, 2)}) == 2


def test_a_file_that_grows_with_each_identical_edit_is_not_normalised_away() -> None:
    # The same append, three times: each result shows one line more. That is content.
    grown = ["x = 1\n" * n for n in (1, 2, 3)]
    assert len({key(text) for text in grown}) == 3


def test_a_poll_whose_output_moves_on_keeps_its_progress() -> None:
    polls = ["build 10%", "build 60%", "build done"]
    assert len({key(text) for text in polls}) == 3


def test_strings_inside_lists_and_dicts_are_normalised_to_a_depth() -> None:
    result = {"stdout": "a.py:3: bad", "items": ["line 4: x", 5, None], 7: ("x  ",)}
    assert fingerprint(result) == {
        "stdout": "a.py:<n>: bad",
        "items": ["line <n>: x", 5, None],
        7: ["x"],
    }
    deep: object = "line 1:"
    for _ in range(MAX_DEPTH + 2):
        deep = [deep]
    walked = fingerprint(deep)
    for _ in range(MAX_DEPTH):
        assert isinstance(walked, list)
        walked = walked[0]
    assert walked == [["line 1:"]]  # past MAX_DEPTH, as it was
    assert fingerprint(b"line 1:") == b"line 1:"


_PIECES = st.sampled_from(
    [
        "line 12",
        "Line 3",
        "line 4:",
        '", line 5',
        "', Line 6",
        "0.003s",
        "1 ms",
        "0m0.5s",
        "2 hours",
        "s",
        "m",
        "a.py:1:2",
        "x.c:7",
        ": 4:",
        ":5:",
        "/tmp/q",
        "/var/folders/z/y",
        "2026-01-02T03:04:05Z",
        "1999-12-31 23:59",
        "0b5e2f3c-6a1d-4b8e-9c2f-1234567890ab",
        "abc1234567",
        "\x1b[1;31m",
        "\x1b]2;t\x07",
        "\x1b",
        "  ",
        "\t",
        "\r",
        "\n",
        ":",
        ".",
        "/",
        " ",
        "7",
        "word",
    ]
)
_TEXTS = st.one_of(st.text(), st.lists(_PIECES | st.text(max_size=3)).map("".join))


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_normalise_is_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once


@settings(max_examples=200, deadline=None)
@given(_TEXTS, _TEXTS)
def test_results_equal_after_normalising_have_equal_keys(first: str, second: str) -> None:
    if normalise(first) == normalise(second):
        assert key(first) == key(second)
    assert key(first) == key(normalise(first))


_WORDS = st.lists(st.text("ghijklmnopqrstuvwxyz", min_size=1, max_size=8), min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(_WORDS, st.data())
def test_a_changed_word_is_a_change(words: list[str], data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(words) - 1))
    other = data.draw(st.text("ghijklmnopqrstuvwxyz", min_size=1, max_size=8))
    changed = [*words[:index], other, *words[index + 1 :]]
    prefix = data.draw(_PIECES)
    before, after = f"{prefix} {' '.join(words)}", f"{prefix} {' '.join(changed)}"
    assert (key(before) == key(after)) == (words == changed)
