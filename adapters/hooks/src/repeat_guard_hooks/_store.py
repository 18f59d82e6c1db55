"""The guard's state between hook processes: one SQLite row per agent.

Every hook call is a new process and parallel tool calls run their hooks at the same time, so
each call is one ``BEGIN IMMEDIATE`` transaction: read the agents it needs, ``reduce``, write
back what the core returned, commit. Writers queue on SQLite's lock (WAL mode, a busy timeout),
so concurrent calls on one agent are serialised and none of their counts is lost.

A row holds the core's own encodings of the agent's chain (``encode_chain``, which keeps a
fixed-size digest instead of long argument text) and of what the opt-in policies remember about
it (``encode_memory``; NULL while they remember nothing, so with every policy off a row is just
its chain). A memory only means something under the policy settings it was made with (its
budget counts are per configured budget, its cycle runs per period), so the row also records
those settings (``memory_for``); after the configuration changed, the memory is dropped and the
policies start afresh, while the chain is kept. Rows of agents not seen for ``expire_after``
seconds are dropped on every write, so the file cannot grow without bound. The file is created
0600 in a directory created 0700: it describes what people's agents did.

Schema versions: 1 held chains only (table ``chains``); 2 is the table ``agents`` with the
memory. A version-1 file is migrated in place, in one transaction, by the first hook that opens
it (its chains are kept, with no memory); a file of any other version is left alone and the hook
fails open.

A host that hears a call's reminders only after the call (``carry``: Gemini CLI) gets them
from the store: the ``call`` event's reminders wait in the table ``pending`` (made by the first
hook that needs it; no other host's hook ever touches it) until that agent's ``after`` event
takes them. They belong to the agent's current chain: its prompt, its disposal and its session's
end drop them, and a refused call's go with its refusal instead.

Durability is traded for speed (``synchronous=OFF``, see ``_prepare``): a hook runs before the
agent may go on, and losing a few counts to a power cut costs at most a late reminder.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, NamedTuple, Protocol, TypeVar, cast

from repeat_guard import (
    Admit,
    AgentDisposed,
    Chain,
    CodecError,
    Deny,
    GuardConfig,
    GuardState,
    Memory,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    attempt,
    decode_chain_or_error,
    decode_memory_or_error,
    encode_chain,
    encode_memory,
    encode_memory_settings,
    memory_under,
    reduce,
)
from repeat_guard_hookcall import default_state_path

from ._dialects import AfterCall, AgentEvent, SessionEnded
from ._text import escape_lone_surrogates

__all__ = [
    "BUSY_TIMEOUT",
    "DEFAULT_EXPIRE_AFTER",
    "FRESH_STORES",
    "SCHEMA_VERSION",
    "CorruptStore",
    "ForeignStore",
    "StoreKeeper",
    "StoreResult",
    "apply_action",
    "default_state_path",
    "make_private_folders",
    "open_store",
    "set_aside",
    "step_agent",
]

T = TypeVar("T")

SCHEMA_VERSION = 2
DEFAULT_EXPIRE_AFTER = 7 * 24 * 3600.0
# Seconds a hook waits for another hook's transaction before giving up (and failing open).
BUSY_TIMEOUT = 5.0

# One row per agent holding a chain, a memory or both (the other column NULL).
_CREATE = (
    "CREATE TABLE IF NOT EXISTS agents (session TEXT NOT NULL, agent TEXT NOT NULL, "
    "chain TEXT, memory TEXT, memory_for TEXT, seen REAL NOT NULL, "
    "PRIMARY KEY (session, agent)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS agents_by_seen ON agents (seen)",
)
_MIGRATIONS = {
    0: _CREATE,
    1: (
        *_CREATE,
        "INSERT INTO agents (session, agent, chain, seen) "
        "SELECT session, agent, chain, seen FROM chains",
        "DROP TABLE chains",
    ),
}
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


class CorruptStore(sqlite3.DatabaseError):
    """The state file is not a usable SQLite database of ours."""


class ForeignStore(sqlite3.DatabaseError):
    """The store is of a schema version this guard cannot read (another, newer guard's): it is
    left exactly as it is, not a byte written, and the hook stands aside."""

    def __init__(self, version: int) -> None:
        super().__init__(
            f"state store of schema version {version}, which this guard does not know (it "
            f"writes {SCHEMA_VERSION}), left unchanged"
        )
        self.version = version


class StoreResult(NamedTuple):  # not a dataclass: see _dialects
    """What one hook call produced: the reminders; ``denied``, the reason the core's ``admit``
    refused the call before it ran (``None`` when it may run); and agents' rows found unreadable
    (``dropped``, each agent starting afresh)."""

    reminders: tuple[Reminder, ...]
    dropped: int = 0
    denied: str | None = None


def make_private_folders(directory: str) -> None:
    """Create ``directory`` and every missing folder above it, each 0700 whatever the umask
    (``os.makedirs`` gives its mode to the last folder only, the others the umask's; XDG asks
    0700 of every folder it creates). Folders that exist are left as they are. Raises
    ``OSError`` when one cannot be made."""
    missing: list[str] = []
    folder = os.path.abspath(directory)
    while not os.path.isdir(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)  # "/" is a folder: the walk ends there
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            if os.path.isdir(folder):  # another hook made it meanwhile
                continue
            raise
        # mkdir gives 0o700 & ~umask: a umask that takes the owner's bits would leave a folder
        # the guard itself cannot write in.
        os.chmod(folder, 0o700)


def open_store(
    path: str, busy_timeout: float = BUSY_TIMEOUT, *, shared: bool = False
) -> sqlite3.Connection:
    """Open (creating when missing) the store at ``path``; raise ``CorruptStore`` if it is not one.

    Missing directories are created 0700 (``make_private_folders``) and a missing file 0600;
    SQLite gives its WAL and shared-memory files the database file's mode. Other
    ``sqlite3.Error``s and ``OSError``s (a read-only directory, a locked file) propagate.
    ``shared``: the connection may be used from other threads than this one (one at a time:
    the caller's to ensure).
    """
    make_private_folders(os.path.dirname(os.path.abspath(path)))
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    connection = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=not shared
    )
    try:
        _prepare(connection)
    except BaseException:
        connection.close()
        raise
    return connection


class StoreKeeper(Protocol):
    """Where a hook call gets its connection to the store, and gives it back.

    A hook process opens the store for its one call and closes it (``FRESH_STORES``); the
    resident guard keeps one open between calls (``_daemon``)."""

    def open(self, path: str, busy_timeout: float) -> sqlite3.Connection:
        """A connection to the store at ``path``, as ``open_store`` gives one."""
        ...

    def release(self, connection: sqlite3.Connection) -> None:
        """The call that had ``connection`` is done with it."""
        ...

    def discard(self, connection: sqlite3.Connection) -> None:
        """The call that had ``connection`` failed: it must not be used again."""
        ...


class _FreshStores:
    """A connection for each call, closed after it."""

    def open(self, path: str, busy_timeout: float) -> sqlite3.Connection:
        return open_store(path, busy_timeout)

    def release(self, connection: sqlite3.Connection) -> None:
        connection.close()

    discard = release


FRESH_STORES: StoreKeeper = _FreshStores()


def _prepare(connection: sqlite3.Connection) -> None:
    try:
        # The version is read before anything is written: switching a store of another
        # version to WAL would already change its file.
        version = _version(connection)
        _check_known(version)
        connection.execute("PRAGMA journal_mode=WAL")
        # No fsync: with NORMAL, the checkpoint each hook process runs as the store's last
        # connection costs two fsyncs (16-19 ms measured here, the largest cost of a hook
        # call). A process crash still loses nothing; an OS crash may lose the last calls or
        # corrupt the file, which is then set aside. Advisory counts are worth no more.
        connection.execute("PRAGMA synchronous=OFF")
        if version != SCHEMA_VERSION:
            _migrate(connection)
    except sqlite3.DatabaseError as error:
        _raise_if_corrupt(error)
        raise


def _version(connection: sqlite3.Connection) -> int:
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    return version


def _migrate(connection: sqlite3.Connection) -> None:
    # Several first hooks may race here: the version is read again under the write lock.
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = _version(connection)
        if version != SCHEMA_VERSION:
            _check_known(version)
            for statement in _MIGRATIONS[version]:
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        _rollback(connection)
        raise


def _check_known(version: int) -> None:
    if version != SCHEMA_VERSION and version not in _MIGRATIONS:
        raise ForeignStore(version)


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
    action: AgentEvent | SessionEnded | AfterCall,
    now: float,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
    *,
    carry: bool = False,
) -> StoreResult:
    """Apply ``action`` to the stored agents in one ``BEGIN IMMEDIATE`` transaction.

    A call is first put to the core's ``admit``: when it is refused, the attempt is reduced as
    a denied call (it counts like any other) and the reason comes back in ``denied``. Returns
    that and the reminders the core produced. A row whose chain or memory does not decode is
    treated as absent (and counted in ``dropped``). Raises ``sqlite3.Error`` when the store
    cannot be read or written; nothing is changed then.

    With ``carry``, the reminders of a call that may run are kept for the agent's ``AfterCall``
    instead, which returns them (see the module's notes), before those of the result it
    brings (``AfterCall.returned``), which is reduced like any event.
    """

    def body() -> StoreResult:
        if isinstance(action, AfterCall):  # only a carrying host has one
            _prepare_pending(connection, now, expire_after)
            waiting = _take_pending(connection, action.session, action.agent)
            if action.returned is None:
                return StoreResult(waiting)
            result = _apply(connection, config, AgentEvent(action.session, action.returned), now)
            return result._replace(reminders=waiting + result.reminders)
        result = _apply(connection, config, action, now)
        if not carry:
            return result
        _prepare_pending(connection, now, expire_after)
        return _carry(connection, action, result, now)

    return _transaction(connection, now, expire_after, body)


_CREATE_PENDING = (
    "CREATE TABLE IF NOT EXISTS pending (session TEXT NOT NULL, agent TEXT NOT NULL, "
    "reminders TEXT NOT NULL, seen REAL NOT NULL, PRIMARY KEY (session, agent)) WITHOUT ROWID"
)


def _prepare_pending(connection: sqlite3.Connection, now: float, expire_after: float) -> None:
    connection.execute(_CREATE_PENDING)
    connection.execute("DELETE FROM pending WHERE seen < ?", (now - expire_after,))


def _carry(
    connection: sqlite3.Connection,
    action: AgentEvent | SessionEnded,
    result: StoreResult,
    now: float,
) -> StoreResult:
    # A call that may run leaves its reminders for its AfterCall; an event that ends or restarts
    # the agent's chain drops those it left before.
    if isinstance(action, SessionEnded):
        connection.execute("DELETE FROM pending WHERE session = ?", (action.session,))
        return result
    agent = action.event.agent or action.session
    if not isinstance(action.event, ToolCallFinished):
        if isinstance(action.event, PromptSubmitted | AgentDisposed):
            _take_pending(connection, action.session, agent)
        return result
    if result.denied is not None or not result.reminders:
        return result
    waiting = _take_pending(connection, action.session, agent) + result.reminders
    text = json.dumps([asdict(reminder) for reminder in waiting], ensure_ascii=False)
    connection.execute(
        "INSERT INTO pending (session, agent, reminders, seen) VALUES (?, ?, ?, ?)",
        (action.session, agent, escape_lone_surrogates(text), now),
    )
    return result._replace(reminders=())


def _take_pending(connection: sqlite3.Connection, session: str, agent: str) -> tuple[Reminder, ...]:
    # The agent's waiting reminders, taken out; a row that does not read gives none.
    where = (session, agent)
    row = connection.execute(
        "SELECT reminders FROM pending WHERE session = ? AND agent = ?", where
    ).fetchone()
    if row is None:
        return ()
    connection.execute("DELETE FROM pending WHERE session = ? AND agent = ?", where)
    stored = cast("list[dict[str, Any]]", _json(row[0]))  # what _carry wrote, else caught
    try:
        return tuple(Reminder(**fields) for fields in stored)
    except TypeError:  # not a list of reminders' fields
        return ()


def step_agent(
    connection: sqlite3.Connection,
    config: GuardConfig,
    agent: str,
    step: Callable[[GuardState], tuple[GuardState, T]],
    now: float,
    expire_after: float = DEFAULT_EXPIRE_AFTER,
) -> tuple[T, int]:
    """Run ``step`` on the stored state of ``agent`` in one ``BEGIN IMMEDIATE`` transaction.

    The agent is stored as its own session (as a hook stores a session's main agent), so a
    process that outlives none of its calls (a plugin's sidecar) finds the chain the last one
    left. ``step`` gets the state holding that agent alone and returns the new state, which is
    saved, and a value, returned with the number of unreadable rows dropped (0 or 1). Raises
    as ``apply_action`` does.
    """

    def body() -> tuple[T, int]:
        policies = _policy_settings(config)
        chains, memories, dropped = _load(connection, config, agent, [agent])
        state, value = step(GuardState.from_chains(config, chains, memories))
        _save(connection, agent, [agent], state, policies, now)
        return value, dropped

    return _transaction(connection, now, expire_after, body)


def _transaction(
    connection: sqlite3.Connection, now: float, expire_after: float, body: Callable[[], T]
) -> T:
    connection.execute("BEGIN IMMEDIATE")
    try:
        result = body()
        connection.execute("DELETE FROM agents WHERE seen < ?", (now - expire_after,))
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
    policies = _policy_settings(config)
    chains, memories, dropped = _load(connection, config, session, agents)
    state = GuardState.from_chains(config, chains, memories)
    reminders: tuple[Reminder, ...] = ()
    denied: str | None = None
    if isinstance(action, SessionEnded):
        # The end of a session disposes of every agent in it, one event each.
        for agent in agents:
            state, _ = reduce(state, AgentDisposed(agent))
    else:
        event = action.event
        verdict: Admit | Deny = Admit()
        if isinstance(event, ToolCallFinished):  # before the call runs
            verdict, state, reminders = attempt(state, event)
        if isinstance(verdict, Deny):
            denied = verdict.reason
        else:
            state, reminders = reduce(state, event)
    _save(connection, session, agents, state, policies, now)
    return StoreResult(reminders, dropped, denied)


_SELECT_AGENTS = "SELECT agent FROM agents WHERE session = ?"
_SELECT_ROW = "SELECT chain, memory, memory_for FROM agents WHERE session = ? AND agent = ?"
_EMPTY_MEMORY = Memory()


def _policy_settings(config: GuardConfig) -> str:
    # What a memory's meaning depends on (the core's encode_memory_settings), as text: unescaped,
    # as rows written so far hold it, but for a lone surrogate, which SQLite's UTF-8 text
    # cannot hold.
    settings = encode_memory_settings(config)
    return escape_lone_surrogates(json.dumps(settings, ensure_ascii=False))


def _load(
    connection: sqlite3.Connection,
    config: GuardConfig,
    session: str,
    agents: list[str],
) -> tuple[dict[str, Chain], dict[str, Memory], int]:
    chains: dict[str, Chain] = {}
    memories: dict[str, Memory] = {}
    dropped = 0
    for agent in agents:
        row = connection.execute(_SELECT_ROW, (session, agent)).fetchone()
        if row is None:
            continue
        stored_chain, stored_memory, memory_for = row
        chain = None if stored_chain is None else decode_chain_or_error(_json(stored_chain))
        memory = None
        if stored_memory is not None:  # the core judges whether it is of use under config
            memory = decode_memory_or_error(_json(stored_memory))
            if not isinstance(memory, CodecError):
                memory = memory_under(memory, _json(memory_for), config)
        if isinstance(chain, CodecError) or isinstance(memory, CodecError):
            dropped += 1
            continue
        if chain is not None:
            chains[agent] = chain
        if memory is not None:
            memories[agent] = memory
    return chains, memories, dropped


def _json(text: object) -> object:
    # Anything but JSON text (a blob, a number) reads as a value no decoder accepts.
    try:
        return json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return None


def _save(
    connection: sqlite3.Connection,
    session: str,
    agents: list[str],
    state: GuardState,
    policies: str,
    now: float,
) -> None:
    memories = state.memories
    for agent in agents:
        chain = state.chain(agent)
        memory = memories.get(agent)
        if memory == _EMPTY_MEMORY:
            memory = None
        if chain is None and memory is None:
            connection.execute(
                "DELETE FROM agents WHERE session = ? AND agent = ?", (session, agent)
            )
            continue
        chain_text = None if chain is None else json.dumps(encode_chain(chain))
        memory_text = memory_for = None
        if memory is not None:
            memory_text = json.dumps(encode_memory(memory))
            memory_for = policies
        connection.execute(
            "INSERT OR REPLACE INTO agents (session, agent, chain, memory, memory_for, seen) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (session, agent, chain_text, memory_text, memory_for, now),
        )
