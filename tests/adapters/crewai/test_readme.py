"""The README's example runs as written (a crew: ``e2e``, like the other kickoffs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "crewai" / "README.md"

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai.*")]


def test_the_readme_example_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.index("| CrewAI | repeat-guard |") < text.index("```python")
    (namespace,) = run_blocks(README)
    assert getattr(namespace["output"], "raw", None) == "No TODOs; I will stop searching."
