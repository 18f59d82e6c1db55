"""Where the guard keeps its files: the state, and beside it the resident guard's own.

Imported by the hook client, the path every tool call takes, so it imports ``os`` alone (not
even ``typing``). One resident guard (``_daemon``) serves one state file, and its files take the
state file's name with a suffix, in the state's directory (created 0700): ``<state>.sock`` its
Unix socket (0600), ``<state>.lock`` the lock that keeps it to one, ``<state>.http`` the port and
secret of its HTTP listener (0600, written by ``install --http``; no file, no HTTP).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing itself: see the package's __init__
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "SOCKET_PATH_LIMIT",
    "DaemonPaths",
    "daemon_paths",
    "default_state_path",
    "resolve_state",
]

SOCKET_PATH_LIMIT = 107
"""Bytes a Unix socket's path may hold (``sun_path`` less its NUL); a longer one gets no daemon."""


class DaemonPaths:
    """The resident guard's files for one state file (a plain class: see ``TYPE_CHECKING``)."""

    __slots__ = ("http", "lock", "socket")

    def __init__(self, socket: str, lock: str, http: str) -> None:
        self.socket = socket
        self.lock = lock
        self.http = http


def daemon_paths(state: str) -> DaemonPaths:
    """Return the resident guard's files beside ``state`` (made absolute)."""
    base = os.path.abspath(state)
    return DaemonPaths(f"{base}.sock", f"{base}.lock", f"{base}.http")


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


def resolve_state(explicit: str | None, environ: Mapping[str, str], home: str) -> str:
    """Return the state path: ``explicit``, else the environment's or the XDG default."""
    return explicit if explicit is not None else default_state_path(environ, home)
