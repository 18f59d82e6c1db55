"""What every reader shares: the loop over a JSON Lines file's records, the loop over a whole
document's elements, a record's string fields, and the session a file's name gives (and
``exit_failed``, from ``repeat_guard.shell_output``, which the hooks share).

A new format is a module with a ``Reader`` (a ``name``, a one-line ``description``, ``sniff``
and ``read``) and one ``register`` line in the package's ``__init__``; its ``read`` is built
from these helpers and from ``OpenCalls`` (a call held by id until its result).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping

from repeat_guard.shell_output import exit_failed

from ._document import Cursor, Element
from ._items import Diagnostic, Item, Location, SessionSeen
from ._lines import json_lines

__all__ = [
    "document_items",
    "exit_failed",
    "file_session",
    "object_items",
    "string",
    "token_count",
]


def string(record: Mapping[str, object], key: str) -> str | None:
    """``record[key]`` when it is a string, else ``None``."""
    value = record.get(key)
    return value if isinstance(value, str) else None


def token_count(record: Mapping[str, object], *keys: str) -> int | None:
    """The sum of the token counts ``record`` has under ``keys`` (integers; others are not
    counts), ``None`` when it has none: a step's output or input tokens, from the fields the
    format splits them into."""
    counts = [record.get(key) for key in keys]
    known = [count for count in counts if type(count) is int]
    return sum(known) if known else None


def file_session(file: str) -> str:
    """The session a file stands for when its records do not name one: its name less the
    extension (``run-7.traj`` is ``run-7``), or the whole path when that leaves nothing."""
    return os.path.splitext(os.path.basename(file))[0] or file


def object_items(
    lines: Iterable[bytes],
    file: str,
    on_object: Callable[[int, dict[str, object]], list[Item]],
) -> Iterator[Item]:
    """The items of a JSON Lines file whose every line is one object: ``on_object(line,
    record)`` gives each record's items; a bad line or a value that is not an object gives a
    diagnostic, and the next line is read."""
    for decoded in json_lines(lines, file):
        if isinstance(decoded, Diagnostic):
            yield decoded
            continue
        line, record = decoded
        if not isinstance(record, dict):
            yield Diagnostic(file, line, "expected a JSON object")
            continue
        items = on_object(line, record)
        if items:
            yield from items


def document_items(
    lines: Iterable[bytes],
    file: str,
    session: str,
    elements: Callable[[Cursor], Iterator[Element | Diagnostic]],
    on_element: Callable[[str, Element], Iterable[Item]],
) -> Iterator[Item]:
    """The items of a file that is one JSON document, read a chunk at a time: ``session`` is
    seen at line 1 once there is text, and ``on_element(text, element)`` gives the items of
    each element ``elements`` walks to, ``text`` holding it. A document that breaks off ends
    with a diagnostic where it does; so does one whose reading stops (a line that cannot be
    read, a byte that is not UTF-8, a value too long), after the elements before that point,
    with the reason instead of the broken JSON it leaves."""
    walked = Cursor(lines, file)
    if walked.skip_space():
        yield SessionSeen(Location(file, 1, session))
        for element in elements(walked):
            if not isinstance(element, Diagnostic):
                yield from on_element(walked.text, element)
            elif walked.fault is None or element.line < walked.end_line():
                yield element  # the walk ends with it
    if walked.fault is not None:
        yield walked.fault
