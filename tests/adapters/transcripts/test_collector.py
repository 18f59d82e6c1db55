"""``collector_paused``: the collector waits inside the block and is left as it was, and what
the commands run inside it (reading, replaying, reporting, annotating, the audit's fold) makes no
reference cycles, on any transcript the fuzzer makes."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest
from hypothesis import given

from repeat_guard import GuardConfig
from repeat_guard_audit import AuditSettings
from repeat_guard_audit._fold import fold_file
from repeat_guard_transcripts import READERS, collector_paused

from .fuzzing import exercise, fuzz_settings, transcripts

# A full collection per example is slow: a fiftieth of the fuzz test's transcripts.
EXAMPLES = int(os.environ.get("REPEAT_GUARD_FUZZ", "3000")) // 50


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.usefixtures("collector_on")
def test_the_collector_waits_inside_and_runs_again_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("x")
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_a_collector_turned_off_stays_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


@fuzz_settings(EXAMPLES)
@given(transcripts())
def test_reading_replaying_and_folding_any_transcript_leaves_no_cycles(
    case: tuple[str, list[bytes]],
) -> None:
    fmt, lines = case
    was = gc.isenabled()
    gc.collect()
    with collector_paused():
        exercise(fmt, lines)
        fold_file("f", fmt, READERS[fmt].read(lines, "f"), 0, AuditSettings(GuardConfig()))
        # Garbage a cycle would leave, if any: nothing else ran since the collection above.
        found = gc.collect()
    assert gc.isenabled() is was
    assert found == 0
