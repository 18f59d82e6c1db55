"""An audit from paths to results: list the files, batch them, run the work, add it up.

The file list is a generator and every engine keeps a bounded window of batches in flight, so
memory does not grow with the number of files; the results come back in listing order whatever
the engine, and ``merge_audits`` adds them up, so every engine gives the same totals and the
same lines.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from functools import partial

from repeat_guard_transcripts import Unlisted, places, walk

from ._engine import EngineName, run
from ._model import AuditSettings, FileAudit, FileJob
from ._waste import Waste, merge_audits
from ._work import audit_batch

__all__ = ["BATCH_BYTES", "BATCH_FILES", "DEFAULT_PATHS", "audit", "batched", "list_files", "total"]

# A batch is what one worker gets at a time: large enough to pay for the hand-over, small
# enough to spread the work evenly over every worker (100 MB in 16 MB batches left one of two
# workers with four batches of seven).
BATCH_FILES = 32
BATCH_BYTES = 4 * 1024 * 1024

# Where the agents whose formats the readers know keep their transcripts: the places each
# reader was registered with.
DEFAULT_PATHS = places()


def list_files(paths: Iterable[str]) -> Iterator[FileJob]:
    """Yield a job for every file under ``paths`` (``walk``'s order), each to be sniffed by
    the worker that audits it; a folder the walk could not list is a job that reports it."""
    for found in walk(paths):
        if isinstance(found, Unlisted):
            yield FileJob(found.path, None, 0, problem=f"cannot list this folder: {found.reason}")
            continue
        path, walked = found
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0
        yield FileJob(path, None, size, walked)


def batched(jobs: Iterable[FileJob]) -> Iterator[tuple[FileJob, ...]]:
    """Group ``jobs`` in order into batches of at most ``BATCH_FILES`` files, closing a batch
    once it holds ``BATCH_BYTES``."""
    batch: list[FileJob] = []
    size = 0
    for job in jobs:
        batch.append(job)
        size += job.size
        if len(batch) >= BATCH_FILES or size >= BATCH_BYTES:
            yield tuple(batch)
            batch, size = [], 0
    if batch:
        yield tuple(batch)


def audit(
    jobs: Iterable[FileJob],
    settings: AuditSettings,
    engine: EngineName = "local",
    workers: int | None = None,
    scheduler: str | None = None,
) -> Iterator[FileAudit]:
    """Yield the audit of every job, in order, computed by ``engine`` (see ``run``)."""
    work = partial(audit_batch, settings=settings)
    for results in run(work, batched(jobs), engine, workers, scheduler):
        yield from results


def total(results: Iterable[FileAudit], keep: int) -> Waste:
    """Return the merged counts of ``results``, in one pass (``results`` may be a stream)."""
    parts = itertools.chain.from_iterable(result.parts() for result in results)
    return merge_audits(parts, keep)
