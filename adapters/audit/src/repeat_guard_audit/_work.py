"""The per-file work: open one transcript safely, sniff its format unless the job names it,
read it with its format's reader, fold it.

Total by design: whatever a file holds or whatever happens to it (it vanished, it is a FIFO,
it is not readable, its reader has a bug), the result is a ``FileAudit``, at worst carrying one
diagnostic (none for a file a walk found that is not read: not a transcript, not a regular
file, or gone before its turn; that one is counted and named apart, as is one last written
before ``since``), so one bad file never stops an audit of thousands. Files are opened and
sniffed by ``open_input``, as the replay opens them. The functions here are module-level and
take picklable values, so a process pool or a Dask cluster can run them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime

from repeat_guard_transcripts import (
    READERS,
    Diagnostic,
    Input,
    PassedOver,
    Refused,
    bounded_lines,
    collector_paused,
    open_input,
    read_items,
)

from ._fold import fold_file
from ._model import AuditSettings, FileAudit, FileJob

__all__ = ["audit_batch", "audit_file"]


def audit_batch(batch: Sequence[FileJob], settings: AuditSettings) -> list[FileAudit]:
    """Return the audit of each file of ``batch``, in order."""
    return [audit_file(job, settings) for job in batch]


def audit_file(job: FileJob, settings: AuditSettings) -> FileAudit:
    """Return the audit of the file ``job`` names; never raises for anything the file holds."""
    if job.problem is not None:
        problems = (Diagnostic(job.path, 0, job.problem),)
        return FileAudit(job.path, None, (), problems, files=0, diagnostics=1)
    if job.format is not None and job.format not in READERS:
        return _unreadable(job, f"no reader for format {job.format!r}")

    def wanted(status: os.stat_result) -> bool:
        return settings.since is None or _day_of(status.st_mtime) >= settings.since

    with open_input(job.path, walked=job.walked, format=job.format, wanted=wanted) as opened:
        match opened:
            case PassedOver(why="unwanted"):  # last written before --since: named in the totals
                return FileAudit(job.path, job.format, (), files=0, before_since=True)
            case PassedOver():  # a folder holds other files too: named in the totals
                return FileAudit(job.path, None, (), files=0, not_transcript=True)
            case Refused():
                return _refused(job, opened)
            case _:
                return _read(job, opened, settings)


def _read(job: FileJob, opened: Input, settings: AuditSettings) -> FileAudit:
    fmt = opened.format
    if fmt is None:
        return _unreadable(job, "no reader recognises this file's format, skipped")
    try:
        with collector_paused():
            results = settings.config.needs_results  # else nobody reads one
            lines = bounded_lines(opened.stream)
            items = read_items(READERS[fmt], lines, job.path, results, job.path)
            return fold_file(job.path, fmt, items, opened.size, settings)
    except Exception as error:  # a reader's bug must not end the audit of other files
        return _unreadable(job, f"internal error: {type(error).__name__}: {error}")


def _refused(job: FileJob, refused: Refused) -> FileAudit:
    """How the audit words a file it cannot read: at line 0 when it cannot be opened, at line
    1 when its first bytes cannot be read."""
    if refused.stage == "head":
        return _unreadable(job, refused.why, line=1)
    if refused.stage == "kind":
        return _unreadable(job, "not a regular file, skipped")
    return _unreadable(job, f"cannot open: {refused.why}")


def _day_of(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")


def _unreadable(job: FileJob, message: str, line: int = 0) -> FileAudit:
    problems = (Diagnostic(job.path, line, message),)
    return FileAudit(job.path, job.format, (), problems, diagnostics=1)
