"""The values an audit passes between its worker processes and its renderers.

They are plain named tuples of core values and strings so that they pickle cheaply across a
process pool or a Dask cluster.
"""

from __future__ import annotations

from typing import NamedTuple

from repeat_guard import GuardConfig
from repeat_guard_transcripts import Diagnostic

from ._waste import SessionAudit, Waste, merge_audits

__all__ = ["AuditSettings", "FileAudit", "FileJob"]


class AuditSettings(NamedTuple):
    """What every worker needs besides the file: the guard's configuration, ``since`` (a
    ``YYYY-MM-DD`` day: calls before it are replayed but not counted) and how many worst runs
    and sessions to keep."""

    config: GuardConfig
    since: str | None = None
    keep: int = 10


class FileJob(NamedTuple):
    """One file to audit: its path, the format to read it as, its size when listed, and
    whether a directory walk found it.

    With no format the worker sniffs the file's head: the process that lists files then only
    walks, and the workers open each file once. A file no reader recognises (or that is not a
    regular file, or is gone) is counted and named in the totals as not a transcript when the
    walk found it (a folder of transcripts
    holds other files too: no diagnostic), and is a diagnostic when it was named. A job with a
    ``problem`` stands for a folder the walk could not list: its result is that diagnostic
    alone (no file is counted)."""

    path: str
    format: str | None
    size: int
    walked: bool = False
    problem: str | None = None


class FileAudit(NamedTuple):
    """One file's result: its sessions (the core's ``SessionAudit``, each read in the file's
    ``format``), the first of its diagnostics (``problems``), and the file's own numbers:
    ``files``, 1 for a file audited and 0 for one ``since`` passed over, its ``bytes`` and its
    ``diagnostics``, all of them counted; ``before_since`` for a file left out because it was
    last written before ``since`` (counted apart, and named, in the totals); ``not_transcript``
    for a file a walk found that no reader recognises (counted apart, and named, in the
    totals); ``no_call`` for a file read whole that held no call and said nothing else (its
    one diagnostic a ``no_call_note``, the shared one or its reader's own: counted and named
    in the totals instead of kept in ``problems``).

    ``parts`` is what the core's ``merge_audits`` adds up; ``waste`` is their merge, keeping
    ``keep`` worst runs and sessions. A result carries no ``Waste`` of its own: one is a score
    of persistent maps and named tuples, and building it in a worker, pickling it across a
    process pool and unpickling it cost more than sniffing a small file (about 70 us a file
    of 10 KB), for a total that its sessions already give."""

    file: str
    format: str | None
    sessions: tuple[SessionAudit, ...]
    problems: tuple[Diagnostic, ...] = ()
    files: int = 1
    bytes: int = 0
    diagnostics: int = 0
    keep: int = 10
    not_transcript: bool = False
    no_call: bool = False
    before_since: bool = False

    def parts(self) -> tuple[SessionAudit | Waste, ...]:
        """The file's sessions, then a ``Waste`` of its own numbers (files, bytes,
        diagnostics)."""
        own = Waste(files=self.files, diagnostics=self.diagnostics, bytes=self.bytes)
        if self.not_transcript:
            own = own._replace(not_transcripts=1, not_transcript_files=(self.file,))
        if self.no_call:
            own = own._replace(held_no_call=1, held_no_call_files=(self.file,))
        if self.before_since:
            own = own._replace(written_before_since=1, written_before_since_files=(self.file,))
        return (*self.sessions, own)

    @property
    def waste(self) -> Waste:
        """The file's counts: its sessions and its own numbers, merged."""
        return merge_audits(self.parts(), self.keep)
