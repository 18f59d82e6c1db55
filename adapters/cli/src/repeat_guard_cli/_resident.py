"""The ``daemon`` command: the resident guard that answers hook calls without a process each.

Only argument parsing and what is printed live here; ``repeat_guard_hooks`` does the work.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING

from repeat_guard_hookcall import daemon_command

from ._hooks import HookHelpFormatter
from ._streams import Streams
from ._subcommands import add_command

if TYPE_CHECKING:
    from ._subcommands import Commands

__all__ = ["IDLE_VARIABLE", "add_daemon_command", "run_daemon_command"]

IDLE_VARIABLE = "REPEAT_GUARD_DAEMON_IDLE"
_START_WAIT = 3.0  # seconds ``start`` waits for the guard it started to answer

_EPILOG = """\
actions:
  serve   serve in the foreground until idle (what a hook starts, detached, when it finds
          no guard running)
  start   start a guard in the background unless one is running, and wait until it answers
          (up to 3 s); prints nothing, and exits 0 even when it cannot (install --http runs it
          as a SessionStart hook)
  status  print the running guard's pid, files, HTTP port and calls; exit 1 when none runs
  stop    ask the running guard to exit

A hook call (repeat-guard hook AGENT) hands its input to the guard of its state file over a
Unix socket beside it (<state>.sock, 0600); when none answers, the hook process handles the
call itself, as the guard would, and starts one for the next call. The guard keeps the core
loaded and the store open; every call is still its own SQLite transaction, committed before
the answer, so a killed guard loses nothing and hook processes can run beside it.
$REPEAT_GUARD_DAEMON=off keeps every hook call in its own process and starts no guard.

a guard exits after --idle seconds without a call (default $REPEAT_GUARD_DAEMON_IDLE, else
  300), when its socket is removed, and when its state file is replaced.
state: --state PATH, else $REPEAT_GUARD_STATE, else $XDG_STATE_HOME/repeat-guard/state.sqlite3.
exit status: 0 done; 1 status found no guard; 2 an invalid command line.
"""


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text}")
    return value


def add_daemon_command(commands: Commands) -> None:
    """Add ``daemon`` to the command's subparsers."""
    add_command(
        commands,
        "daemon",
        "The resident guard that answers hook calls without starting a process for each.",
        _fill_daemon,
        HookHelpFormatter,
        "Run, start, look at or stop the resident guard of a state file.",
    )


def _fill_daemon(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    parser.add_argument("action", choices=("serve", "start", "status", "stop"))
    parser.add_argument("--state", metavar="PATH", help="the SQLite state file it serves")
    parser.add_argument(
        "--idle", type=_seconds, metavar="SECONDS", help="exit after this long without a call"
    )


def _idle(args: argparse.Namespace) -> float:
    from repeat_guard_hooks.resident import (  # noqa: PLC0415  # the guard's own default
        DEFAULT_IDLE,
    )

    if args.idle is not None:
        return float(args.idle)
    try:
        return _seconds(os.environ.get(IDLE_VARIABLE, ""))
    except (ValueError, argparse.ArgumentTypeError):
        return DEFAULT_IDLE


def run_daemon_command(args: argparse.Namespace, streams: Streams) -> int:
    """Run ``daemon ACTION`` as ``args`` say; return the exit status."""
    from repeat_guard_hookcall import ask_daemon, resolve_state  # noqa: PLC0415  # as _hooks
    from repeat_guard_hooks.resident import serve  # noqa: PLC0415  # as _hooks

    state = os.path.abspath(resolve_state(args.state, os.environ, os.path.expanduser("~")))
    action: str = args.action
    if action == "serve":
        serve(state, _idle(args))
        return 0
    if action == "start":
        _start(state, _idle(args))
        return 0
    reply, _ = ask_daemon(state, b"Q\n" if action == "stop" else b"S\n")
    if reply[:1] != b"+":
        print(f"no resident guard is running for {state}", file=streams.out)
        return 1 if action == "status" else 0
    if action == "stop":
        print(f"stopped the resident guard of {state}", file=streams.out)
    else:
        print(reply[1:].decode("utf-8", "replace"), end="", file=streams.out)
    return 0


def _start(state: str, idle: float) -> None:
    from repeat_guard_hookcall import ask_daemon, start_daemon  # noqa: PLC0415  # as above
    from repeat_guard_hooks import make_private_folders  # noqa: PLC0415  # as above

    if ask_daemon(state, b"S\n")[0][:1] == b"+":
        return
    make_private_folders(os.path.dirname(state))
    start_daemon(state, [*daemon_command(state), "--idle", repr(idle)])
    deadline = time.monotonic() + _START_WAIT
    while time.monotonic() < deadline:
        if ask_daemon(state, b"S\n")[0][:1] == b"+":
            return
        time.sleep(0.02)
