"""The one exception the command raises for a user's mistake; ``main`` turns it into status 2."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """A bad argument, an unreadable file or an invalid configuration: exit status 2."""
