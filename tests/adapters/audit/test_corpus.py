"""A generated corpus of thousands of transcripts in every format, loops planted at known lines:
the audit reports exactly what the corpus' own arithmetic says, every engine agrees with the
others in every output format, and a broken file gets its diagnostics without stopping the
audit."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from repeat_guard import GuardConfig
from repeat_guard_audit import AuditSettings, FileAudit, Waste, audit, list_files, total
from repeat_guard_cli import main
from repeat_guard_transcripts import READERS

from .corpus import WRITERS, Expected, write_corpus

FILES = 2000
BROKEN = 1001
KEEP = 10_000  # keep every run, so the planted ones can all be checked


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Expected]:
    root = tmp_path_factory.mktemp("corpus")
    return root, write_corpus(root, FILES, broken_at=BROKEN)


@pytest.fixture(scope="module")
def local(corpus: tuple[Path, Expected]) -> list[FileAudit]:
    root, _ = corpus
    return list(audit(list_files([str(root)]), AuditSettings(GuardConfig(), keep=KEEP)))


@pytest.fixture(scope="module")
def merged(local: list[FileAudit]) -> Waste:
    return total(local, KEEP)


def test_the_corpus_holds_every_format() -> None:
    # A format gets a reader and, with it, a writer here, so the audit is checked on it too.
    assert sorted(WRITERS) == sorted(READERS)


def test_the_totals_are_the_corpus_arithmetic(corpus: tuple[Path, Expected], merged: Waste) -> None:
    _, expected = corpus
    counts = merged.counts
    assert (merged.files, merged.sessions) == (expected.files, expected.sessions)
    assert (counts.calls, counts.tracked, counts.wasted) == (
        expected.calls,
        expected.calls,
        expected.wasted,
    )
    assert dict(counts.reminders_by_form) == dict(expected.reminders)
    assert counts.reminders == sum(expected.reminders.values())
    assert counts.longest_run == expected.longest_run
    assert (merged.wasted_tokens, merged.wasted_input_tokens, merged.wasted_turns) == (
        expected.wasted_tokens,
        expected.wasted_input_tokens,
        expected.wasted_turns,
    )
    assert {name: tool.calls for name, tool in counts.tools.items()} == dict(expected.tools)
    assert {name: tool.wasted for name, tool in counts.tools.items()} == dict(
        expected.wasted_by_tool
    )
    assert {day: item.calls for day, item in merged.days.items()} == dict(expected.days)
    assert {day: item.wasted for day, item in merged.days.items()} == dict(expected.wasted_by_day)
    assert merged.diagnostics == expected.diagnostics


def test_every_planted_loop_is_found_at_its_lines(
    corpus: tuple[Path, Expected], merged: Waste
) -> None:
    _, expected = corpus
    found = sorted((run.length, run.file, run.lines[0], run.lines[-1]) for run in merged.worst)
    assert found == sorted(expected.runs)
    longest = merged.worst[0]
    assert longest.length == expected.longest_run
    assert longest.arguments.startswith('{"command":"step ')


def test_a_broken_file_gets_diagnostics_and_the_audit_goes_on(
    corpus: tuple[Path, Expected], local: list[FileAudit]
) -> None:
    (broken,) = [result for result in local if result.file == corpus[1].broken]
    assert [problem.file for problem in broken.problems] == [broken.file] * 2
    assert broken.sessions  # its calls before and after the garbage still count
    assert all(not result.problems for result in local if result is not broken)
    assert len(local) == FILES


@pytest.mark.parametrize(("engine", "scheduler"), [("processes", None), ("dask", "threads")])
def test_every_engine_gives_the_local_results(
    corpus: tuple[Path, Expected], local: list[FileAudit], engine: str, scheduler: str | None
) -> None:
    root, _ = corpus
    results = audit(
        list_files([str(root)]),
        AuditSettings(GuardConfig(), keep=KEEP),
        engine,  # type: ignore[arg-type]
        2,
        scheduler,
    )
    assert list(results) == local


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(args)
    return status, out.getvalue(), err.getvalue()


def test_the_command_prints_the_same_in_every_format_on_every_engine(tmp_path: Path) -> None:
    root = tmp_path / "small"
    broken = write_corpus(root, 60, seed=3, broken_at=30).broken
    engines = [["--jobs", "1"], ["--jobs", "2"], ["--engine", "dask", "--scheduler", "sync"]]
    for fmt in ("text", "json", "csv"):
        seen = set()
        for index, engine in enumerate(engines):
            page = tmp_path / f"{fmt}-{index}.html"
            status, out, err = _run(
                ["audit", str(root), "--format", fmt, "--html", str(page), *engine]
            )
            assert status == 3  # the broken file's diagnostics
            assert err.count(f"{broken}:") == 2
            seen.add((out, err, page.read_text(encoding="utf-8")))
        assert len(seen) == 1


def test_an_empty_folder_audits_to_zero(tmp_path: Path) -> None:
    status, out, _ = _run(["audit", str(tmp_path), "--format", "json"])
    assert status == 0
    assert out.count("\n") == 1
    assert '"type": "totals"' in out
    assert total([], KEEP) == Waste()
