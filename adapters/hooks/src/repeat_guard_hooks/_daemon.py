"""The resident guard: one process per user and state file that keeps the core loaded.

A hook process costs an interpreter, the core's imports and a store opened and closed (the
close checkpoints the WAL) for every tool call. The resident guard pays those once: it answers
hook calls on a Unix socket beside the state (``<state>.sock``, 0600 in the 0700 directory; the
protocol is ``repeat_guard_hookcall``'s) and, when ``install --http`` wrote ``<state>.http``,
on HTTP at 127.0.0.1 for hosts with http hooks. Each call runs the same ``run_hook`` a hook
process runs, with the store's connection kept open between calls (``_Keeper``), so it answers
exactly what ``repeat-guard hook DIALECT`` answers for the same input.

SQLite stays the store of record: every call is its own ``BEGIN IMMEDIATE`` transaction,
committed before the answer is sent, and nothing is cached between calls, so a guard killed at
any moment loses nothing, and hook processes and the guard can serve the same agents side by
side (their transactions queue on SQLite's lock).

Started on demand, gone when idle: a hook process that finds no guard handles its call itself
and starts one for the next (``repeat_guard_hookcall.start_daemon``); the lock ``<state>.lock``
keeps it to one. The guard exits after ``idle`` seconds without a call, when asked (``Q``),
when its socket is removed or replaced, and when its state file is replaced by another (one it
did not open: it would otherwise go on counting in a file nobody reads)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from repeat_guard import PRESETS
from repeat_guard_hookcall import (
    ACCEPTED,
    DECLINED,
    INPUT_LIMIT,
    SOCKET_PATH_LIMIT,
    DaemonPaths,
    daemon_paths,
    encode_answer,
)

from ._dialects import DIALECTS, Dialect
from ._run import HookOptions, HookOutcome, log_line, run_hook
from ._store import make_private_folders, open_store

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

__all__ = [
    "DEFAULT_IDLE",
    "REQUEST_LIMIT",
    "Daemon",
    "HttpSettings",
    "read_http_settings",
    "serve",
]

DEFAULT_IDLE = 300.0
"""Seconds without a call after which the guard exits."""
REQUEST_LIMIT = INPUT_LIMIT + (1 << 16)
"""Bytes a request may hold: a hook event past ``INPUT_LIMIT`` (which ``run_hook`` stands aside
for, as a hook process does) and the socket request's line before it. A larger request is
declined unread past this (on the socket the hook process then handles the call itself; on
HTTP it is answered 413)."""
_READ_TIMEOUT = 2.0  # seconds a client may take to send its request
_TICK = 1.0  # seconds between looks at the idle time, the socket and the state file


class HttpSettings(NamedTuple):
    """What ``<state>.http`` holds: the port on 127.0.0.1 and the secret a request must send."""

    port: int
    secret: str


def read_http_settings(path: str) -> HttpSettings | str | None:
    """The HTTP settings in ``path``; ``None`` when there is no such file; or what is wrong."""
    try:
        with open(path, "rb") as stream:
            data = json.loads(stream.read(1 << 16))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        return f"cannot read {path}: {type(error).__name__}"
    port, secret = (data.get(key) if isinstance(data, dict) else None for key in ("port", "secret"))
    if not isinstance(port, int) or not 0 < port < 65536 or not isinstance(secret, str):
        return f"{path} holds no port and secret"
    if len(secret) < 16:
        return f"{path} holds a secret too short to be one"
    return HttpSettings(port, secret)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


class _Keeper:
    """One connection to the store, kept open between calls (a ``StoreKeeper``).

    Nothing read is kept: each call reads its rows in its own transaction, so a write by any
    other process is seen. The connection is dropped when a call fails with it, and a new one
    is opened when the file at the path is no longer the one it was opened on."""

    def __init__(self) -> None:
        self._connection: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None

    def open(self, path: str, busy_timeout: float) -> sqlite3.Connection:
        if self._connection is not None and _identity(path) == self._identity:
            return self._connection
        self.close()
        connection = open_store(path, busy_timeout, shared=True)
        self._connection, self._identity = connection, _identity(path)
        return connection

    def release(self, connection: sqlite3.Connection) -> None:
        pass  # kept for the next call

    def discard(self, connection: sqlite3.Connection) -> None:
        self.close()

    def replaced(self, path: str) -> bool:
        """Whether the file at ``path`` is no longer the one the kept connection is on."""
        return self._connection is not None and _identity(path) != self._identity

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection = self._identity = None


class Daemon:
    """The guard of one state file: its calls, its keeper and why it should stop."""

    def __init__(self, state: str, idle: float, clock: Callable[[], float] = time.monotonic):
        self.state = os.path.abspath(state)
        self.paths: DaemonPaths = daemon_paths(self.state)
        self.idle = idle
        self.clock = clock
        self.started = clock()
        self.last_call = self.started
        self.calls = 0
        self.http_port: int | None = None
        self.stop_reason: str | None = None
        self._keeper = _Keeper()
        self._lock = threading.Lock()

    def hook(
        self,
        dialect: Dialect,
        config: str | None,
        expire_days: float | None,
        data: bytes,
        accept: Callable[[], None] = lambda: None,
        preset: str | None = None,
    ) -> HookOutcome | None:
        """Run one hook call as ``repeat-guard hook`` would (``preset``: its ``--preset``);
        ``None`` when the state file was replaced (nothing is done and the guard stops: the call
        is the caller's to handle). ``accept`` is called once the call is sure to run, just
        before it does."""
        options = HookOptions(dialect, self.state, config, stores=self._keeper, preset=preset)
        if expire_days is not None:
            options = options._replace(expire_after=expire_days * 86400.0)
        with self._lock:
            self.last_call = self.clock()
            if self._keeper.replaced(self.state):
                self.stop("its state file was replaced")
                return None
            accept()
            self.calls += 1
            return run_hook(options, data, time.time())

    def stop(self, reason: str) -> None:
        """Ask the guard to stop (it does at its next look), saying why."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def why_stop(self, socket_identity: tuple[int, int] | None) -> str | None:
        """Why the guard should stop now, or ``None``."""
        with self._lock:
            if self.stop_reason is None and self._keeper.replaced(self.state):
                self.stop("its state file was replaced")
            if self.stop_reason is None and self.clock() - self.last_call >= self.idle:
                self.stop(f"idle for {self.idle:g} s")
        if self.stop_reason is None and _identity(self.paths.socket) != socket_identity:
            self.stop("its socket was removed or replaced")
        return self.stop_reason

    def status(self) -> str:
        """What ``daemon status`` prints about this guard."""
        now = self.clock()
        http = "off" if self.http_port is None else f"127.0.0.1:{self.http_port}"
        return (
            f"pid {os.getpid()}\nstate {self.state}\nsocket {self.paths.socket}\nhttp {http}\n"
            f"calls {self.calls}\nup {now - self.started:.0f} s\n"
            f"idle {now - self.last_call:.0f} s (exits after {self.idle:g} s)\n"
        )

    def close(self) -> None:
        with self._lock:
            self._keeper.close()

    def log(self, reason: str) -> None:
        log_line(self.state, "daemon", reason, time.time())

    def answer_socket(self, connection: socket.socket) -> None:
        """Read one request from ``connection`` and answer it (see ``repeat_guard_hookcall``)."""
        request = _read_request(connection)
        kind = request[:1]
        if kind == b"S":
            connection.sendall(ACCEPTED + self.status().encode())
        elif kind == b"Q":
            connection.sendall(ACCEPTED)
            self.stop("asked to stop")
        elif kind == b"H":
            self._answer_hook(connection, request)
        else:
            connection.sendall(DECLINED)

    def _answer_hook(self, connection: socket.socket, request: bytes) -> None:
        head, _, data = request[1:].partition(b"\n")
        parsed = _hook_head(head)
        # Once accepted, the call is ours: the client never runs it again.
        outcome = None
        if parsed is not None:
            dialect, config, expire_days, preset = parsed
            outcome = self.hook(dialect, config, expire_days, data, _accept(connection), preset)
        if outcome is None:
            connection.sendall(DECLINED)
            return
        stderr = outcome.stderr.encode("utf-8", "backslashreplace")
        connection.sendall(encode_answer(outcome.status, outcome.stdout, stderr))


def _accept(connection: socket.socket) -> Callable[[], None]:
    return lambda: connection.sendall(ACCEPTED)


def _hook_head(head: bytes) -> tuple[Dialect, str | None, float | None, str | None] | None:
    fields = head.decode("utf-8", "surrogateescape").split("\0")
    if len(fields) != 4:
        return None
    name, config, expire, preset = fields
    dialect = DIALECTS.get(name)
    if dialect is None or (config and not os.path.isabs(config)):
        return None
    if preset and preset not in PRESETS:
        return None  # the client's argparse says what is wrong
    try:
        expire_days = float(expire) if expire else None
    except ValueError:
        return None
    return dialect, config or None, expire_days, preset or None


def _read_request(connection: socket.socket) -> bytes:
    """The request on ``connection``, up to its end; empty when it is cut off, too slow or
    larger than ``REQUEST_LIMIT``."""
    connection.settimeout(_READ_TIMEOUT)
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := connection.recv(1 << 16):
            size += len(chunk)
            if size > REQUEST_LIMIT:
                return b""
            chunks.append(chunk)
    except OSError:
        return b""
    return b"".join(chunks)


def _take_lock(path: str) -> int | None:
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    os.ftruncate(descriptor, 0)
    os.write(descriptor, f"{os.getpid()}\n".encode())
    return descriptor


def _listen(listener: socket.socket, path: str) -> None:
    # Made 0600 at birth (the umask), in the state's 0700 directory; a socket left by a guard
    # that was killed is removed first (the lock says none is using it).
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    mask = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(mask)
    listener.listen(128)


def serve(
    state: str,
    idle: float = DEFAULT_IDLE,
    *,
    tick: float = _TICK,
    ready: Callable[[Daemon], None] | None = None,
) -> str:
    """Serve hook calls for ``state`` until there is reason to stop; return the reason.

    Returns at once when another guard holds the lock (it serves ``state``) or the socket's
    path is too long for one. ``ready`` is called once the guard listens."""
    daemon = Daemon(state, idle)
    paths = daemon.paths
    if len(os.fsencode(paths.socket)) > SOCKET_PATH_LIMIT:
        return "its socket's path is too long"
    make_private_folders(os.path.dirname(paths.socket))
    lock = _take_lock(paths.lock)
    if lock is None:
        return "another guard serves this state"
    http: ThreadingHTTPServer | None = None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            _listen(listener, paths.socket)
            socket_identity = _identity(paths.socket)
            http = _start_http(daemon)
            if ready is not None:
                ready(daemon)
            reason = _loop(daemon, listener, socket_identity, tick)
    except OSError as error:
        reason = f"cannot listen on {paths.socket}: {error.strerror}"
    finally:
        if http is not None:
            http.shutdown()
            http.server_close()
        daemon.close()
        os.close(lock)
    daemon.log(f"stopped: {reason}")
    return reason


def _loop(
    daemon: Daemon,
    listener: socket.socket,
    socket_identity: tuple[int, int] | None,
    tick: float,
) -> str:
    while True:
        readable, _, _ = select.select([listener], [], [], tick)
        if readable:
            connection, _ = listener.accept()
            with connection, contextlib.suppress(OSError):
                daemon.answer_socket(connection)
        reason = daemon.why_stop(socket_identity)
        if reason is not None:
            if _identity(daemon.paths.socket) == socket_identity:
                with contextlib.suppress(OSError):
                    os.unlink(daemon.paths.socket)
            return reason


def _start_http(daemon: Daemon) -> ThreadingHTTPServer | None:
    settings = read_http_settings(daemon.paths.http)
    if settings is None:
        return None
    if isinstance(settings, str):
        daemon.log(f"no HTTP: {settings}")
        return None
    from ._http import make_server  # noqa: PLC0415  # only with http hooks installed

    try:
        server = make_server(daemon, settings)
    except OSError as error:
        daemon.log(f"no HTTP: cannot listen on 127.0.0.1:{settings.port}: {error.strerror}")
        return None
    daemon.http_port = server.server_address[1]
    # Its poll interval is how long stopping waits for it: the lock, and the port, go after.
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    return server
