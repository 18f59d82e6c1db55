"""A README's Python examples, as the tests of every package run them: each block as it is
written, in order, in a namespace of its own."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(readme: Path) -> list[str]:
    """The ```python blocks of ``readme``, in order."""
    return re.findall(r"```python\n(.*?)```", readme.read_text(encoding="utf-8"), re.DOTALL)


def run_blocks(readme: Path) -> list[dict[str, object]]:
    """Run every Python block of ``readme``; return each block's namespace, in order."""
    namespaces = []
    for block in python_blocks(readme):
        namespace: dict[str, object] = {"__name__": "readme_example"}
        exec(compile(block, str(readme), "exec"), namespace)  # the README's own code
        namespaces.append(namespace)
    return namespaces
