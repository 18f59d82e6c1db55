"""The command's modules import one another without a circle, lazy imports included: the
package's ``__init__`` at the top (the command's entry, ``repeat_guard_entry``, imports it only
for a command that is not a plain hook call), helpers below it."""

from __future__ import annotations

import ast
from graphlib import TopologicalSorter
from pathlib import Path

import repeat_guard_cli

PACKAGE = Path(repeat_guard_cli.__file__).parent


def _imports(path: Path) -> set[str]:
    """The package's modules that ``path`` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.module == "repeat_guard_cli":
            found.add("__init__")
    return found


def test_no_module_of_the_command_imports_one_that_imports_it_back() -> None:
    graph = {path.stem: _imports(path) for path in PACKAGE.glob("*.py")}
    assert graph["__init__"] == {"_cli", "_errors", "_serve"}
    order = list(TopologicalSorter(graph).static_order())  # CycleError names a circle
    assert order.index("__init__") > order.index("_cli")
