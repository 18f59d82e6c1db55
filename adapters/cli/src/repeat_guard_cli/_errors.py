"""What every subcommand shares without importing anything: the exit statuses, the one
exception for a user's mistake (``main`` turns it into status 2), and ``silence_stdout`` for an
output that failed."""

from __future__ import annotations

import sys

from repeat_guard_hookcall import silence

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_CHECK_MISMATCH",
    "EXIT_DIAGNOSTICS",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "silence_stdout",
    "worst",
]

EXIT_OK = 0
EXIT_CHECK_MISMATCH = 1
EXIT_USAGE = 2
EXIT_DIAGNOSTICS = 3
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug in the command, never mistaken for a --check mismatch
EXIT_BROKEN_PIPE = 141  # what a shell reports for a process killed by SIGPIPE
EXIT_INTERRUPTED = 130  # what a shell reports for a process killed by SIGINT (Ctrl-C)
# When several outcomes apply, the command exits with the most severe one.
_SEVERITY = {EXIT_OK: 0, EXIT_DIAGNOSTICS: 1, EXIT_CHECK_MISMATCH: 2, EXIT_USAGE: 3}


def worst(*statuses: int) -> int:
    """Return the most severe of ``statuses``."""
    return max(statuses, key=_SEVERITY.__getitem__)


class UsageError(Exception):
    """A bad argument, an unreadable file or an invalid configuration: exit status 2."""


def silence_stdout() -> None:
    """Point stdout at /dev/null, after its reader went away or writing to it failed, so that
    the interpreter's final flush of what is still buffered cannot fail a second time."""
    silence(sys.stdout)
