"""Fuzzing every reader: any bytes give outcomes, never an exception.

``make test`` runs a few thousand transcripts; ``make fuzz`` sets ``REPEAT_GUARD_FUZZ`` to run
a long campaign of the same test (see the transcripts package's README for its figures).
"""

from __future__ import annotations

import bz2
import contextlib
import csv
import gzip
import io
import json
import lzma
import os
import tempfile
import unicodedata
import unittest.mock
from collections.abc import Callable, Iterator
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from repeat_guard import GuardConfig
from repeat_guard_audit import CSV_FIELDS, AuditSettings, FileJob, audit_file
from repeat_guard_cli import main
from repeat_guard_transcripts import READERS, Item, PathReading, sniff_format

from ..deep import deep_folders
from ._support import diagnostics, run_reader, summary
from .fuzzing import exercise, fuzz_settings, transcripts

EXAMPLES = int(os.environ.get("REPEAT_GUARD_FUZZ", "3000"))


@fuzz_settings(EXAMPLES)
@given(transcripts())
def test_any_transcript_replays_reports_and_annotates_without_an_exception(
    case: tuple[str, list[bytes]],
) -> None:
    fmt, lines = case
    assert exercise(fmt, lines) >= 1


@contextlib.contextmanager
def _on_disk(lines: list[bytes]) -> Iterator[Path]:
    """The transcript ``lines`` written to a file of their own, in a folder of its own."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_bytes(b"".join(lines))
        yield path


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    assert "Traceback" not in err.getvalue()
    return status, out.getvalue(), err.getvalue()


def _replay_argv(mode: str, fmt: str, path: Path) -> list[str]:
    if mode == "sniffed":  # the format sniffed from the file's head, as by default
        return ["replay", str(path)]
    if mode in ("text", "json"):
        return ["replay", "--format", mode, "--from", fmt, str(path)]
    if mode == "check":
        return ["replay", "--check", "--from", fmt, str(path)]
    if fmt == "acp":
        return ["replay", "--annotate", str(path.with_name("out.jsonl")), "--from", fmt, str(path)]
    return ["replay", "--from", fmt, str(path)]


@fuzz_settings(max(EXAMPLES // 20, 50))
@given(transcripts(), st.sampled_from(["text", "json", "check", "annotate", "sniffed"]))
def test_the_command_exits_0_or_3_on_any_transcript(
    case: tuple[str, list[bytes]], mode: str
) -> None:
    fmt, lines = case
    with _on_disk(lines) as path:
        status, _, err = _run(_replay_argv(mode, fmt, path))
        known = sniff_format(str(path)) is not None
    allowed = {0, 3, 1} if mode == "check" else {0, 3}
    if mode == "sniffed" and not known:
        allowed = {2}  # a usage error: name the format with --from
    assert status in allowed, err


@fuzz_settings(max(EXAMPLES // 40, 50))
@given(transcripts(), st.booleans())
def test_the_audit_exits_0_or_3_on_any_file_and_sniffs_it_as_sniff_format_does(
    case: tuple[str, list[bytes]], named: bool
) -> None:
    _, lines = case
    with _on_disk(lines) as path:
        argv = ["audit", str(path if named else path.parent), "--format", "json", "--jobs", "1"]
        status, out, err = _run(argv)
        known = sniff_format(str(path)) is not None
    assert status in (0, 3), err
    # The worker's sniff agrees with sniff_format's: a walked file no reader recognises is
    # passed over, a named one is counted with its diagnostic.
    totals = json.loads(out.splitlines()[-1])
    assert totals["type"] == "totals"
    assert totals["files"] == (1 if named else int(known))
    if not known:
        assert totals["diagnostics"] == int(named)


@fuzz_settings(max(EXAMPLES // 40, 50))
@given(
    transcripts(),
    st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=8),
)
def test_the_audit_csv_is_one_line_a_record_whatever_the_file_is_called(
    case: tuple[str, list[bytes]], name: str
) -> None:
    # A file name holding a line break or an escape sequence: escaped, one line a record.
    _, lines = case
    with _on_disk(lines) as path:
        named = path.rename(path.with_name(f"t{name}"))
        status, out, err = _run(["audit", str(named), "--format", "csv", "--jobs", "1"])
    assert status in (0, 3), err
    assert not [char for char in out if char != "\n" and unicodedata.category(char) == "Cc"]
    records = out.split("\n")[:-1]
    assert [len(row) for row in csv.reader(records)] == [len(CSV_FIELDS)] * len(records)
    assert records[-1].startswith("totals,")


COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
}
DECOMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.decompress,
    "bzip2": bz2.decompress,
    "xz": lzma.decompress,
}
SUFFIXES = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz"}


@fuzz_settings(max(EXAMPLES // 40, 50))
@given(transcripts(), st.sampled_from(sorted(COMPRESSORS)))
def test_a_compressed_transcript_replays_as_the_plain_one_does(
    case: tuple[str, list[bytes]], compression: str
) -> None:
    fmt, lines = case
    with _on_disk(lines) as path:
        # The same name in another folder: a reader may name a session after its file.
        packed = path.parent / "packed" / path.name
        packed.parent.mkdir()
        packed.write_bytes(COMPRESSORS[compression](path.read_bytes()))
        for mode in ("json", "sniffed"):
            plain = _run(_replay_argv(mode, fmt, path))
            unpacked = _run(_replay_argv(mode, fmt, packed))
            assert unpacked == tuple(
                part.replace(str(path), str(packed)) if isinstance(part, str) else part
                for part in plain
            )
        if fmt == "acp":
            # Annotated into a file named for the compression: the plain annotation, compressed.
            out = path.with_name("out.jsonl")
            packed_out = packed.with_name(f"out.jsonl{SUFFIXES[compression]}")
            plain = _run(["replay", "--annotate", str(out), "--from", fmt, str(path)])
            unpacked = _run(["replay", "--annotate", str(packed_out), "--from", fmt, str(packed)])
            assert unpacked == tuple(
                part.replace(str(path), str(packed)) if isinstance(part, str) else part
                for part in plain
            )
            assert out.exists() == packed_out.exists()
            if out.exists():
                assert DECOMPRESSORS[compression](packed_out.read_bytes()) == out.read_bytes()


@fuzz_settings(max(EXAMPLES // 40, 50))
@given(
    transcripts(),
    st.sampled_from(sorted(COMPRESSORS)),
    st.integers(min_value=0),
    st.one_of(st.none(), st.tuples(st.integers(min_value=0), st.integers(1, 255))),
)
def test_a_compressed_transcript_cut_short_or_corrupted_never_raises(
    case: tuple[str, list[bytes]],
    compression: str,
    cut: int,
    flip: tuple[int, int] | None,
) -> None:
    fmt, lines = case
    data = bytearray(COMPRESSORS[compression](b"".join(lines)))
    del data[cut % (len(data) + 1) :]
    if flip is not None and data:
        position, bits = flip
        data[position % len(data)] ^= bits
    with _on_disk([bytes(data)]) as path:
        for argv in (
            ["replay", "--from", fmt, str(path)],
            ["replay", str(path)],
            ["audit", str(path.parent), "--format", "json", "--jobs", "1"],
        ):
            status, _, err = _run(argv)
            assert status in (0, 2, 3), err


@contextlib.contextmanager
def _deep_on_disk(lines: list[bytes], depth: int) -> Iterator[tuple[Path, Path]]:
    """The transcript ``lines`` in a file ``depth`` folders below a folder of its own: the
    top folder and the file."""
    with (
        tempfile.TemporaryDirectory() as folder,
        deep_folders(Path(folder) / "top", depth) as inner,
    ):
        path = inner / "t.jsonl"
        path.write_bytes(b"".join(lines))
        yield Path(folder) / "top", path


@fuzz_settings(max(EXAMPLES // 300, 6))
@given(transcripts(), st.one_of(st.integers(0, 8), st.integers(1000, 1100)))
def test_a_transcript_at_any_depth_is_found_by_the_audit_and_the_replay(
    case: tuple[str, list[bytes]], depth: int
) -> None:
    _, lines = case
    with _deep_on_disk(lines, depth) as (top, path):
        known = sniff_format(str(path)) is not None
        status, out, err = _run(["audit", str(top), "--format", "json", "--jobs", "1"])
        assert status in (0, 3), err
        assert json.loads(out.splitlines()[-1])["files"] == int(known)
        status, out, err = _run(["replay", "--format", "json", str(top)])
        assert status in (0, 3), err
        assert out.count('"type": "summary"') == int(known)


class _FailingAfter(io.RawIOBase):
    """``data`` whose reading fails (``EIO``, as ``/proc/self/mem``'s does) at byte ``at``."""

    def __init__(self, data: bytes, at: int) -> None:
        self._data, self._at, self._position = data, at, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # RawIOBase's stub takes a Buffer
        if self._position >= self._at and self._position < len(self._data):
            raise OSError(5, "Input/output error")
        count = min(len(buffer), len(self._data), self._at) - self._position
        count = max(min(count, len(self._data) - self._position), 0)
        buffer[:count] = self._data[self._position : self._position + count]
        self._position += count
        return count


@fuzz_settings(max(EXAMPLES // 40, 50))
@given(transcripts(), st.integers(0, 400))
def test_a_read_error_anywhere_in_a_file_is_a_diagnostic_of_the_audit(
    case: tuple[str, list[bytes]], at: int
) -> None:
    _, lines = case
    data = b"".join(lines)
    with _on_disk(lines) as path:
        real = os.stat(path)

        def failing(name: str) -> tuple[io.BufferedReader, os.stat_result]:
            return io.BufferedReader(_FailingAfter(data, at)), real

        with unittest.mock.patch("repeat_guard_transcripts._files.open_regular", failing):
            result = audit_file(FileJob(str(path), None, len(data)), _SETTINGS)
    if at < len(data):
        assert result.diagnostics >= 1
    if at == 0 and data:
        assert [(p.line, p.message) for p in result.problems] == [
            (1, "read failed: Input/output error")
        ]


_SETTINGS = AuditSettings(GuardConfig())


@fuzz_settings(max(EXAMPLES // 20, 50))
@given(
    st.integers(1, 6),
    st.integers(0, 1000),
    st.sampled_from(["swe-agent", "openhands"]),
    st.sampled_from([b"\xff", b"\xc3", b"}", b"garbage"]),
    st.booleans(),
)
def test_a_document_damaged_anywhere_keeps_the_steps_before_the_damage(
    steps: int, where: int, fmt: str, damage: bytes, at_the_end: bool
) -> None:
    # A byte that is not UTF-8 or text that is not JSON, on any line or after the document:
    # every step that ends before it counts, and a diagnostic says where it is.
    if fmt == "swe-agent":
        items: list[dict[str, object]] = [
            {"action": f"ls {n}", "observation": "a"} for n in range(steps)
        ]
        document: object = {"trajectory": items, "info": {"exit": "done"}}
    else:
        items = [{"id": n, "source": "agent", "action": "finish"} for n in range(steps)]
        document = items
    lines = json.dumps(document, indent=1).encode().splitlines(keepends=True)
    lines[-1] += b"\n"
    # Not before the first line: the OpenHands reader tells a document from JSON Lines by it.
    line = len(lines) if at_the_end else 1 + where % (len(lines) - 1)
    lines.insert(line, damage + b"\n")
    outcomes = run_reader(fmt, lines)
    found = diagnostics(outcomes)
    assert found, lines
    if damage in (b"\xff", b"\xc3"):  # on its line; text that is not JSON may break later
        assert found[-1] == (line + 1, found[-1][1])
        assert found[-1][1].startswith("not UTF-8")
    # Every step whose text ends before the damaged line counts.
    ends = [number for number, text in enumerate(lines[:line], 1) if text.strip() in (b"}", b"},")]
    whole = len(ends) - (fmt == "swe-agent" and line > len(lines) - 3)  # less info's own brace
    assert summary(outcomes).tally.calls >= min(whole, steps)


DATABASES = {
    "opencode": Path(__file__).parent / "fixtures" / "opencode" / "opencode.db",
    "goose": Path(__file__).parent / "fixtures" / "goose" / "sessions.db",
}


@fuzz_settings(max(EXAMPLES // 40, 50))
@given(
    st.sampled_from(sorted(DATABASES)),
    st.lists(st.tuples(st.integers(0, 400_000), st.binary(min_size=1, max_size=8)), max_size=8),
    st.one_of(st.none(), st.integers(0, 400_000)),
)
def test_a_database_damaged_anywhere_is_read_without_an_exception(
    fmt: str, damage: list[tuple[int, bytes]], cut: int | None
) -> None:
    # Bytes overwritten anywhere (the header, the schema, a row's JSON), the file cut short:
    # the reader, the replay and the audit give items and diagnostics, never an exception.
    data = bytearray(DATABASES[fmt].read_bytes())
    for where, replacement in damage:
        at = where % len(data)
        data[at : at + len(replacement)] = replacement
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / DATABASES[fmt].name
        path.write_bytes(bytes(data[:cut]))
        reader = READERS[fmt]
        assert isinstance(reader, PathReading)
        items = list(reader.read_path(str(path), str(path)))
        assert all(isinstance(item, Item) for item in items)
        result = audit_file(FileJob(str(path), fmt, len(data)), _SETTINGS)
        assert result.files == 1
        status, _, _ = _run(["replay", "--from", fmt, str(path)])
        assert status in (0, 3)


@fuzz_settings(max(EXAMPLES // 40, 50))
@given(transcripts(), st.lists(st.binary(max_size=40), max_size=3))
def test_a_conversation_folder_of_any_events_is_read_without_an_exception(
    case: tuple[str, list[bytes]], odd: list[bytes]
) -> None:
    # Each line of a drawn transcript, and a few odd byte strings, as one event file each.
    _, lines = case
    with tempfile.TemporaryDirectory() as folder:
        events = Path(folder) / "c" / "events"
        events.mkdir(parents=True)
        (events.parent / "base_state.json").write_bytes(lines[0] if lines else b"{}")
        for number, data in enumerate([*lines, *odd]):
            (events / f"event-{number:05d}-x.json").write_bytes(data)
        status, _, _ = _run(["replay", folder])
        assert status in (0, 3)
        result = audit_file(FileJob(str(events.parent), None, 0, walked=True), _SETTINGS)
        assert (result.format, result.files) == ("openhands-events", 1)
