"""The hook's way to the resident guard: the socket protocol, and starting the guard on demand.

Every tool call takes this path, so it imports what passing bytes needs and nothing more
(``os``, the C ``_socket`` module only to ask a guard, ``fcntl`` only to start one): no core,
no SQLite, no JSON, no argparse. A hook process sends the guard its command line's meaning and
the bytes it read on stdin, and writes back what the guard answers: the same stdout, stderr and
exit status the process would have produced itself, since the guard runs the same ``run_hook``.

The protocol, on the guard's Unix socket (``<state>.sock``, 0600 in the 0700 state directory):
the client sends one request and shuts its side down; the guard answers and closes.

- ``H`` dialect ``\\0`` config ``\\0`` expire-days ``\\0`` preset ``\\n`` then the hook input:
  run one hook call (an empty config, expire-days or preset: none given). The guard answers
  ``+`` as soon as it has the whole request, before it touches the store, then ``status \\0
  len(stdout) \\n`` stdout stderr. Or ``-``: declined (its state file was replaced and it is
  leaving, or the request names no host or preset it knows; a guard of an older release
  declines the four-field head too), nothing done.
- ``S\\n``: status; ``+`` then lines of text. ``Q\\n``: stop; ``+``, then it exits.

So a client knows whether a call was handled: nothing or ``-`` back means the guard did nothing
and the call is the client's to handle; ``+`` with a whole answer is the answer; ``+`` alone
(the guard killed during the call) means the call may or may not have been counted, and the
hook fails open rather than risk counting it twice.
"""

from __future__ import annotations

import os

from ._paths import SOCKET_PATH_LIMIT, daemon_paths

__all__ = [
    "ACCEPTED",
    "ACK_TIMEOUT",
    "ANSWER_TIMEOUT",
    "DECLINED",
    "ask_daemon",
    "decode_answer",
    "encode_answer",
    "encode_hook_request",
    "hook_via_daemon",
    "start_daemon",
]

ACCEPTED = b"+"
DECLINED = b"-"
ACK_TIMEOUT = 1.0
"""Seconds a client waits for the guard to take its request before handling the call itself."""
ANSWER_TIMEOUT = 8.0
"""Seconds a client waits for the answer once the guard took the call: above the store's busy
timeout (the guard fails open by itself first), below the hosts' hook timeout."""


TYPE_CHECKING = False  # not typing itself: see the package's __init__
if TYPE_CHECKING:
    DaemonAnswer = tuple[int, bytes, bytes]
    """What the guard answered for a hook call: the hook process's status, stdout and stderr."""


def encode_hook_request(
    dialect: str,
    config: str | None,
    expire_days: float | None,
    data: bytes,
    preset: str | None = None,
) -> bytes:
    """The ``H`` request for one hook call (``config`` an absolute path, or ``None``;
    ``preset`` ``None``: the host's own)."""
    fields = (
        dialect,
        config or "",
        "" if expire_days is None else repr(expire_days),
        preset or "",
    )
    return b"H" + "\0".join(fields).encode("utf-8", "surrogateescape") + b"\n" + data


def encode_answer(status: int, stdout: bytes, stderr: bytes) -> bytes:
    """The guard's answer to an ``H`` request, after its ``+``."""
    return b"%d\0%d\n" % (status, len(stdout)) + stdout + stderr


def decode_answer(reply: bytes) -> DaemonAnswer | None:
    """The answer in ``reply`` (``+`` and what follows), or ``None`` when it is not whole."""
    head, newline, rest = reply[1:].partition(b"\n")
    status, nul, length = head.partition(b"\0")
    if not newline or not nul or not status.isdigit() or not length.isdigit():
        return None
    size = int(length)
    if len(rest) < size:
        return None
    return int(status), rest[:size], rest[size:]


def ask_daemon(
    state: str, request: bytes, ack_timeout: float = ACK_TIMEOUT
) -> tuple[bytes, str | None]:
    """Send ``request`` to the guard of ``state``; return what came back (``b""``: no guard
    answered) and why the exchange stopped short (``None``: it did not)."""
    path = daemon_paths(state).socket
    if len(os.fsencode(path)) > SOCKET_PATH_LIMIT:
        return b"", "socket path too long"
    import _socket  # noqa: PLC0415  # not with $REPEAT_GUARD_DAEMON off

    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    chunks: list[bytes] = []
    try:
        connection.settimeout(ack_timeout)
        connection.connect(path)
        connection.sendall(request)
        connection.shutdown(_socket.SHUT_WR)
        while chunk := connection.recv(1 << 16):
            if not chunks:
                connection.settimeout(ANSWER_TIMEOUT)
            chunks.append(chunk)
    except OSError as error:
        return b"".join(chunks), error.strerror or type(error).__name__
    finally:
        connection.close()
    return b"".join(chunks), None


def hook_via_daemon(state: str, request: bytes) -> DaemonAnswer | str | None:
    """Have the guard of ``state`` run the hook call ``request``: its answer; or ``None`` when
    it did nothing (none is running, it declined), and the call is the caller's to handle; or
    why the call's outcome is unknown (the guard took it and went away)."""
    reply, failure = ask_daemon(state, request)
    if reply[:1] != ACCEPTED:
        return None
    answer = decode_answer(reply)
    if answer is None:
        return f"the resident guard took the call and gave no answer ({failure or 'cut short'})"
    return answer


def start_daemon(state: str, command: list[str]) -> int | None:
    """Start ``command`` (which serves ``state``) detached, in a session of its own, unless a
    guard holds the lock of ``state`` already (running or starting); return its process id, or
    ``None`` when none was started. Never raises."""
    paths = daemon_paths(state)
    if len(os.fsencode(paths.socket)) > SOCKET_PATH_LIMIT:
        return None
    import fcntl  # noqa: PLC0415  # only when no guard answered

    try:
        descriptor = os.open(paths.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(descriptor)  # the lock goes with it: the guard takes it for itself
        return os.posix_spawn(
            command[0],
            command,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_DUP2, 1, 2),
            ],
            setsid=True,
        )
    except OSError:
        return None  # held (a guard is there or coming), or it cannot be started: no matter
