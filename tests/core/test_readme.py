"""The core README's examples run as written and their assertions hold."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "core" / "README.md"


def test_the_readme_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 8
    for block in blocks:
        exec(compile(block, str(README), "exec"), {"__name__": "readme_example"})
