"""Compressed transcripts: told by their first bytes, read as the plain ones are, and a fault in
the compressed data a diagnostic at its line after the lines before it."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from collections.abc import Callable
from pathlib import Path

import pytest

from repeat_guard_transcripts import (
    HEAD_BYTES,
    LineFault,
    Sniffed,
    bounded_lines,
    sniff_format,
    sniff_stream,
)
from repeat_guard_transcripts._compressed import (
    MAGIC_BYTES,
    compressing,
    compression_for,
    compression_of,
    decompressing,
)

from ._support import FIXTURES

PLAIN = (FIXTURES / "acp" / "denials.jsonl").read_bytes()
COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
}
# Many lines of distinct text, so that the compressed data is long enough to cut mid-way.
LONG = b"".join(
    b'{"n": %d, "text": "%s"}\n' % (n, str(n * 7919).encode() * 9) for n in range(20_000)
)


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_a_compressed_transcript_is_sniffed_and_read_whole(
    compression: str, tmp_path: Path
) -> None:
    packed = COMPRESSORS[compression](PLAIN)
    assert compression_of(packed) == compression
    sniffed = sniff_stream(io.BytesIO(packed))
    assert isinstance(sniffed, Sniffed)
    assert (sniffed.format, sniffed.compression) == ("acp", compression)
    assert sniffed.stream.read() == PLAIN
    path = tmp_path / "t.jsonl.z"
    path.write_bytes(packed)
    assert sniff_format(str(path)) == "acp"


def test_a_plain_input_is_left_as_it_is() -> None:
    assert compression_of(PLAIN) is None
    sniffed = sniff_stream(io.BytesIO(PLAIN))
    assert isinstance(sniffed, Sniffed)
    assert (sniffed.format, sniffed.compression) == ("acp", None)
    assert sniffed.stream.read() == PLAIN


class _Recording(io.BytesIO):
    """A stream that notes how much each read asked for."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.asked: list[int] = []

    def read(self, size: int | None = -1, /) -> bytes:
        self.asked.append(-1 if size is None else size)
        return super().read(size)


@pytest.mark.parametrize("data", [PLAIN, gzip.compress(PLAIN)])
def test_without_sniffing_only_the_magic_bytes_are_read_ahead(data: bytes) -> None:
    # A format named by the caller: a pipe must not be waited on for a whole head.
    stream = _Recording(data)
    sniffed = sniff_stream(stream, sniff=False)
    assert isinstance(sniffed, Sniffed)
    assert sniffed.format is None
    assert stream.asked == [MAGIC_BYTES]
    assert sniffed.stream.read() == PLAIN
    assert MAGIC_BYTES < HEAD_BYTES


@pytest.mark.parametrize("compression", ["gzip", "xz"])
def test_a_compressed_file_cut_short_gives_its_lines_then_a_diagnostic(compression: str) -> None:
    packed = COMPRESSORS[compression](LONG)
    sniffed = sniff_stream(io.BytesIO(packed[: len(packed) // 2]))
    assert isinstance(sniffed, Sniffed)
    lines = list(bounded_lines(sniffed.stream))
    *whole, fault = lines
    assert whole
    assert b"".join(whole) == LONG[: len(b"".join(whole))]
    assert isinstance(fault, LineFault)
    assert fault.message == (
        f"read failed: {compression} data: Compressed file ended before the end-of-stream "
        "marker was reached"
    )


@pytest.mark.parametrize(
    ("compression", "early", "message"),
    [
        ("gzip", True, "read failed: gzip data: Error -3 while decompressing data: "),
        # Zeros inflate to something here: the checksum at the end finds them out.
        ("gzip", False, "read failed: gzip data: CRC check failed"),
        ("xz", True, "read failed: xz data: Corrupt input data"),
        ("xz", False, "read failed: xz data: Corrupt input data"),
        ("bzip2", True, "read failed: bzip2 data: Invalid data stream"),
        ("bzip2", False, "read failed: bzip2 data: Invalid data stream"),
    ],
)
def test_corrupt_compressed_data_is_a_read_error_at_its_line(
    compression: str, early: bool, message: str
) -> None:
    packed = bytearray(COMPRESSORS[compression](LONG))
    damage = 40 if early else len(packed) * 3 // 4
    packed[damage : damage + 200] = bytes(200)
    sniffed = sniff_stream(io.BytesIO(bytes(packed)))
    if early:  # no head to sniff: the reason is the read's
        assert isinstance(sniffed, str)
        failure = sniffed
    else:  # the lines before the fault (the last of them maybe garbled by it), then the fault
        assert isinstance(sniffed, Sniffed)
        *whole, last = bounded_lines(sniffed.stream)
        assert len(whole) > 1000
        assert whole[0] == LONG[: len(whole[0])]
        assert isinstance(last, LineFault)
        failure = last.message
    assert failure.startswith(message)


def test_a_fault_is_raised_again_by_every_later_read() -> None:
    stream = decompressing(io.BytesIO(gzip.compress(LONG)[:10]), "gzip")
    with pytest.raises(OSError, match="gzip data: Compressed file ended") as first:
        stream.read()
    with pytest.raises(OSError, match="gzip data") as second:
        stream.read(10)
    assert str(second.value) == str(first.value)
    stream.close()


def test_a_read_returns_what_came_before_a_fault_and_raises_it_next() -> None:
    packed = gzip.compress(LONG)
    stream = decompressing(io.BytesIO(packed[: len(packed) // 2]), "gzip")
    got = stream.read()
    assert got
    assert got == LONG[: len(got)]
    with pytest.raises(OSError, match="gzip data"):
        stream.read()


@pytest.mark.parametrize(
    ("name", "compression"),
    [
        ("a.jsonl.gz", "gzip"),
        ("A.JSONL.GZ", "gzip"),
        ("a.bz2", "bzip2"),
        ("a.xz", "xz"),
        ("a.jsonl", None),
        ("gz", None),
        ("a.gz.jsonl", None),
        ("-", None),
    ],
)
def test_the_name_written_to_says_the_compression(name: str, compression: str | None) -> None:
    assert compression_for(name) == compression


@pytest.mark.parametrize("compression", ["gzip", "bzip2", "xz"])
def test_written_compressed_reads_back_and_leaves_the_stream_open(compression: str) -> None:
    data = b'{"a": 1}\n' * 1000
    written = []
    for _ in range(2):
        stream = io.BytesIO()
        with compressing(stream, compression) as packed:
            packed.write(data)
        assert not stream.closed
        written.append(stream.getvalue())
    # The same data compresses the same: no name, no time of writing.
    assert written[0] == written[1]
    assert compression_of(written[0]) == compression
    assert decompressing(io.BytesIO(written[0]), compression).read() == data
