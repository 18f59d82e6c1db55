"""A result's fingerprint: the result less what changes on every run without being progress.

Under ``progress = "result"`` two results of the same call are compared by their fingerprints.
``fingerprint(result)`` is ``result`` with every string in it (the result itself, the items of
its lists and tuples and the values of its dicts, to ``MAX_DEPTH`` levels; keys and other values
as they are) passed through ``normalise``, which rewrites, in this order:

1. ANSI escape sequences (colours, cursor moves, terminal titles): removed;
2. ISO-8601 timestamps (``2026-12-06T01:02:03.456Z``, ``2026-12-06 01:02``, with an optional
   fraction and zone): ``<time>``;
3. UUIDs (``8-4-4-4-12`` hex digits): ``<uuid>``;
4. hex ids of 8 or more hex digits holding both a digit and a letter (a commit, a container, a
   chunk id): ``<hex>``;
5. temporary paths (``/tmp/...``, ``/var/folders/...``, ``/private/var/folders/...``, up to a
   space or a quote): ``<tmp>``;
6. durations: the number of a number with a time unit (``ns``, ``us``, ``µs``, ``ms``, ``s``,
   ``nsec``, ``usec``, ``msec``, ``sec``, ``secs``, ``second``, ``seconds``, ``min``, ``mins``,
   ``minute``, ``minutes``, ``h``, ``hr``, ``hrs``, ``hour``, ``hours``; after one space or
   none, ending a word; a number is digits with an optional fraction, ``12`` or ``0.003``), and
   each number of two or more such parts written together with ``m`` also a unit (``1m30s``,
   ``0m0.003s``, ``1h2m``): ``<n>``, the unit kept (``Ran 1 test in <n>s``, ``took <n> s``,
   ``real <n>m<n>s``, ``passed in <n>s``). A number inside a word or after a dot is not one
   (``v1.2s``, ``x2s``), nor a number with ``m`` alone (``10m``: minutes or metres);
7. numbers in error locations: ``line 12`` after a quoted name and a comma (Python's
   ``File "app.py", line 12``) or before a colon (the shell's ``./build.sh: line 12: ...``),
   any case; ``file.py:12`` and ``file.py:12:3`` (after a name with an extension); and a
   number between colons (``: 12:``, ``sh:12:``): ``<n>``. Other ``line 12``s stay, so a
   poll printing ``line 100 of 400`` or ``processed line 100`` makes progress;
8. spaces, tabs and carriage returns at the end of each line: removed.

Nothing else changes: other numbers (a percentage, a count of tests, a file's size), words,
and the lines themselves stay. So a build that fails at another line each time keeps one
fingerprint, a passing test run that only took another time keeps one too (time passing is
not work done), and a poll whose output says ``60%`` after ``10%`` makes progress. A file that
grows with each identical edit is not normalised away: its new lines are content, and telling
a line that repeats from one that is new would need the previous result, which a fingerprint
does not see.

``normalise`` is idempotent (the list is applied until nothing changes), and pure: no clock,
no locale, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

__all__ = ["MAX_DEPTH", "fingerprint", "normalise"]

MAX_DEPTH: Final = 16
"""How deep into nested lists and dicts ``fingerprint`` normalises strings (deeper: as is)."""

# Each rule: its gate, the pattern, and what a match becomes. The gate lets a text skip the
# pattern's scan: a test of ``in`` for a literal, or a search for a short pattern, that every
# match of the rule holds (far cheaper than the scan, and no match is missed when it fails).
# Each pattern starts with a character, not an assertion, so that the scan tries a match only
# where that character is: ``\b`` before a word character is written as a look back past it
# (``x(?<!\wx)``), the same matches. ``_LINE`` starts with ``[lL]``, the only characters that
# match ``l`` under ``re.IGNORECASE``, and takes the rest of ``line`` in any case as that flag
# has it (``İ`` and ``ı`` match ``i``).
_ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: a title or a link, to BEL or ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erasing
    r"|\x1b[@-Z\\-_]"  # the two-character escapes
)
_TIME = re.compile(
    r"\d(?<!\w\d)\d{3}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b"
)
_UUID = re.compile(
    r"[0-9a-fA-F](?<!\w[0-9a-fA-F])[0-9a-fA-F]{7}"
    r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
# A word of 8 or more hex digits; ``_hex`` keeps one without both a digit and a letter.
_HEX = re.compile(r"[0-9a-fA-F](?<!\w[0-9a-fA-F])[0-9a-fA-F]{7,}\b")
_TEMP = re.compile(r"/(?<![\w/]/)(?:private/)?(?:tmp|var/folders)/[^\s'\"`]*")
_UNIT = r"(?:[nuµm]?s|[num]?sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?)"
_DURATION = re.compile(
    r"\d(?<![\w.]\d)"
    r"(?=\d*(?:\.\d+)? ?[nuµmsh])"  # what every match holds next: a unit's (or m's) first letter
    rf"(?:\d*(?:\.\d+)?(?:{_UNIT}|m)(?:\d+(?:\.\d+)?(?:{_UNIT}|m))+|\d*(?:\.\d+)? ?{_UNIT})\b"
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_LINE = re.compile(r"([lL](?i:ine))(?:(?<=[\"'], ....)|(?<!\w....)(?= \d+:)) \d+")
_FILE_LOCATION = re.compile(r"(\.[A-Za-z]\w*):\d+(?::\d+)?\b")
_BETWEEN_COLONS = re.compile(r":( ?)\d+(?=:)")
_TRAILING = re.compile(r"[ \t\r]+$", re.MULTILINE)


def _file_location(found: re.Match[str]) -> str:
    return (
        f"{found[1]}:<n>:<n>" if found[0].count(":") == 2 else f"{found[1]}:<n>"
    )  # a line and a column


def _duration(found: re.Match[str]) -> str:
    return _NUMBER.sub("<n>", found[0])  # the unit kept: 5 ms is not 5 s


def _line(found: re.Match[str]) -> str:
    return f"{found[1]} <n>"


def _hex(found: re.Match[str]) -> str:
    word = found[0]  # hex digits alone: a digit and a letter unless all of one kind
    return word if word.isdigit() or word.isalpha() else "<hex>"


def _holding(*literals: str) -> Callable[[str], bool]:
    return lambda text: any(literal in text for literal in literals)


def _finding(pattern: str) -> Callable[[str], object]:
    return re.compile(pattern).search


def _space_ends_a_line(text: str) -> bool:
    return text.endswith((" ", "\t", "\r")) or any(
        ending in text for ending in (" \n", "\t\n", "\r\n")
    )


_Gate = Callable[[str], object] | None  # None: no gate, the pattern always scans
_RULES: Final[tuple[tuple[_Gate, re.Pattern[str], str | Callable[[re.Match[str]], str]], ...]] = (
    (_holding("\x1b"), _ANSI, ""),
    (_finding(r"-\d\d-\d\d[T ]\d\d:"), _TIME, "<time>"),
    (_finding("-[0-9a-fA-F]{4}-"), _UUID, "<uuid>"),
    (_finding("[0-9a-fA-F]{8}"), _HEX, _hex),
    (_holding("/tmp/", "/var/folders/"), _TEMP, "<tmp>"),
    (_finding(r"\d ?[nuµmsh]"), _DURATION, _duration),  # a digit, a unit's first letter
    (None, _LINE, _line),
    (None, _FILE_LOCATION, _file_location),
    (None, _BETWEEN_COLONS, r":\1<n>"),
    (_space_ends_a_line, _TRAILING, ""),
)


def normalise(text: str) -> str:
    """``text`` less what carries no progress (see the module's list, applied in its order).

    The list is applied again until nothing changes (a second pass finds a location next to
    one the first rewrote: ``LINE 0LINE 0``), so that ``normalise`` is idempotent. Each pass
    that changes the text removes a digit, an escape, a temporary folder's name or a trailing
    space and adds none, so the passes end; text from a tool takes one or two."""
    while True:
        again = _pass(text)
        if again == text:
            return text
        text = again


def _pass(text: str) -> str:
    for gate, pattern, replacement in _RULES:
        if gate is None or gate(text):
            text = pattern.sub(replacement, text)
    return text


def fingerprint(result: object, depth: int = 0) -> object:
    """``result`` with its strings normalised (to ``MAX_DEPTH`` levels), for comparing results."""
    if isinstance(result, str):
        return normalise(result)
    if depth >= MAX_DEPTH:
        return result
    if type(result) is list or type(result) is tuple:
        return [fingerprint(item, depth + 1) for item in result]
    if type(result) is dict:
        return {key: fingerprint(value, depth + 1) for key, value in result.items()}
    return result
