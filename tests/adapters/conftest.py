"""Fixtures shared by the adapters' tests."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .deep import deep_folders


@pytest.fixture
def fifo_never_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A FIFO in ``tmp_path`` (``pipe``) that fails the test if ``os.open`` opens it.

    Opening a FIFO, even to close it at once, lets a writer waiting for its reader go on, and
    its next write then fails: only a reader meant for it may open it.
    """
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    real_open = os.open

    def guarded(
        path: str | os.PathLike[str], flags: int, mode: int = 0o777, *, dir_fd: int | None = None
    ) -> int:
        if Path(path) == fifo:
            raise AssertionError(f"{path} opened")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", guarded)
    return fifo


@pytest.fixture
def unlistable_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder ``tmp_path/locked`` holding a file, that ``os.scandir`` (so ``os.walk``)
    refuses to list, as it does an unreadable folder for a user other than root."""
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "inside.jsonl").write_text("{}\n", encoding="utf-8")
    real_scandir = os.scandir

    def refusing(path: str) -> Iterator[os.DirEntry[str]]:
        if Path(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    return locked


@pytest.fixture
def deep_folder(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path/deep`` and ``DEEP_LEVELS`` folders below it, the innermost given."""
    with deep_folders(tmp_path / "deep") as innermost:
        yield innermost
