"""JSON text that UTF-8 can hold: a lone surrogate written as the escape it reads back from.

A JSON string may hold a lone surrogate (``"\\ud800"`` is valid JSON), which Python reads as a
code point that UTF-8 cannot encode; JSON written with ``ensure_ascii=False`` would then fail to
reach a file or SQLite's text. Escaping only those code points keeps every other character as
it was written.
"""

from __future__ import annotations

import re

__all__ = ["escape_lone_surrogates"]

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def escape_lone_surrogates(text: str) -> str:
    """Return the JSON ``text`` with each lone surrogate written as its ``\\uXXXX`` escape."""
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match[0]):04x}", text)
