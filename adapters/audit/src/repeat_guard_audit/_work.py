"""The per-file work: open one transcript safely, sniff its format unless the job names it,
read it with its format's reader, fold it.

Total by design: whatever a file holds or whatever happens to it (it vanished, it is a FIFO,
it is not readable, its reader has a bug), the result is a ``FileAudit``, at worst carrying one
diagnostic (none for a file a walk found that is not a transcript: that one is counted and
named apart), so one bad file never stops
an audit of thousands. The functions here are module-level and take picklable values, so a
process pool or a Dask cluster can run them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import BinaryIO

from repeat_guard_transcripts import (
    READERS,
    Diagnostic,
    bounded_lines,
    collector_paused,
    open_regular,
    read_items,
    sniff_stream,
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
    opened = _open_regular(job)
    if isinstance(opened, FileAudit):
        return opened
    stream, status = opened
    with stream:
        if settings.since is not None and _day_of(status.st_mtime) < settings.since:
            return FileAudit(job.path, job.format, (), files=0)
        sniffed = _sniffed(job, stream)
        if isinstance(sniffed, FileAudit):
            return sniffed
        fmt, lines = sniffed
        try:
            with collector_paused():
                results = settings.config.reads_results  # else nobody reads one
                items = read_items(READERS[fmt], bounded_lines(lines), job.path, results)
                return fold_file(job.path, fmt, items, status.st_size, settings)
        except Exception as error:  # a reader's bug must not end the audit of other files
            return _unreadable(job, f"internal error: {type(error).__name__}: {error}")


def _sniffed(job: FileJob, stream: BinaryIO) -> tuple[str, BinaryIO] | FileAudit:
    """The format ``job`` names and ``stream``, or the format sniffed and a stream that reads
    the file from its start; or the result of a file whose format is not known."""
    if job.format is not None:
        return job.format, stream
    sniffed = sniff_stream(stream)
    if isinstance(sniffed, str):  # there, but its head cannot be read (EIO)
        return _unreadable(job, sniffed, line=1)
    if sniffed.format is None:
        if job.walked:  # a folder holds other files too: named in the totals, not an error
            return FileAudit(job.path, None, (), files=0, not_transcript=True)
        return _unreadable(job, "no reader recognises this file's format, skipped")
    return sniffed.format, sniffed.stream


def _open_regular(job: FileJob) -> tuple[BinaryIO, os.stat_result] | FileAudit:
    """Open the regular file ``job`` names (``open_regular``): the stream and its status, or
    the result of a file that is not one or cannot be opened."""
    try:
        stream, status = open_regular(job.path)
    except FileNotFoundError as error:  # gone before its turn: passed over if walked
        return _passed_over(job, f"cannot open: {error.strerror}")
    except OSError as error:  # there, but not to be read: reported, a transcript or not
        return _unreadable(job, f"cannot open: {error.strerror}")
    if stream is None:
        return _passed_over(job, "not a regular file, skipped")
    return stream, status


def _passed_over(job: FileJob, message: str) -> FileAudit:
    """A file that is not a transcript (not a regular file, gone):
    nothing at all when a walk found it and nothing named its format (a folder of
    transcripts holds other files too, and one may go before its turn comes), else a
    diagnostic saying ``message``. A file that is there but cannot be read is reported
    whoever found it (``_unreadable``): it may be a transcript."""
    if job.walked and job.format is None:
        return FileAudit(job.path, None, (), files=0)
    return _unreadable(job, message)


def _day_of(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")


def _unreadable(job: FileJob, message: str, line: int = 0) -> FileAudit:
    problems = (Diagnostic(job.path, line, message),)
    return FileAudit(job.path, job.format, (), problems, diagnostics=1)
