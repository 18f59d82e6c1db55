"""Fixtures shared by the adapters' tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


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
