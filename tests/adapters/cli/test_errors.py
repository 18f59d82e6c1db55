"""The exit statuses every subcommand shares: each defined once, in ``_errors``."""

from __future__ import annotations

import ast
from pathlib import Path

import repeat_guard_cli

PACKAGE = Path(repeat_guard_cli.__file__).parent


def _assigned_statuses(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name) and t.id.startswith("EXIT_"))
    return names


def test_exit_statuses_are_defined_only_in_errors() -> None:
    defined = {path.name: _assigned_statuses(path) for path in sorted(PACKAGE.glob("*.py"))}
    elsewhere = {name: statuses for name, statuses in defined.items() if name != "_errors.py"}
    assert defined["_errors.py"] >= {"EXIT_OK", "EXIT_DIAGNOSTICS", "EXIT_USAGE"}
    assert not any(elsewhere.values()), elsewhere
