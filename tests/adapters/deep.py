"""Folders deeper than the interpreter's recursion limit, made and removed one level at a
time from inside (``os.makedirs`` and ``shutil.rmtree`` recurse, and a path given whole each
time costs the kernel a lookup per level: quadratic at this depth)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

DEEP_LEVELS = 1100
"""Deeper than the interpreter's default recursion limit: a walk that recursed would fail."""


@contextlib.contextmanager
def deep_folders(top: Path, depth: int = DEEP_LEVELS) -> Iterator[Path]:
    """Make ``top`` and ``depth`` folders named ``d`` below it; yield the innermost; then
    remove them, with whatever was put in them."""
    top.mkdir()
    here = os.getcwd()
    try:
        os.chdir(top)
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
        os.chdir(here)
        yield top.joinpath(*["d"] * depth)
    finally:
        os.chdir(top.joinpath(*["d"] * depth))
        for _ in range(depth + 1):
            for entry in os.scandir("."):
                if entry.name != "d" or entry.is_symlink() or not entry.is_dir():
                    os.unlink(entry.name)
            os.chdir("..")
            with contextlib.suppress(FileNotFoundError):
                os.rmdir("d")
        os.rmdir(top)
        os.chdir(here)
