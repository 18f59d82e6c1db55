"""The floor under any audit of JSON Lines files that keeps the README's promises about lines:
``python -m bench.floor FOLDER`` reads every line of every ``*.jsonl`` file under ``FOLDER``
and checks that each is UTF-8 JSON, which every reader must do to name a bad line by file and
line, and does nothing else (no reader, no guard, no output but a count).

It runs as the audit does: one process per core (a pool), each file read by one of them, each
line read without holding more than one buffer of it, checked for UTF-8 when it holds a byte
other than ASCII (msgspec does not look at the bytes of what it skips) and decoded by msgspec
into an empty ``Struct``, which validates the whole line and builds nothing of it. A program
that audits these files cannot be faster than this one on them without dropping a check.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import msgspec


class _Nothing(msgspec.Struct):
    """A line's object, of which nothing is read."""


_decode = msgspec.json.Decoder(_Nothing).decode
_REFUSED = (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError)


def checked_lines(path: str) -> tuple[int, int]:
    """The number of lines of the file at ``path`` and how many are not UTF-8 JSON objects
    (a blank line is none, as the readers pass it by)."""
    lines = bad = 0
    with open(path, "rb", buffering=1 << 20) as file:
        for line in file:
            lines += 1
            try:
                if not line.isascii():
                    line.decode()
                _decode(line)
            except _REFUSED:
                bad += not line.isspace()
    return lines, bad


def main(folder: str) -> None:
    """Check every line under ``folder`` with the machine's cores; print the totals."""
    files = sorted(str(path) for path in Path(folder).rglob("*.jsonl"))
    workers = max(1, min(len(os.sched_getaffinity(0)), len(files)))
    with ProcessPoolExecutor(workers) as pool:
        counts = list(pool.map(checked_lines, files, chunksize=1))
    print(f"{sum(c[0] for c in counts)} lines, {sum(c[1] for c in counts)} bad")


if __name__ == "__main__":
    main(sys.argv[1])
