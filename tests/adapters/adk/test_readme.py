"""The README's example runs as written."""

from __future__ import annotations

from pathlib import Path

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "adk" / "README.md"


def test_the_readme_example_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.index("| ADK | repeat-guard |") < text.index("```python")
    (namespace,) = run_blocks(README)
    ask = namespace["ask"]
    assert callable(ask)
    assert namespace["guard"].config.thresholds == (3, 5, 8)  # type: ignore[attr-defined]  # the README's RepeatGuard
