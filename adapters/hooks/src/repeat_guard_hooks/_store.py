"""The guard's state between hook processes: one SQLite row per agent chain.

Every hook call is a new process and parallel tool calls run their hooks at the same time, so
each call is one ``BEGIN IMMEDIATE`` transaction: read the chains it needs, ``reduce``, write
back what the core returned, commit. Writers queue on SQLite's lock (WAL mode, a busy timeout),
so concurrent calls on one agent are serialised and none of their counts is lost.

A row holds the core's own encoding of a chain (``encode_chain``), which keeps a fixed-size
digest instead of long argument text. Rows of agents not seen for ``expire_after`` seconds are
dropped on every write, so the file cannot grow without bound. The file is created 0600 in a
directory created 0700: it describes what people's agents did.

Durability is traded for speed (``synchronous=OFF``, see ``_prepare``): a hook runs before the
agent may go on, and losing a few counts to a power cut costs at most a late reminder.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from repeat_guard import (
    AgentDisposed,
    Chain,
    GuardConfig,
    GuardState,
    Reminder,
    decode_chain,
    encode_chain,
    reduce,
)

from ._dialects import AgentEvent, SessionEnded

__all__ = [
    "BUSY_TIMEOUT",
    "DEFAULT_EXPIRE_AFTER",
    "SCHEMA_VERSION",
    "CorruptStore",
    "StoreResult",
    "apply_action",
    "default_state_path",
    "open_store",
    "set_aside",
]

SCHEMA_VERSION = 1
DEFAULT_EXPIRE_AFTER = 7 * 24 * 3600.0
# Seconds a hook waits for another hook's transaction before giving up (and failing open).
BUSY_TIMEOUT = 5.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS chains (session TEXT NOT NULL, agent TEXT NOT NULL, "
    "chain TEXT NOT NULL, seen REAL NOT NULL, PRIMARY KEY (session, agent)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS chains_by_seen ON chains (seen)",
    f"PRAGMA user_version={SCHEMA_VERSION}",
)
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


class CorruptStore(sqlite3.DatabaseError):
    """The state file is not a usable SQLite database of ours."""


@dataclass(frozen=True, slots=True)
class StoreResult:
    """What one hook call produced: the reminders, and chains it found unreadable (dropped)."""

    reminders: tuple[Reminder, ...]
    dropped: int = 0


def default_state_path(environ: Mapping[str, str], home: str) -> str:
    """Return ``$REPEAT_GUARD_STATE``, else ``$XDG_STATE_HOME/repeat-guard/state.sqlite3``.

    ``XDG_STATE_HOME`` defaults to ``~/.local/state``, as the XDG spec says; an empty or
    relative value is ignored, as the spec asks.
    """
    explicit = environ.get("REPEAT_GUARD_STATE")
    if explicit:
        return explicit
    base = environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(home, ".local", "state")
    return os.path.join(base, "repeat-guard", "state.sqlite3")


def open_store(path: str, busy_timeout: float = BUSY_TIMEOUT) -> sqlite3.Connection:
    """Open (creating when missing) the store at ``path``; raise ``CorruptStore`` if it is not one.

    Missing directories are created 0700 and a missing file 0600; SQLite gives its WAL and
    shared-memory files the database file's mode. Other ``sqlite3.Error``s and ``OSError``s
    (a read-only directory, a locked file) propagate.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    connection = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
    try:
        _prepare(connection)
    except BaseException:
        connection.close()
        raise
    return connection


def _prepare(connection: sqlite3.Connection) -> None:
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        # No fsync: with NORMAL, the checkpoint each hook process runs as the store's last
        # connection costs two fsyncs (16-19 ms measured here, the largest cost of a hook
        # call). A process crash still loses nothing; an OS crash may lose the last calls or
        # corrupt the file, which is then set aside. Advisory counts are worth no more.
        connection.execute("PRAGMA synchronous=OFF")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            # Several first hooks may race here; the schema statements are idempotent.
            connection.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA:
                connection.execute(statement)
            connection.execute("COMMIT")
        elif version != SCHEMA_VERSION:
            # Another version's store: leave it alone (the hook fails open).
            raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
    except sqlite3.DatabaseError as error:
        _raise_if_corrupt(error)
        raise


def _raise_if_corrupt(error: sqlite3.DatabaseError) -> None:
    if getattr(error, "sqlite_errorcode", None) in _CORRUPT_CODES:
        raise CorruptStore(error.sqlite_errorname) from error


def set_aside(path: str, now: float) -> str:
    """Rename the store at ``path`` (and its WAL files) aside; return the new name."""
    aside = f"{path}.corrupt-{int(now)}-{os.getpid()}"
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.replace(path + suffix, aside + suffix)
    os.replace(path, aside)
    return aside


def apply_action(
    connection: sqlite3.Connection,
    config: GuardConfig,
    action: AgentEvent | SessionEnded,
    now: float,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
) -> StoreResult:
    """Apply ``action`` to the stored chains in one ``BEGIN IMMEDIATE`` transaction.

    Returns the reminders the core produced. A chain whose row does not decode is treated as
    absent (and counted in ``dropped``). Raises ``sqlite3.Error`` when the store cannot be
    read or written; nothing is changed then.
    """
    connection.execute("BEGIN IMMEDIATE")
    try:
        result = _apply(connection, config, action, now)
        connection.execute("DELETE FROM chains WHERE seen < ?", (now - expire_after,))
        connection.execute("COMMIT")
    except sqlite3.DatabaseError as error:
        _rollback(connection)
        _raise_if_corrupt(error)
        raise
    except BaseException:
        _rollback(connection)
        raise
    return result


def _rollback(connection: sqlite3.Connection) -> None:
    # Closing the connection rolls back too, if a broken file refuses even this.
    with contextlib.suppress(sqlite3.Error):
        connection.execute("ROLLBACK")


def _apply(
    connection: sqlite3.Connection,
    config: GuardConfig,
    action: AgentEvent | SessionEnded,
    now: float,
) -> StoreResult:
    session = action.session
    if isinstance(action, SessionEnded):
        agents = [row[0] for row in connection.execute(_SELECT_AGENTS, (session,))]
    else:
        agents = [action.event.agent or session]
    chains, dropped = _load(connection, session, agents)
    state = GuardState.from_chains(config, chains)
    reminders: tuple[Reminder, ...] = ()
    if isinstance(action, SessionEnded):
        # The end of a session disposes of every agent in it, one event each.
        for agent in agents:
            state, _ = reduce(state, AgentDisposed(agent))
    else:
        state, reminders = reduce(state, action.event)
    _save(connection, session, agents, state, now)
    return StoreResult(reminders, dropped)


_SELECT_AGENTS = "SELECT agent FROM chains WHERE session = ?"


def _load(
    connection: sqlite3.Connection, session: str, agents: list[str]
) -> tuple[dict[str, Chain], int]:
    chains: dict[str, Chain] = {}
    dropped = 0
    for agent in agents:
        row = connection.execute(
            "SELECT chain FROM chains WHERE session = ? AND agent = ?", (session, agent)
        ).fetchone()
        if row is None:
            continue
        chain = _decode(row[0])
        if chain is None:
            dropped += 1
        else:
            chains[agent] = chain
    return chains, dropped


def _decode(text: object) -> Chain | None:
    try:
        raw: object = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return None
    chain: Chain | None = decode_chain(raw).value_or(None)
    return chain


def _save(
    connection: sqlite3.Connection,
    session: str,
    agents: list[str],
    state: GuardState,
    now: float,
) -> None:
    for agent in agents:
        chain = state.chain(agent)
        if chain is None:
            connection.execute(
                "DELETE FROM chains WHERE session = ? AND agent = ?", (session, agent)
            )
        else:
            connection.execute(
                "INSERT OR REPLACE INTO chains (session, agent, chain, seen) VALUES (?, ?, ?, ?)",
                (session, agent, json.dumps(encode_chain(chain), ensure_ascii=False), now),
            )
