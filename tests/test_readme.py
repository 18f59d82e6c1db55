"""The README's Python examples run and their assertions hold."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_readme_has_examples() -> None:
    assert len(python_blocks()) >= 2


def test_readme_examples_run() -> None:
    for block in python_blocks():
        exec(compile(block, str(README), "exec"), {})
