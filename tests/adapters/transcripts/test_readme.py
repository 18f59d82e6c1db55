"""The README's example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "adapters" / "transcripts" / "README.md"


def test_the_readme_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) >= 1
    for block in blocks:
        namespace: dict[str, object] = {"__name__": "readme_example"}
        exec(compile(block, str(README), "exec"), namespace)
        assert "summary" in namespace
