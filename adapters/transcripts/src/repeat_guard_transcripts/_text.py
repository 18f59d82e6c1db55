"""Text from transcripts made fit for a terminal: the one escaping every text output uses, and
the one way a count and its noun are worded (``counted``).

A file name, a tool name or a session id is whatever bytes someone wrote: a line break in
one would split a ``FILE:LINE: message`` line in two, an escape sequence would recolour or
retitle the terminal. JSON, CSV and HTML escape them their own way; text does it here.
"""

from __future__ import annotations

import re

__all__ = ["counted", "printable"]

# C0 controls, DEL and C1 controls: each written as the escape Python would write it.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def counted(count: int, noun: str) -> str:
    """Return ``count`` and ``noun``, plural unless the count is one: ``1 message``,
    ``0 messages``, ``12 messages`` (every noun counted so far takes an ``s``)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def printable(text: str) -> str:
    """Return ``text`` with control characters (``\\n``, ``\\x1b``, ...) and anything UTF-8
    cannot encode (a lone surrogate) written as backslash escapes."""
    if text.isascii() and text.isprintable():
        return text
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(_escaped, text)
