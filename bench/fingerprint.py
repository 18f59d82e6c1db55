"""Fingerprint benchmark: ``normalise`` on large results, against the form its rules were first
written in (``reference_normalise``, kept here, which ``tests/core/test_fingerprint_reference.py``
checks ``normalise`` against: the same output for every text).

A host that sends a tool's result to the guard waits while the guard fingerprints it, so a
large ``Read`` or ``Bash`` result costs what ``normalise`` spends on it. The texts: 1 MiB of
CSV (a timestamp, numbers and words on each line, as ``bench.hook``'s ``Read`` result), 1 MiB
of Python source (this checkout's own), 1 MiB of a build and test log (timestamps, durations,
temporary paths, process ids, hex ids, error locations), and the 4 KB ``Bash`` output of
``bench.hook``. Both sides run in alternating rounds and each side's time is the median of its
rounds, so a noisy machine moves both together; the ratio is the reference's time over
``normalise``'s.

``python -m bench.fingerprint`` (part of ``make bench``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bench.core import alternating
from repeat_guard.fingerprint import normalise

ROUNDS = 5
SIZE = 1 << 20

_ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[@-Z\\-_]"
)
_TIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b"
)
_UUID = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_HEX = re.compile(r"\b(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b")
_TEMP = re.compile(r"(?<![\w/])(?:/private)?(?:/tmp|/var/folders)/[^\s'\"`]*")
_UNIT = r"(?:[nuµm]?s|[num]?sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?)"
_DURATION = re.compile(
    rf"(?<![\w.])(?:(?:\d+(?:\.\d+)?(?:{_UNIT}|m)){{2,}}|\d+(?:\.\d+)? ?{_UNIT})\b"
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_LINE = re.compile(r"(?:(?<=[\"'], )(line) \d+|\b(line) \d+(?=:))", re.IGNORECASE)
_FILE_LOCATION = re.compile(r"(\.[A-Za-z]\w*):\d+(?::\d+)?\b")
_BETWEEN_COLONS = re.compile(r":( ?)\d+(?=:)")
_TRAILING = re.compile(r"[ \t\r]+$", re.MULTILINE)


def _reference_pass(text: str) -> str:
    text = _ANSI.sub("", text)
    text = _TIME.sub("<time>", text)
    text = _UUID.sub("<uuid>", text)
    text = _HEX.sub("<hex>", text)
    text = _TEMP.sub("<tmp>", text)
    text = _DURATION.sub(lambda found: _NUMBER.sub("<n>", found[0]), text)
    text = _LINE.sub(lambda found: f"{found[1] or found[2]} <n>", text)
    text = _FILE_LOCATION.sub(
        lambda found: f"{found[1]}:<n>:<n>" if found[0].count(":") == 2 else f"{found[1]}:<n>",
        text,
    )
    text = _BETWEEN_COLONS.sub(r":\1<n>", text)
    return _TRAILING.sub("", text)


def reference_normalise(text: str) -> str:
    """The core's ``normalise`` as its rules were first written: each pattern of the module's
    list applied in turn to the whole text, the list again until nothing changes."""
    while True:
        again = _reference_pass(text)
        if again == text:
            return text
        text = again


def _filled(text: str, size: int = SIZE) -> str:
    return (text * (size // len(text) + 1))[:size]


def csv_text() -> str:
    """1 MiB of CSV, the lines of ``bench.hook``'s ``Read`` result."""
    return _filled('2026-12-06T08:00:00Z,42,export,batch,ok,0.125,"a quoted field"\n')


def python_text() -> str:
    """1 MiB of Python source: this checkout's own modules, in path order, repeated."""
    root = Path(__file__).resolve().parents[1]
    files = sorted((root / "core" / "src").rglob("*.py"))
    return _filled("".join(path.read_text(encoding="utf-8") for path in files))


def log_text() -> str:
    """1 MiB of a build and test log: each line with a timestamp and some of a duration, a
    temporary path, a process id, a hex id and an error location."""
    lines = [
        f"2026-12-06 08:{index % 60:02d}:{index * 7 % 60:02d},{index:03d} INFO worker-{index % 9}"
        f" pid={4000 + index} took {index % 7}.{index:03d}ms reading"
        f" /tmp/job-{index}/out.txt (commit 3fa{index:05d}bc)\n"
        + (f'  File "app/mod_{index}.py", line {index}, in run\n' if index % 5 == 0 else "")
        + (f"tests/test_{index}.py:{index}:3: ok in {index % 3}m{index % 50}s\n")
        for index in range(400)
    ]
    return _filled("".join(lines))


def bash_text() -> str:
    """The 4 KB ``Bash`` output of ``bench.hook``."""
    return _filled("compiling module 17: ok, 0 warnings, 0 errors ..........\n", 4096)


def main() -> None:
    """Print, for each text, the reference's and ``normalise``'s median time and their ratio."""
    texts: list[tuple[str, str, int]] = [
        ("CSV, 1 MiB", csv_text(), 1),
        ("Python source, 1 MiB", python_text(), 1),
        ("build log, 1 MiB", log_text(), 1),
        ("Bash output, 4 KB", bash_text(), 200),
    ]
    print(f"normalise against its first form (median of {ROUNDS} alternating rounds)")
    for name, text, repeat in texts:
        if normalise(text) != reference_normalise(text):
            raise SystemExit(f"{name}: normalise differs from the reference")
        sides = [_repeated(reference_normalise, text, repeat), _repeated(normalise, text, repeat)]
        old, new = alternating(ROUNDS, sides)
        print(
            f"  {name:22} first form {old / repeat * 1e3:8.2f} ms"
            f"  normalise {new / repeat * 1e3:8.2f} ms  {old / new:5.2f}x"
        )


def _repeated(side: Callable[[str], str], text: str, repeat: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(repeat):
            side(text)

    return run


if __name__ == "__main__":
    main()
