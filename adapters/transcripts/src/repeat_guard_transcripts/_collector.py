"""Folding a whole transcript with the cyclic garbage collector held off.

A replay or an audit keeps a guard state and counts per session until its file ends. With many
sessions in a file, CPython's cyclic collector walks all of them again at every full pass, and
finds nothing: the readers, the replay and the audit's fold make no reference cycles (a test
folds fuzzed transcripts of every format, damaged ones too, with the collector held off and then
finds no garbage left for it). What they drop is freed by reference counting, collector or not.
The package's README gives what this saves.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector inside the block, then let it run again if it
    ran before; a caller that had turned it off keeps it off.

    For a block that reads, replays or folds transcripts to the end and makes no cycles of its
    own; the ``repeat-guard`` commands run each file this way. Not for a generator left
    half-consumed: the collector stays off until the block ends."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
