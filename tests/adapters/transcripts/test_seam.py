"""The seam itself: line reading, files, sniffing, discovery, open calls and the replay."""

from __future__ import annotations

import errno
import io
import os
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import repeat_guard_transcripts._files as files_module
from repeat_guard import GuardConfig, PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import (
    DONE_MARKS,
    MAX_LINE_BYTES,
    OPEN_CALLS,
    READERS,
    Diagnostic,
    Fired,
    Item,
    LineFault,
    Located,
    Location,
    Recorded,
    SessionSeen,
    Unfinished,
    Unlisted,
    bounded_lines,
    discover,
    json_lines,
    open_transcript,
    replay,
    sniff_format,
    sniff_head,
    walk,
    with_head,
)
from repeat_guard_transcripts._calls import OpenCall, OpenCalls
from repeat_guard_transcripts._lines import JsonValue, decode_json

from ._support import FIXTURES, summary

CLAUDE = FIXTURES / "claude-code" / "projects"


def test_bounded_lines_skips_a_long_line_without_holding_it() -> None:
    data = b"short\n" + b"x" * 100 + b"\nafter\nx" * 1 + b"y" * 10
    lines = list(bounded_lines(io.BufferedReader(io.BytesIO(data), 8), limit=16))
    assert lines[0] == b"short\n"
    assert isinstance(lines[1], LineFault)
    assert lines[1].message == "line of 101 bytes is longer than the limit of 16"
    assert lines[2:] == [b"after\n", b"xyyyyyyyyyy"]


def test_a_last_line_of_exactly_the_limit_is_a_line() -> None:
    assert list(bounded_lines(io.BytesIO(b"a" * 16), limit=16)) == [b"a" * 16]
    assert list(bounded_lines(io.BytesIO(b""))) == []


class _Failing(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def readinto(self, buffer: object) -> int:
        raise OSError(5, "Input/output error")


def test_a_read_error_is_a_fault_that_ends_the_lines() -> None:
    (fault,) = list(bounded_lines(io.BufferedReader(_Failing())))
    assert isinstance(fault, LineFault)
    assert fault == b""
    assert fault.message == "read failed: Input/output error"


def test_json_lines_diagnoses_and_skips_blank_lines() -> None:
    lines = [b"1\n", b"   \n", b"", LineFault("gone"), b" " * (MAX_LINE_BYTES + 1), b"[\n"]
    got = list(json_lines(lines, "f"))
    assert got[0] == (1, 1)
    assert got[1] == Diagnostic("f", 4, "gone")
    assert isinstance(got[2], Diagnostic)
    assert got[2].message.startswith(f"line of {MAX_LINE_BYTES + 1} bytes")
    assert isinstance(got[3], Diagnostic)
    assert got[3].message.startswith("invalid JSON")
    assert len(got) == 4


def test_decode_json_says_what_is_wrong_with_a_line() -> None:
    assert decode_json(b"\x00" * 8 + b"\n") == (
        "invalid JSON: Expecting value: line 1 column 1 (char 0)"
    )  # NUL bytes are UTF-8; the standard library alone would guess UTF-32
    assert decode_json('"\u00e9"\n'.encode("utf-16-le")) == (
        "not UTF-8 (invalid continuation byte at byte 2)"
    )  # the standard library alone read it as UTF-16
    big = b'{"n": ' + b"9" * 5000 + b"}"
    assert decode_json(big) == (
        "invalid JSON: a number has more than 4300 digits"
    )  # complete, if without a newline: not a truncated last line
    assert decode_json(b'{"n": 1') == (
        "truncated last line: Expecting ',' delimiter: line 1 column 8 (char 7)"
    )


def test_decode_json_reads_integers_past_64_bits_as_orjson_does() -> None:
    # As its docstring says: exact up to 2**64 - 1, the nearest float beyond (the standard
    # library would keep 2**64 exact). If orjson starts keeping them, the docstring is wrong.
    decoded = decode_json(b"[18446744073709551615, 18446744073709551616]\n")
    assert isinstance(decoded, JsonValue)
    assert decoded.value == [18446744073709551615, 1.8446744073709552e19]
    assert type(decoded.value[1]) is float


def test_open_transcript_refuses_what_is_not_a_file(tmp_path: Path) -> None:
    assert open_transcript(str(tmp_path)) == f"cannot read {tmp_path}: a directory"
    assert open_transcript("/dev/null") == "cannot read /dev/null: not a regular file"
    missing = tmp_path / "absent"
    assert open_transcript(str(missing)) == f"cannot read {missing}: No such file or directory"
    regular = tmp_path / "f"
    regular.write_bytes(b"x\n")
    opened = open_transcript(str(regular))
    assert not isinstance(opened, str)
    with opened:
        assert opened.read() == b"x\n"


def test_a_fifo_without_a_writer_is_refused_after_a_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_module, "FIFO_WAIT_SECONDS", 0.1)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert open_transcript(str(fifo)) == (
        f"cannot read {fifo}: no writer opened the FIFO within 0.1 s"
    )


def test_sniffing_never_opens_a_fifo(tmp_path: Path, fifo_never_opened: Path) -> None:
    fifo = fifo_never_opened
    assert sniff_format(str(fifo)) is None
    assert list(discover([str(fifo), str(tmp_path)])) == [(str(fifo), None)]
    refused = open_transcript(str(fifo), regular_only=True)
    assert refused == f"cannot read {fifo}: not a regular file"
    refused = open_transcript(str(tmp_path), regular_only=True)
    assert refused == f"cannot read {tmp_path}: a directory"
    with pytest.raises(AssertionError, match="opened"):  # the guard sees an opening
        open_transcript(str(fifo))


def _write_later(fifo: Path, data: bytes, pause: float) -> threading.Thread:
    def writer() -> None:
        with open(fifo, "wb") as stream:  # blocks until the reader opens the FIFO
            threading.Event().wait(pause)
            stream.write(data)

    thread = threading.Thread(target=writer)
    thread.start()
    return thread


def _read_fifo(fifo: Path) -> list[bytes]:
    opened = open_transcript(str(fifo))
    assert not isinstance(opened, str), opened
    with opened:
        head, whole = with_head(opened)
        lines = list(bounded_lines(whole))
    assert head == b"".join(lines)
    return lines


def test_a_fifo_whose_writer_comes_later_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # The writer opens the FIFO once the reader is waiting for it.
    timer = threading.Timer(0.2, lambda: _write_later(fifo, b"one\ntwo\n", 0).join())
    timer.start()
    assert _read_fifo(fifo) == [b"one\n", b"two\n"]
    timer.join()


def test_a_fifo_whose_writer_is_slow_to_write_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_module, "FIFO_WAIT_SECONDS", 0.05)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = _write_later(fifo, b"one\n", 0.3)  # connected, silent beyond the wait
    assert _read_fifo(fifo) == [b"one\n"]
    writer.join()


def test_a_byte_read_while_telling_whether_a_writer_came_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = _write_later(fifo, b"one\ntwo\n", 0)

    class TimedOut:
        def register(self, descriptor: int, events: int) -> None:
            pass

        def poll(self, timeout: int) -> list[tuple[int, int]]:
            writer.join()  # the writer came, wrote and left just as the wait ended
            return []

    monkeypatch.setattr("select.poll", TimedOut)
    assert _read_fifo(fifo) == [b"one\n", b"two\n"]


def test_with_head_gives_the_whole_stream_back() -> None:
    data = b"".join(b"line %d\n" % n for n in range(100_000))
    head, whole = with_head(io.BytesIO(data))
    assert isinstance(head, bytes)
    assert len(head) == 256 * 1024
    assert b"".join(bounded_lines(whole)) == data


def test_with_head_reports_a_read_error() -> None:
    head, _ = with_head(io.BufferedReader(_Failing()))
    assert head == "read failed: Input/output error"


def test_proc_self_mem_is_a_diagnostic_not_a_traceback() -> None:
    opened = open_transcript("/proc/self/mem")
    assert not isinstance(opened, str)
    with opened:
        head, whole = with_head(opened)
        assert head == "read failed: Input/output error"
        items = list(READERS["acp"].read(bounded_lines(whole), "/proc/self/mem"))
    assert items == [Diagnostic("/proc/self/mem", 1, "read failed: Input/output error")]


def test_sniffing_picks_the_format_or_none(tmp_path: Path) -> None:
    session = next(CLAUDE.glob("*/*.jsonl"))
    assert sniff_format(str(session)) == "claude-code"
    assert sniff_format(str(FIXTURES / "acp" / "denials.jsonl")) == "acp"
    unknown = tmp_path / "notes.txt"
    unknown.write_text("hello\n", encoding="utf-8")
    assert sniff_format(str(unknown)) is None
    assert sniff_format(str(tmp_path / "absent")) is None
    assert sniff_head(b"") is None
    assert sniff_head(b"[1]\n{bad\n") is None


def test_discover_walks_directories_in_order_and_keeps_named_files(tmp_path: Path) -> None:
    found = list(discover([str(CLAUDE), "-", str(tmp_path / "absent")]))
    names = [Path(path).name for path, _ in found[:-2]]
    assert names == [
        "3bcf06ff-d567-4b8e-a8ab-f80cab4dd62e.jsonl",
        "75ed4efb-ff36-4160-9d16-d209eefb574b.jsonl",
        "d40ac318-ccf9-4ebc-9129-faa2c1b3ec26.jsonl",
        "fe29ca76-f36a-4506-9a56-d8a0ac7a41ca.jsonl",
        "agent-a9db1cda3af2c2cce.jsonl",
    ]
    assert {fmt for _, fmt in found[:-2]} == {"claude-code"}
    assert found[-2:] == [("-", None), (str(tmp_path / "absent"), None)]


def test_a_folder_that_cannot_be_listed_is_yielded_and_the_walk_goes_on(
    tmp_path: Path, unlistable_folder: Path
) -> None:
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "b.txt").write_text("b\n", encoding="utf-8")
    (tmp_path / "z.txt").write_text("z\n", encoding="utf-8")
    refused = Unlisted(str(unlistable_folder), "Permission denied")
    # In the walk's order: the folder where its files would have been.
    assert list(walk([str(tmp_path)])) == [
        (str(tmp_path / "a.txt"), True),
        (str(tmp_path / "z.txt"), True),
        refused,
        (str(tmp_path / "m" / "b.txt"), True),
    ]
    assert list(walk([str(unlistable_folder), "-"])) == [refused, ("-", False)]
    assert list(discover([str(tmp_path)])) == [(str(unlistable_folder), None)]


def test_a_walk_goes_deeper_than_the_recursion_limit(tmp_path: Path, deep_folder: Path) -> None:
    inner = deep_folder / "t.jsonl"
    inner.write_bytes(b"{}\n")
    (deep_folder.parent / "z").symlink_to(deep_folder.parent)  # a loop: never followed
    assert list(walk([str(tmp_path / "deep")])) == [(str(inner), True)]


def test_an_entry_whose_kind_cannot_be_told_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As os.walk takes it: is_dir() failing (a stat refused where the folder does not say).
    class Untold:
        name = "odd"

        def is_dir(self) -> bool:
            raise PermissionError(errno.EACCES, "Permission denied")

    class Listing:
        def __enter__(self) -> list[Untold]:
            return [Untold()]

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(os, "scandir", lambda path: Listing())
    assert list(walk([str(tmp_path)])) == [(str(tmp_path / "odd"), True)]


def test_a_folder_gone_since_its_parent_was_listed_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "a.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "z.txt").write_text("z\n", encoding="utf-8")
    real_scandir = os.scandir

    def vanishing(path: str) -> Iterator[os.DirEntry[str]]:
        if Path(path) == tmp_path / "gone":
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", vanishing)
    assert list(walk([str(tmp_path)])) == [(str(tmp_path / "z.txt"), True)]


def test_discover_passes_by_source_files_and_notes_that_quote_a_transcript(
    tmp_path: Path,
) -> None:
    frame = (FIXTURES / "acp" / "denials.jsonl").read_bytes().splitlines(keepends=True)[0]
    (tmp_path / "agent.py").write_bytes(b'"""An ACP agent."""\nREPLY = ' + frame)
    (tmp_path / "README.md").write_bytes(b"# Traffic\n\n" + frame)
    (tmp_path / "agent.cpython-311.pyc").write_bytes(b"\xa7\r\r\n\x00" + frame)
    (tmp_path / "t.jsonl").write_bytes(frame)
    assert list(discover([str(tmp_path)])) == [(str(tmp_path / "t.jsonl"), "acp")]


def where(line: int, session: str = "s") -> Location:
    return Location("f", line, session)


def test_open_calls_are_bounded_and_remember_finished_ids() -> None:
    calls: OpenCalls[str] = OpenCalls()
    pushed = [
        item
        for n in range(OPEN_CALLS + 2)
        for item in calls.add(str(n), OpenCall(where(n), "a", "t", None))
    ]
    assert [u.where.line for u in pushed] == [0, 1]
    assert len(calls) == OPEN_CALLS
    assert calls.finish("0") is None
    assert calls.is_finished("0")
    assert list(calls.add("0", OpenCall(where(9), "a", "t", None))) == []  # finished: ignored
    for n in range(DONE_MARKS + 5):
        calls.finish(str(n))
    assert not calls.is_finished("0")
    assert list(calls.drop_agent("nobody")) == []


def test_replay_counts_per_session_and_passes_everything_through() -> None:
    config = GuardConfig(thresholds=(2,))
    grep = ToolCallFinished("a", "grep", {"p": 1})
    items: list[Item] = [
        SessionSeen(where(1, "quiet")),
        Located(where(2), grep),
        Diagnostic("f", 3, "bad", "error"),
        Located(where(4), grep),
        Diagnostic("f", 5, "hm", "note"),
        Unfinished(where(6), "sleep"),
        Recorded(where(7), "grep", 2, "gentle"),
        Located(where(8), PromptSubmitted("a")),
        Located(where(9), ToolCallFinished(None, "grep", {})),
    ]
    outcomes = list(replay(items, config, file="f"))
    assert len(outcomes) == 6
    result = summary(outcomes)
    assert [s.session for s in result.sessions] == ["quiet", "s"]
    quiet, busy = result.sessions
    assert (quiet.agents, quiet.tally.calls) == (0, 0)
    assert (busy.agents, busy.tally.calls, busy.tally.wasted, busy.unfinished) == (1, 2, 1, 1)
    assert (result.errors, result.notes, result.unfinished) == (1, 1, 1)
    assert result.tally.reminders == 1
    assert result.recorded == (Recorded(where(7), "grep", 2, "gentle"),)


def test_the_readme_example_is_the_package_docstring() -> None:
    import repeat_guard_transcripts

    assert repeat_guard_transcripts.__doc__ is not None
    example = textwrap.dedent(repeat_guard_transcripts.__doc__.split("::\n", 1)[1])
    exec(compile(example, "doc", "exec"), {})


def test_a_long_line_is_skipped_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    import repeat_guard_transcripts._lines as lines_module

    monkeypatch.setattr(lines_module, "_SKIP_CHUNK", 4)
    data = b"y" * 50 + b"\nok\n"
    lines = list(bounded_lines(io.BytesIO(data), limit=8))
    assert isinstance(lines[0], LineFault)
    assert lines[0].message == "line of 51 bytes is longer than the limit of 8"
    assert lines[1:] == [b"ok\n"]


def test_annotation_places_late_reminders_and_drops_only_the_held_line() -> None:
    from repeat_guard import Reminder
    from repeat_guard_transcripts._annotate import Annotation

    written: list[bytes] = []
    annotation = Annotation([b"a\n", b"b"], written.append)
    lines = annotation.lines()
    next(lines)
    next(lines)  # "a" written, "b" held
    annotation.drop(1)  # not the held line: nothing happens
    reminder = Reminder("s", "t", 3, "gentle", "text", "{}")
    fired_late = Fired(Location("f", 1, "s"), reminder)
    annotation.insert(fired_late, READERS["acp"])  # type: ignore[arg-type]
    annotation.release()
    assert written[0] == b"a\n"
    assert b"repeatGuard" in written[1]
    assert written[2] == b"b\n"


def test_open_input_is_the_one_policy_for_what_is_named_walked_or_piped(
    tmp_path: Path, fifo_never_opened: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from repeat_guard_transcripts import Input, PassedOver, Refused, open_input

    session = tmp_path / "s.jsonl"
    session.write_bytes(
        b'{"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}}\n'
    )
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    gone = str(tmp_path / "gone")
    with open_input(str(session), walked=True) as opened:
        assert isinstance(opened, Input)
        assert (opened.format, opened.size, opened.compression) == (
            "claude-code",
            session.stat().st_size,
            None,
        )
        assert opened.stream.read().startswith(b'{"type": "user"')
    # Walked: what is not read is passed over, saying why; named, it is refused.
    for path, walked_as, named_as in (
        (gone, PassedOver(gone, "gone"), Refused(gone, "gone", "No such file or directory")),
        (
            str(fifo_never_opened),
            PassedOver(str(fifo_never_opened), "not a regular file"),
            Refused(str(fifo_never_opened), "kind", "not a regular file"),
        ),
    ):
        with open_input(path, walked=True) as opened:
            assert opened == walked_as
        with open_input(path) as opened:
            assert opened == named_as
    with open_input(str(notes), walked=True) as opened:
        assert opened == PassedOver(str(notes), "not a transcript")
    with open_input(str(notes)) as opened:
        assert isinstance(opened, Input)
        assert opened.format is None
    # A format named for a walked file makes it a transcript to report.
    with open_input(gone, walked=True, format="codex") as opened:
        assert opened == Refused(gone, "gone", "No such file or directory")
    # ``wanted`` sees the file's status before anything is read.
    with open_input(str(session), wanted=lambda status: status.st_size > 1000) as opened:
        assert opened == PassedOver(str(session), "unwanted")
    # ``-`` is the standard input only where pipes are allowed; a closed one is refused.
    with open_input("-") as opened:
        assert opened == Refused("-", "gone", "No such file or directory")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(session.read_bytes())))
    with open_input("-", pipes=True) as opened:
        assert isinstance(opened, Input)
        assert (opened.format, opened.size) == ("claude-code", 0)
    monkeypatch.setattr(sys, "stdin", None)
    with open_input("-", pipes=True) as opened:
        assert opened == Refused("-", "open", "it is closed")
