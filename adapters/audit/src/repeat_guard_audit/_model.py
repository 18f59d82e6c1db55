"""The values an audit passes between its worker processes and its renderers.

They are plain named tuples of core values and strings so that they pickle cheaply across a
process pool or a Dask cluster.
"""

from __future__ import annotations

from typing import NamedTuple

from repeat_guard import GuardConfig, SessionAudit, Waste

__all__ = ["AuditSettings", "FileAudit", "FileJob", "Problem"]


class AuditSettings(NamedTuple):
    """What every worker needs besides the file: the guard's configuration, ``since`` (a
    ``YYYY-MM-DD`` day: calls before it are replayed but not counted) and how many worst runs
    and sessions to keep."""

    config: GuardConfig
    since: str | None = None
    keep: int = 10


class FileJob(NamedTuple):
    """One file to audit: its path, the format to read it as (``None``: no reader knows it)
    and its size when listed."""

    path: str
    format: str | None
    size: int


class Problem(NamedTuple):
    """A diagnostic as the audit reports it: ``FILE:LINE: message``."""

    file: str
    line: int
    message: str
    severity: str = "error"


class FileAudit(NamedTuple):
    """One file's result: its sessions (the core's ``SessionAudit``, each read in the file's
    ``format``), their merged counts (with ``files == 1``, the file's bytes and diagnostics)
    and the first diagnostics, ``waste.diagnostics`` counting all."""

    file: str
    format: str | None
    sessions: tuple[SessionAudit, ...]
    waste: Waste
    problems: tuple[Problem, ...]
