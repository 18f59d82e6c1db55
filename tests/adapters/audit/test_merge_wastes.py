"""``merge_wastes``: many wastes added up in one pass give what folding ``merge_waste`` gives."""

from __future__ import annotations

import functools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repeat_guard_audit import FileAudit, Waste, merge_audits, merge_waste
from repeat_guard_audit._waste import NOT_TRANSCRIPTS_KEPT

from .test_waste import wastes


def folded(items: list[Waste], keep: int) -> Waste:
    return functools.reduce(lambda total, waste: merge_waste(total, waste, keep), items, Waste())


# Drawing wastes is slow while other work loads the machine; the speed of drawing is not what
# this test checks.
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(wastes(), max_size=8), st.integers(min_value=0, max_value=4))
def test_one_pass_equals_the_fold(items: list[Waste], keep: int) -> None:
    assert merge_audits(items, keep) == folded(items, keep)
    assert merge_audits(iter(items), keep) == merge_audits(reversed(items), keep)


def test_nothing_adds_up_to_the_empty_waste() -> None:
    assert merge_audits([], 3) == Waste()


def test_the_paths_of_files_that_are_not_transcripts_are_bounded_and_first_in_order() -> None:
    parts = [
        FileAudit(f"/d/{n:04}.txt", None, (), files=0, not_transcript=True)
        for n in range(999, -1, -1)
    ]
    total = merge_audits((part for audit in parts for part in audit.parts()), 3)
    assert total.not_transcripts == 1000
    assert total.not_transcript_files == tuple(
        f"/d/{n:04}.txt" for n in range(NOT_TRANSCRIPTS_KEPT)
    )
    assert (total.files, total.diagnostics) == (0, 0)


def test_the_paths_of_files_that_held_no_call_are_bounded_and_first_in_order() -> None:
    parts = [
        FileAudit(f"/d/{n:04}.jsonl", "claude-code", (), files=1, no_call=True)
        for n in range(999, -1, -1)
    ]
    total = merge_audits((part for audit in parts for part in audit.parts()), 3)
    assert total.held_no_call == 1000
    assert total.held_no_call_files == tuple(
        f"/d/{n:04}.jsonl" for n in range(NOT_TRANSCRIPTS_KEPT)
    )
    assert (total.files, total.diagnostics, total.not_transcripts) == (1000, 0, 0)


def test_the_paths_of_files_written_before_since_are_bounded_and_first_in_order() -> None:
    parts = [
        FileAudit(f"/d/{n:04}.jsonl", None, (), files=0, before_since=True)
        for n in range(999, -1, -1)
    ]
    total = merge_audits((part for audit in parts for part in audit.parts()), 3)
    assert total.written_before_since == 1000
    assert total.written_before_since_files == tuple(
        f"/d/{n:04}.jsonl" for n in range(NOT_TRANSCRIPTS_KEPT)
    )
    assert (total.files, total.not_transcripts, total.held_no_call, total.found) == (0, 0, 0, 1000)
