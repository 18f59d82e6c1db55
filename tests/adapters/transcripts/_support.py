"""Helpers shared by the reader tests: run a reader and the replay over fixture files."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from repeat_guard import GuardConfig
from repeat_guard_transcripts import (
    READERS,
    Diagnostic,
    FileSummary,
    Fired,
    Outcome,
    Unfinished,
    replay,
)

FIXTURES = Path(__file__).parent / "fixtures"


def run_reader(
    fmt: str, lines: Iterable[bytes], config: GuardConfig | None = None, file: str = "t"
) -> list[Outcome]:
    """Every outcome of replaying ``lines`` read as ``fmt``."""
    items = READERS[fmt].read(lines, file)
    return list(replay(items, config or GuardConfig(), file=file))


def run_file(fmt: str, path: Path, config: GuardConfig | None = None) -> list[Outcome]:
    """Every outcome of replaying the file at ``path`` read as ``fmt``."""
    lines = path.read_bytes().splitlines(keepends=True)
    return run_reader(fmt, lines, config, str(path))


def fired(outcomes: list[Outcome]) -> list[tuple[int, str, int, str]]:
    """(line, tool, count, form) of each reminder."""
    return [
        (o.where.line, o.reminder.tool, o.reminder.count, o.reminder.form)
        for o in outcomes
        if isinstance(o, Fired)
    ]


def summary(outcomes: list[Outcome]) -> FileSummary:
    """The replay's last outcome, its summary."""
    last = outcomes[-1]
    assert isinstance(last, FileSummary)
    return last


def diagnostics(outcomes: list[Outcome], severity: str = "error") -> list[tuple[int, str]]:
    """(line, message) of each diagnostic of ``severity``."""
    return [
        (o.line, o.message)
        for o in outcomes
        if isinstance(o, Diagnostic) and o.severity == severity
    ]


def unfinished(outcomes: list[Outcome]) -> list[tuple[int, str]]:
    """(line, tool) of each call that never finished."""
    return [(o.where.line, o.tool) for o in outcomes if isinstance(o, Unfinished)]
