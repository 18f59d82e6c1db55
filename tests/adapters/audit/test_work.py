"""The per-file work is total: whatever a path is or holds, a result with a diagnostic."""

from __future__ import annotations

import errno
import gc
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from repeat_guard import GuardConfig
from repeat_guard_audit import (
    BATCH_BYTES,
    BATCH_FILES,
    AuditSettings,
    FileAudit,
    FileJob,
    audit_batch,
    audit_file,
    batched,
    fold_file,
    list_files,
    total,
)
from repeat_guard_audit import _work as work
from repeat_guard_audit._fold import MAX_PROBLEMS_KEPT
from repeat_guard_transcripts import Diagnostic, Item, no_call_note

SETTINGS = AuditSettings(GuardConfig())
LINE = (
    b'{"type": "user", "sessionId": "s", "cwd": "/p", "timestamp": "2026-12-01T00:00:00Z", '
    b'"message": {"role": "user", "content": "hi"}}\n'
)


def only_problem(job: FileJob) -> str:
    result = audit_file(job, SETTINGS)
    assert result.sessions == ()
    assert (result.waste.files, result.waste.diagnostics) == (1, 1)
    (problem,) = result.problems
    assert (problem.file, problem.line) == (job.path, 0)
    return problem.message


def test_a_file_no_reader_knows_is_skipped_with_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    (job,) = list_files([str(path)])
    assert job == FileJob(str(path), None, 6)
    assert "no reader recognises" in only_problem(job)


def test_an_unknown_format_name_is_a_diagnostic(tmp_path: Path) -> None:
    assert "no reader for format 'nope'" in only_problem(FileJob(str(tmp_path), "nope", 0))


def test_a_vanished_file_is_a_diagnostic(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone.jsonl")
    assert only_problem(FileJob(missing, "claude-code", 0)) == (
        "cannot open: No such file or directory"
    )
    assert list(list_files([missing])) == [FileJob(missing, None, 0)]


def test_a_fifo_or_a_directory_is_not_read(tmp_path: Path, fifo_never_opened: Path) -> None:
    fifo = fifo_never_opened
    assert only_problem(FileJob(str(fifo), "claude-code", 0)) == "not a regular file, skipped"
    assert only_problem(FileJob(str(fifo), None, 0)) == "not a regular file, skipped"
    # Walked, it is not read, and counted and named as not a transcript.
    assert audit_file(FileJob(str(fifo), None, 0, walked=True), SETTINGS) == FileAudit(
        str(fifo), None, (), files=0, not_transcript=True
    )
    assert only_problem(FileJob(str(tmp_path), "claude-code", 0)) == ("not a regular file, skipped")


def test_a_path_that_stops_being_a_regular_file_before_it_is_opened_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between the stat and the open, the regular file the stat saw is replaced by a directory.
    real_stat = os.stat

    def regular(path: str) -> os.stat_result:
        status = real_stat(tmp_path / "s.jsonl")
        return status if Path(path) == tmp_path else real_stat(path)

    (tmp_path / "s.jsonl").write_bytes(LINE)
    monkeypatch.setattr(os, "stat", regular)
    assert only_problem(FileJob(str(tmp_path), "claude-code", 0)) == "not a regular file, skipped"


def test_a_folder_the_walk_cannot_list_is_a_job_whose_result_is_its_diagnostic(
    tmp_path: Path, unlistable_folder: Path
) -> None:
    (tmp_path / "s.jsonl").write_bytes(LINE)
    jobs = list(list_files([str(tmp_path)]))
    problem = "cannot list this folder: Permission denied"
    assert jobs[1] == FileJob(str(unlistable_folder), None, 0, problem=problem)
    results = [audit_file(job, SETTINGS) for job in jobs]
    assert [(r.files, r.diagnostics) for r in results] == [(1, 0), (0, 1)]
    assert results[1].problems == (Diagnostic(str(unlistable_folder), 0, problem),)
    totals = total(results, SETTINGS.keep)
    assert (totals.files, totals.diagnostics) == (1, 1)


def test_a_walked_file_that_cannot_be_opened_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It may be a transcript: unlike one that went before its turn, it is reported.
    locked = tmp_path / "s.jsonl"
    locked.write_bytes(LINE)
    real_open = os.open

    def refusing(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if Path(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", refusing)
    job = FileJob(str(locked), None, 0, walked=True)
    assert only_problem(job) == "cannot open: Permission denied"


def test_a_walk_lists_every_file_and_the_worker_sniffs_it(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "s.jsonl").write_bytes(LINE)
    (tmp_path / "a.txt").write_text("hello\n")
    os.mkfifo(tmp_path / "c.pipe")
    jobs = list(list_files([str(tmp_path)]))
    # Nothing is opened while listing: the FIFO is listed too, and never waited on.
    assert [(Path(job.path).name, job.format, job.walked) for job in jobs] == [
        ("a.txt", None, True),
        ("c.pipe", None, True),
        ("s.jsonl", None, True),
    ]
    results = [audit_file(job, SETTINGS) for job in jobs]
    # A session with a prompt and no call: read, and counted and named as a file that held no
    # call, instead of carrying the replay's note (not a diagnostic either way).
    assert [(r.format, r.files, r.problems, r.no_call) for r in results] == [
        (None, 0, (), False),
        (None, 0, (), False),
        ("claude-code", 1, (), True),
    ]
    totals = total(results, SETTINGS.keep)
    assert (totals.files, totals.diagnostics) == (1, 0)
    assert (totals.held_no_call, totals.held_no_call_files) == (1, (jobs[2].path,))


def test_only_the_no_call_note_is_taken_out_of_a_files_problems(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(LINE)
    # The no-call note of this file's format, bare or saying what its reader read, is counted
    # when it is all the file said.
    for read in (None, (3, "message")):
        no_call = no_call_note(str(path), "claude-code", read)
        folded = fold_file(str(path), "claude-code", [no_call], 10, SETTINGS)
        assert (folded.problems, folded.diagnostics, folded.no_call) == ((), 0, True)
    # Another note, even one with the same words for another format, stays, and so does an
    # error; beside them a reader's own no-call note is shown too, and the file not counted
    # (read_items adds its own only to a file that said nothing).
    other = no_call_note(str(path), "codex")
    error = Diagnostic(str(path), 2, "invalid JSON", "error")
    folded = fold_file(str(path), "claude-code", [other, error, no_call], 10, SETTINGS)
    assert (folded.problems, folded.diagnostics, folded.no_call) == (
        (other, error, no_call),
        1,
        False,
    )
    plain = fold_file(str(path), "claude-code", [other], 10, SETTINGS)
    assert (plain.problems, plain.no_call) == ((other,), False)
    # Past the diagnostics kept, it is counted no more, and not kept either.
    errors = [error] * MAX_PROBLEMS_KEPT
    full = fold_file(str(path), "claude-code", [*errors, no_call], 10, SETTINGS)
    assert (full.problems, full.diagnostics, full.no_call) == (tuple(errors), 100, False)


def test_a_walked_file_that_vanished_is_named_a_named_one_is_a_diagnostic(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone.jsonl")
    assert audit_file(FileJob(missing, None, 0, walked=True), SETTINGS) == FileAudit(
        missing, None, (), files=0, not_transcript=True
    )
    assert only_problem(FileJob(missing, None, 0)) == "cannot open: No such file or directory"
    # A format named for a walked file (as a caller may) makes it a transcript to report.
    assert only_problem(FileJob(missing, "claude-code", 0, walked=True)).startswith("cannot")


def test_an_empty_head_is_no_known_format_an_unreadable_one_a_read_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.touch()
    assert "no reader recognises" in only_problem(FileJob(str(path), None, 0))
    # A regular file whose first read fails (EIO) is there but unreadable: said so, walked or
    # not (it may be a transcript), at its first line as the replay says it.
    for walked in (False, True):
        (problem,) = audit_file(
            FileJob("/proc/self/mem", None, 0, walked=walked), SETTINGS
        ).problems
        assert (problem.line, problem.message) == (1, "read failed: Input/output error")


def test_since_skips_files_last_written_before_it(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(LINE)
    os.utime(path, (0, 0))
    job = FileJob(str(path), "claude-code", len(LINE))
    skipped = audit_file(job, AuditSettings(GuardConfig(), since="2000-01-01"))
    assert (skipped.sessions, skipped.waste.files, skipped.problems) == ((), 0, ())
    # Not read, but counted and named apart: never a silent zero.
    assert skipped.before_since
    assert (skipped.waste.written_before_since, skipped.waste.found) == (1, 1)
    assert skipped.waste.written_before_since_files == (str(path),)
    read = audit_file(job, AuditSettings(GuardConfig(), since="1970-01-01"))
    assert read.waste.files == 1
    assert (read.before_since, read.waste.written_before_since) == (False, 0)


class _Broken:
    name = "claude-code"

    def sniff(self, head: bytes) -> bool:
        return True

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        raise RuntimeError("a bug")


def test_a_readers_bug_is_a_diagnostic_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(LINE)
    monkeypatch.setattr(work, "READERS", {"claude-code": _Broken()})
    job = FileJob(str(path), "claude-code", len(LINE))
    assert only_problem(job) == "internal error: RuntimeError: a bug"


def test_a_batch_is_its_files_in_order(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(LINE)
    jobs = [FileJob(str(path), "claude-code", 1), FileJob(str(tmp_path / "x"), None, 0)]
    results = audit_batch(jobs, SETTINGS)
    assert [r.file for r in results] == [job.path for job in jobs]
    assert results[0].waste.sessions == 1


def test_batches_close_on_count_or_size() -> None:
    small = [FileJob(f"f{n}", "acp", 10) for n in range(66)]
    assert [len(batch) for batch in batched(small)] == [BATCH_FILES, BATCH_FILES, 2]
    half = BATCH_BYTES // 2
    big = [FileJob("a", "acp", half), FileJob("b", "acp", half), FileJob("c", "acp", 1)]
    assert [len(batch) for batch in batched(big)] == [2, 1]
    assert list(batched([])) == []


class _Watching:
    """A reader that records whether the cyclic garbage collector runs while it is read."""

    name = "claude-code"

    def __init__(self, fail: bool) -> None:
        self.fail = fail
        self.seen: list[bool] = []

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        self.seen.append(gc.isenabled())
        if self.fail:
            raise RuntimeError("a bug")
        yield from ()


@pytest.mark.parametrize("fail", [False, True])
@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_waits_during_a_fold_and_is_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool, fail: bool
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(LINE)
    reader = _Watching(fail)
    monkeypatch.setattr(work, "READERS", {"claude-code": reader})
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        result = audit_file(FileJob(str(path), "claude-code", len(LINE)), SETTINGS)
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert reader.seen == [False]
    assert after is enabled
    assert result.waste.diagnostics == int(fail)


def test_a_walked_file_no_reader_recognises_is_not_a_transcript_a_named_one_a_diagnostic(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a transcript\n")
    walked = audit_file(FileJob(str(notes), None, 0, walked=True), SETTINGS)
    assert walked == FileAudit(str(notes), None, (), files=0, not_transcript=True)
    assert (walked.waste.not_transcripts, walked.waste.not_transcript_files) == (1, (str(notes),))
    assert walked.waste.diagnostics == 0
    assert only_problem(FileJob(str(notes), None, 0)) == (
        "no reader recognises this file's format, skipped"
    )
