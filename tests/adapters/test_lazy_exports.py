"""The packages that import their names lazily list each name three times (for the type
checker, in ``__all__`` and in the table of modules): the three must agree, and each name must
be found where the table says."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAZY = {
    "repeat_guard_cli": ROOT / "adapters/cli/src/repeat_guard_cli/__init__.py",
    "repeat_guard_hooks": ROOT / "adapters/hooks/src/repeat_guard_hooks/__init__.py",
}


def _type_checking_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                names.update(alias.asname or alias.name for alias in statement.names)
    return names


@pytest.mark.parametrize("package", sorted(LAZY))
def test_every_lazy_name_is_listed_alike_and_resolves(package: str) -> None:
    module = importlib.import_module(package)
    table: dict[str, str] = module._HOMES
    assert set(module.__all__) == set(table) == _type_checking_names(LAZY[package])
    for name, home in table.items():
        assert getattr(module, name) is getattr(importlib.import_module(home, package), name)
