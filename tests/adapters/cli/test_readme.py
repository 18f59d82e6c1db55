"""The command's README is rendered from its template by running every example: a README
edited by hand, or a command whose output changed, shows here as a difference."""

from __future__ import annotations

import importlib.util
from pathlib import Path

DOCS = Path(__file__).resolve().parents[3] / "adapters" / "cli" / "docs"


def test_the_readme_is_what_its_template_renders_to() -> None:
    spec = importlib.util.spec_from_file_location("render_readme", DOCS / "render_readme.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rendered = module.render()
    written = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    # The message names the fix; the assertion shows the difference.
    assert rendered == written, "run: .venv/bin/python adapters/cli/docs/render_readme.py"
