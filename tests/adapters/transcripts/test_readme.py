"""The README's example runs as written."""

from __future__ import annotations

from pathlib import Path

from ...readme import run_blocks

README = Path(__file__).resolve().parents[3] / "adapters" / "transcripts" / "README.md"


def test_the_readme_examples_run() -> None:
    namespaces = run_blocks(README)
    assert len(namespaces) >= 1
    for namespace in namespaces:
        assert "summary" in namespace
