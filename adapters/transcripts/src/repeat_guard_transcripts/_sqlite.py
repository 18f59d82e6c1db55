"""What the readers of SQLite databases share: opening one read-only, reading it a chunk of
rows at a time, and turning whatever goes wrong into a diagnostic.

A database is opened with a ``mode=ro`` URI and no busy timeout: the reader never writes, never
waits for a lock, and a database a writer holds locked (``database is locked``) is skipped with
a note. Rows are read by short queries of at most ``CHUNK_ROWS`` rows, each its own read
transaction, so a lock that would hold up the agent's writes lasts one chunk at most, and memory
holds one chunk, never the database. A file that is not a database, or one whose pages are
damaged, gives a diagnostic at the row reached; the rows before it are read.

``sqlite3`` is imported when a database is read: every command that reads transcripts imports
the readers, and most read none.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final

from ._items import Diagnostic, Item

if TYPE_CHECKING:
    import sqlite3

__all__ = ["CHUNK_ROWS", "SQLITE_MAGIC", "Chunks", "database_items", "stream_note", "text"]

SQLITE_MAGIC: Final = b"SQLite format 3\x00"
"""The first bytes of every SQLite database file."""

CHUNK_ROWS: Final = 256
"""Rows one query reads."""

Row = tuple[object, ...]


class Chunks:
    """Read-only queries on one database, each its own short read."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def all(self, query: str, parameters: tuple[object, ...] = ()) -> list[Row]:
        """Every row of ``query``: for a small table (a database's sessions) or one bounded
        by its parameters (a message's parts)."""
        return self._connection.execute(query, parameters).fetchall()

    def keyed(
        self, query: str, first: tuple[object, ...], key: Callable[[Row], object]
    ) -> Iterator[Row]:
        """The rows of ``query`` a chunk at a time: ``query`` takes ``first``'s parameters and
        then the last key read (``key`` of a row, starting below every key), orders its rows
        by that key and stops after ``CHUNK_ROWS``."""
        last: object = -(2**63)
        while True:
            rows = self._connection.execute(query, (*first, last, CHUNK_ROWS)).fetchall()
            yield from rows
            if len(rows) < CHUNK_ROWS:
                return
            last = key(rows[-1])


def _text(data: bytes) -> str | bytes:
    """A text value as ``str``; its bytes when they are not UTF-8 (a damaged row), for the
    reader to say so rather than the query to fail."""
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data


def text(value: object) -> str:
    """A column's value as a name: itself when it is text, else how Python writes it."""
    return value if isinstance(value, str) else repr(value)


def _uri(path: str) -> str:
    # Only when a database is opened: urllib.parse imports ipaddress, which no other file needs.
    import urllib.parse  # noqa: PLC0415

    return f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro"


def database_items(
    path: str, file: str, read: Callable[[Chunks, list[int]], Iterator[Item]]
) -> Iterator[Item]:
    """The items ``read`` gives from the database at ``path`` (named ``file``); ``read`` keeps
    the row it has reached in its list's one element, for the diagnostic that ends the file if
    the database fails (not a database, damaged, locked by a writer: a note)."""
    import sqlite3  # noqa: PLC0415  # the module's docstring says why here

    reached = [0]
    try:
        connection = sqlite3.connect(_uri(path), uri=True, timeout=0, isolation_level=None)
    except sqlite3.Error as error:
        yield Diagnostic(file, 0, f"cannot open the database: {error}")
        return
    connection.text_factory = _text
    try:
        yield from read(Chunks(connection), reached)
    except sqlite3.OperationalError as error:
        if "locked" in str(error) or "busy" in str(error):
            yield Diagnostic(
                file, reached[0], "the database is busy (a writer holds it), skipped", "note"
            )
        else:
            yield Diagnostic(file, reached[0], f"database read failed: {error}")
    except (sqlite3.Error, UnicodeDecodeError) as error:  # a damaged schema: a name not UTF-8
        yield Diagnostic(file, reached[0], f"database read failed: {error}")
    finally:
        connection.close()


def stream_note(file: str, what: str) -> Diagnostic:
    """The diagnostic of a reader of paths given a stream (the standard input, a FIFO)."""
    return Diagnostic(file, 0, f"{what} is read from its file, not from a stream")
