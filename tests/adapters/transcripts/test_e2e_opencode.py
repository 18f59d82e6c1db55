"""The opencode reader against the real opencode: a database recorded now, by each release the
Makefile installs, reads as the fixture does (the fixture was recorded the same way)."""

from __future__ import annotations

from pathlib import Path

import pytest

from repeat_guard import GuardConfig
from repeat_guard_transcripts import READERS, FileSummary, PathReading, replay, sniff_format

from ..hooks.agents import Host, host_fixture
from .record_opencode import record

pytestmark = pytest.mark.e2e

opencode = host_fixture("opencode", "opencode-ai", "opencode")


def test_a_database_recorded_now_reads_as_the_fixture(opencode: Host, tmp_path: Path) -> None:
    target = tmp_path / "opencode.db"
    record(opencode.executable, target)
    assert sniff_format(str(target)) == "opencode"
    reader = READERS["opencode"]
    assert isinstance(reader, PathReading)
    items = reader.read_path(str(target), str(target))
    summary = list(replay(items, GuardConfig(), file=str(target)))[-1]
    assert isinstance(summary, FileSummary)
    counts = summary.tally
    # Counted by hand from the script: runs of 3 and 2 bash calls, then one rejected call.
    assert (counts.calls, counts.wasted, counts.denied, counts.reminders) == (6, 3, 1, 1)
    assert (len(summary.sessions), summary.unfinished, summary.errors) == (2, 0, 0)
