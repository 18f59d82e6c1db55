"""The progress bar: drawn only on a terminal, only for large inputs, throttled by a clock,
fitted to the terminal's width, and cleared for any text written while it is shown."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

from repeat_guard_cli import _progress, main
from repeat_guard_cli._progress import (
    LARGE_INPUT_BYTES,
    FilesProgress,
    ProgressBar,
    TextAboveBar,
    fit_line,
    input_size,
    terminal_columns,
    track_progress,
)
from repeat_guard_cli._streams import CurrentBar

from .terminal import Terminal, screen

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every bar here is drawn 200 columns wide, whatever terminal runs the tests."""
    monkeypatch.setenv("COLUMNS", "200")


def ticking(*times: float) -> Iterator[float]:
    yield from times


def test_a_terminal_gets_a_throttled_bar_that_is_erased() -> None:
    stream = Terminal()
    clock = ticking(0.0, 0.05, 0.2, 0.25)
    lines = [b"x" * (LARGE_INPUT_BYTES // 4)] * 4
    seen = list(track_progress(lines, stream, "big.jsonl", LARGE_INPUT_BYTES, clock.__next__))
    assert seen == lines
    draws = stream.getvalue().split("\r")[1:]
    # Drawn at t=0 and t=0.2; t=0.05 and t=0.25 fall inside the redraw interval.
    assert draws[0].startswith("big.jsonl [########")
    assert " 25%  2.1/8.4 MB" in draws[0]
    assert " 75%  6.3/8.4 MB" in draws[1]
    assert draws[2:] == ["\x1b[K"]


@pytest.mark.parametrize(
    ("size", "terminal"),
    [(None, True), (LARGE_INPUT_BYTES - 1, True), (LARGE_INPUT_BYTES, False)],
)
def test_no_bar_for_small_or_unsized_inputs_or_a_redirected_stderr(
    size: int | None, terminal: bool
) -> None:
    stream = Terminal() if terminal else io.StringIO()
    assert list(track_progress([b"a\n", b"b\n"], stream, "f", size)) == [b"a\n", b"b\n"]
    assert stream.getvalue() == ""


def test_input_size_is_known_for_regular_files_only(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"12345")
    with path.open("rb") as stream:
        assert input_size(stream) == 5
    assert input_size(io.BytesIO(b"12345")) is None
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as pipe, os.fdopen(write_end, "wb"):
        assert input_size(pipe) is None


def test_replay_draws_the_bar_on_a_terminal_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(_progress, "LARGE_INPUT_BYTES", 1)
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["replay", str(FIXTURES / "loop.jsonl")]) == 0
    assert "Grep × 5 (detailed)" in capsys.readouterr().out
    bar = terminal.getvalue()
    assert bar.startswith(f"\r{FIXTURES / 'loop.jsonl'} [")
    assert bar.endswith("\r\x1b[K")


def test_replay_writes_diagnostics_above_its_bar(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = (FIXTURES / "loop.jsonl").read_bytes().splitlines(True)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join([*lines[:2], b"{oops\n", *lines[2:]]))
    terminal = Terminal()
    monkeypatch.setattr(_progress, "LARGE_INPUT_BYTES", 1)
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["replay", str(broken)]) == 3
    assert "Grep × 5 (detailed)" in capsys.readouterr().out
    written = terminal.getvalue()
    shown = screen(written)
    # The diagnostic starts its own line, not glued to the bar's figures; the bar is drawn
    # again below it, and erased when the file is done.
    assert len(shown) == 2
    assert shown[0].startswith(f"{broken}:3: ")
    assert shown[1] == ""
    assert re.search(r":3: [^\n]*\n\r" + re.escape(str(broken)) + r" \[", written)


def test_replay_json_lines_on_the_bars_terminal_start_their_own_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tty = Terminal()  # stdout and stderr on one terminal
    monkeypatch.setattr(_progress, "LARGE_INPUT_BYTES", 1)
    monkeypatch.setattr("sys.stdout", tty)
    monkeypatch.setattr("sys.stderr", tty)
    assert main(["replay", "--format", "json", str(FIXTURES / "loop.jsonl")]) == 0
    *lines, last = screen(tty.getvalue())
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds == ["reminder", "reminder", "summary"]
    assert last == ""
    assert f"\r{FIXTURES / 'loop.jsonl'} [" in tty.getvalue()


def test_the_current_bar_is_the_one_drawn_and_none_after() -> None:
    current = CurrentBar()
    current.clear()  # no bar: nothing to do
    current.show()
    stream = Terminal()
    seen: list[object] = []
    for _ in track_progress(
        [b"x" * LARGE_INPUT_BYTES], stream, "f", LARGE_INPUT_BYTES, current=current
    ):
        seen.append(current.bar)
        current.clear()
        assert screen(stream.getvalue()) == [""]
        current.show()
        assert screen(stream.getvalue())[0].startswith("f [")
    assert isinstance(seen[0], ProgressBar)
    assert current.bar is None
    finished = ProgressBar(stream, "f", 10)
    finished.show()  # never drawn: nothing to show again
    assert screen(stream.getvalue()) == [""]


def test_a_position_moves_the_bar_instead_of_the_lines_lengths() -> None:
    stream = Terminal()
    read = iter([LARGE_INPUT_BYTES // 8, LARGE_INPUT_BYTES // 2])
    seen = list(
        track_progress(
            [b"x" * LARGE_INPUT_BYTES] * 2,
            stream,
            "big.jsonl.gz",
            LARGE_INPUT_BYTES,
            ticking(0.0, 0.5).__next__,
            read.__next__,
        )
    )
    assert len(seen) == 2
    draws = stream.getvalue().split("\r")[1:]
    assert " 12%  1.0/8.4 MB" in draws[0]
    assert " 50%  4.2/8.4 MB" in draws[1]


def test_replay_of_a_compressed_file_draws_the_bar_by_the_file_read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    packed = tmp_path / "loop.jsonl.gz"
    packed.write_bytes(gzip.compress((FIXTURES / "loop.jsonl").read_bytes()))
    terminal = Terminal()
    monkeypatch.setattr(_progress, "LARGE_INPUT_BYTES", 1)
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["replay", str(packed)]) == 0
    assert "Grep × 5 (detailed)" in capsys.readouterr().out
    bar = terminal.getvalue()
    # The whole (small) file is read with the first line: the bar is full, not past it.
    assert bar.startswith(f"\r{packed} [{'#' * 30}] 100%")
    assert bar.endswith("\r\x1b[K")


def test_the_files_bar_shows_files_bytes_rate_and_time_left() -> None:
    stream = Terminal()
    clock = ticking(10.0, 12.0, 12.05, 14.0)
    bar = FilesProgress(stream, "audit", 4, 80_000_000, clock.__next__)
    bar.advance(1, 20_000_000)  # t=12: drawn, 10 MB/s, 6 s left
    bar.advance(1, 20_000_000)  # t=12.05: inside the redraw interval
    bar.advance(2, 40_000_000)  # t=14: done
    bar.finish()
    draws = stream.getvalue().split("\r")[1:]
    assert draws[0] == (
        "audit [########......................]  25%  1/4 files  0:00:06 left  20.0/80.0 MB  "
        "10.0 MB/s"
    )
    assert draws[1].endswith("100%  4/4 files  0:00:00 left  80.0/80.0 MB  20.0 MB/s")
    assert draws[2] == "\x1b[K"


def test_the_files_bar_copes_with_no_bytes_and_no_time() -> None:
    stream = Terminal()
    clock = ticking(5.0, 5.0)
    FilesProgress(stream, "audit", 2, 0, clock.__next__).advance(1, 0)
    assert stream.getvalue().endswith("100%  1/2 files  --:-- left  0.0/0.0 MB  0.0 MB/s")


# A million files, half done: the widest figures an audit shows.
MILLION = ("500,000/1,000,000 files", "0:12:34 left", "6,172.8/12,345.6 MB", "123.4 MB/s")


@pytest.mark.parametrize(
    ("columns", "line"),
    [
        (
            120,
            "audit [###############...............]  50%  500,000/1,000,000 files  0:12:34 left"
            "  6,172.8/12,345.6 MB  123.4 MB/s",
        ),
        # The bar narrows first...
        (
            100,
            "audit [#######.......]  50%  500,000/1,000,000 files  0:12:34 left"
            "  6,172.8/12,345.6 MB  123.4 MB/s",
        ),
        # ...then the rate goes, then the megabytes...
        (80, "audit [##############.............]  50%  500,000/1,000,000 files  0:12:34 left"),
        # ...then the time left, then the files.
        (50, "audit [######.....]  50%  500,000/1,000,000 files"),
        (30, "audit [########........]  50%"),
        (20, "50%"),
        (1, ""),
    ],
)
def test_a_line_fits_the_terminal_leaving_out_the_least_useful_first(
    columns: int, line: str
) -> None:
    assert fit_line("audit", 0.5, MILLION, columns) == line
    assert len(line) <= columns - 1


def test_a_long_label_keeps_its_end_when_nothing_else_is_left_to_give() -> None:
    label = "/home/dev/.claude/projects/-home-dev-p/0192f3a4-5b6c-7d8e-9f00-112233445566.jsonl"
    line = fit_line(label, 0.25, ["1.0/4.0 MB"], 60)
    assert line == "…92f3a4-5b6c-7d8e-9f00-112233445566.jsonl [##........]  25%"
    assert len(line) == 59


@pytest.mark.parametrize("columns", range(1, 140, 7))
def test_no_bar_is_ever_wider_than_the_terminal(
    columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    files = Terminal()
    bar = FilesProgress(files, "audit", 1_000_000, 12_345_678_901, ticking(0.0, 100.0).__next__)
    bar.advance(500_000, 6_172_839_450)
    replay = Terminal()
    long = "/home/dev/.claude/projects/-home-dev-p/0192f3a4-5b6c-7d8e-9f00-112233445566.jsonl"
    ProgressBar(replay, long, 12_345_678, ticking(0.0).__next__).advance(1_000_000)
    for stream in (files, replay):
        draw = stream.getvalue()
        assert draw.startswith("\r")
        assert len(draw) - 1 <= columns - 1


def test_the_width_is_the_terminals_own_unless_columns_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    leader, follower = os.openpty()
    with os.fdopen(leader, "w") as _, os.fdopen(follower, "w") as tty:
        termios.tcsetwinsize(follower, (24, 57))
        assert terminal_columns(tty) == 200  # $COLUMNS first, as shutil takes it
        monkeypatch.delenv("COLUMNS")
        assert terminal_columns(tty) == 57
        # A terminal that does not know its size, or a stream that is none: shutil's answer.
        # (Taking shutil's own arguments: pytest asks it too, for the width of its report.)
        answer = os.terminal_size((66, 20))
        monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=None: answer)
        termios.tcsetwinsize(follower, (0, 0))
        assert terminal_columns(tty) == 66
        assert terminal_columns(Terminal()) == 66


def test_text_written_while_the_bar_is_shown_goes_above_it() -> None:
    stream = Terminal()
    bar = FilesProgress(stream, "audit", 4, 400, ticking(0.0, 1.0, 1.5, 2.0, 2.5).__next__)
    above = TextAboveBar(stream, bar)
    above.write("before any bar\n")  # t=-: nothing to clear, nothing drawn yet to redraw
    bar.advance(1, 100)  # t=1: drawn
    above.write("f.jsonl:3: ")  # cleared: the text starts the line
    above.write("invalid JSON")  # still cleared: nothing more to erase
    assert screen(stream.getvalue())[-1] == "f.jsonl:3: invalid JSON"
    above.write("\n")  # t=1.5: the line is complete, the bar comes back below it
    bar.advance(3, 300)  # t=2: drawn
    bar.finish()
    above.write("after\n")  # a finished bar stays erased
    assert screen(stream.getvalue()) == ["before any bar", "f.jsonl:3: invalid JSON", "after", ""]
    draws = [part for part in stream.getvalue().split("\r") if part.startswith("audit [")]
    assert [re.findall(r"\S+ files", draw) for draw in draws] == [
        ["1/4 files"],
        ["1/4 files"],
        ["4/4 files"],
    ]
    assert above.write("x") == 1
