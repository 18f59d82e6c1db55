"""The one exception the command raises for a user's mistake; ``main`` turns it into status 2."""

from __future__ import annotations

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_USAGE", "UsageError"]

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # what a shell reports for a process killed by SIGPIPE


class UsageError(Exception):
    """A bad argument, an unreadable file or an invalid configuration: exit status 2."""
