"""The floor's check of every line (``bench.floor``): each line a reader must name as bad is
counted bad, whatever part of it is wrong, and nothing else is."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.floor import checked_lines, main

GOOD = b'{"type":"user","sessionId":"s","message":{"content":"\xe2\x86\x92 ok"}}\n'
BAD = (
    b'{"type":"a","x":"\xff"}\n',  # not UTF-8 in a field the decoder skips
    b"[1, 2]\n",  # JSON, not an object
    b'{"type":\n',  # not JSON
    b"nope",  # a last line without its newline
)


def test_every_line_is_counted_and_only_the_bad_ones_are_bad(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(GOOD + b"\n" + b"".join(BAD[:3]) + GOOD + BAD[3])
    assert checked_lines(str(path)) == (7, 4)


def test_main_adds_up_the_files_of_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.jsonl").write_bytes(GOOD * 3)
    (tmp_path / "two.jsonl").write_bytes(GOOD + BAD[0])
    (tmp_path / "notes.txt").write_bytes(BAD[1])
    main(str(tmp_path))
    assert capsys.readouterr().out == "5 lines, 1 bad\n"
