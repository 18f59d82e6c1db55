"""Every Python source compiles, on the oldest Python the project supports, to the same thing on
every later one, and every shipped module imports (``make compat`` runs these on a later Python).

A string literal may hold a lone surrogate (``"\\ud800"`` in a non-raw string is one code point,
not six characters). Python 3.11 and 3.12 compile it anywhere; Python 3.13 cleans docstrings in
its compiler through UTF-8 and refuses to compile a module whose docstring holds one
(``UnicodeEncodeError: ... surrogates not allowed``), so the package that holds it no longer
imports. A shipped module holds no such string at all: a docstring writes the escape as text
(``\\\\ud800``, or a raw string), and code that needs the code points spells them so that the
literal holds none (``re.compile(r"[\\ud800-\\udfff]")``). The tests, the benchmarks and the
mutation setup, which run under every supported Python too, may hold lone surrogates as data,
never in a docstring.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

from .readme import ROOT

# The trees that are not shipped and still run on every supported Python.
_RUN_TREES = ("tests", "bench", "mutation")
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _shipped_packages() -> list[Path]:
    """The folder of every package a workspace member's wheel holds."""
    workspace = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    excluded = {ROOT / path for path in workspace.get("exclude", [])}
    members = {member for glob in workspace["members"] for member in ROOT.glob(glob)}
    packages: list[Path] = []
    for member in sorted(members - excluded):
        project = tomllib.loads((member / "pyproject.toml").read_text())
        wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
        packages.extend(member / package for package in wheel["packages"])
    return packages


def _sources(folders: list[Path]) -> Iterator[Path]:
    for folder in folders:
        yield from sorted(folder.rglob("*.py"))
        yield from sorted(folder.rglob("*.pyi"))


def _shipped_modules() -> list[str]:
    """The name of every module the wheels hold, but their ``__main__``s (which run a command)."""
    names = []
    for package in _shipped_packages():
        for path in sorted(package.rglob("*.py")):
            parts = path.relative_to(package.parent).with_suffix("").parts
            if parts[-1] != "__main__":
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _docstrings(tree: ast.Module) -> Iterator[ast.Constant]:
    """The docstrings as the compiler finds them: a string literal as a body's first statement."""
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                yield first.value


def surrogate_strings(source: bytes, path: str) -> list[str]:
    """``path:line`` of every string literal in ``source`` that UTF-8 cannot encode."""
    tree = ast.parse(source, path)
    return [
        f"{path}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _not_utf8(node.value)
    ]


def surrogate_docstrings(source: bytes, path: str) -> list[str]:
    """``path:line`` of every docstring in ``source`` that UTF-8 cannot encode."""
    tree = ast.parse(source, path)
    return [
        f"{path}:{node.lineno}"
        for node in _docstrings(tree)
        if isinstance(node.value, str) and _not_utf8(node.value)
    ]


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_shipped_packages_are_found() -> None:
    found = {_relative(package) for package in _shipped_packages()}
    assert {"core/src/repeat_guard", "adapters/hooks/src/repeat_guard_hookcall"} <= found
    assert all(package.is_dir() for package in _shipped_packages())
    assert len(list(_sources(_shipped_packages()))) > 100


def test_every_source_compiles() -> None:
    trees = _shipped_packages() + [ROOT / tree for tree in _RUN_TREES]
    for path in _sources(trees):
        compile(path.read_bytes(), _relative(path), "exec", dont_inherit=True)


# Imports each module named in its arguments, in order, and prints how many it imported.
_IMPORT_EACH = "import importlib, sys\nfor name in sys.argv[1:]: importlib.import_module(name)\n"
_IMPORT_EACH += "print(len(sys.argv) - 1)"


def test_every_shipped_module_imports_in_a_fresh_interpreter() -> None:
    # In a process of its own: in this one, the other tests have imported most of them already.
    names = _shipped_modules()
    assert {"repeat_guard", "repeat_guard.tally", "repeat_guard_crewai"} <= set(names)
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, *names], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{len(names)}\n"


def test_no_shipped_string_literal_holds_a_lone_surrogate() -> None:
    found = [
        spot
        for path in _sources(_shipped_packages())
        for spot in surrogate_strings(path.read_bytes(), _relative(path))
    ]
    assert found == []


def test_no_docstring_holds_a_lone_surrogate() -> None:
    trees = _shipped_packages() + [ROOT / tree for tree in _RUN_TREES]
    found = [
        spot
        for path in _sources(trees)
        for spot in surrogate_docstrings(path.read_bytes(), _relative(path))
    ]
    assert found == []


_DOCUMENTED_METHOD = b'''"""Module."""


class Reader:
    """Reads."""

    async def read(self) -> None:
        %s
'''


def test_a_docstring_with_a_surrogate_escape_is_found_and_its_written_forms_are_not() -> None:
    source = _DOCUMENTED_METHOD % rb'"""Refuses ``\ud800`` escapes."""'
    assert surrogate_docstrings(source, "m.py") == ["m.py:8"]
    assert surrogate_strings(source, "m.py") == ["m.py:8"]
    for written in (rb'"""Refuses ``\\ud800`` escapes."""', rb'r"""Refuses ``\ud800`` escapes."""'):
        fine = _DOCUMENTED_METHOD % written
        assert surrogate_docstrings(fine, "m.py") == []
        assert surrogate_strings(fine, "m.py") == []


def test_a_surrogate_in_code_is_found_in_shipped_code_only() -> None:
    code = b'PATTERN = "[\\ud800-\\udfff]"\nNAME = f"{PATTERN}\\udcff"\n'
    assert surrogate_strings(code, "m.py") == ["m.py:1", "m.py:2"]
    assert surrogate_docstrings(code, "m.py") == []
    assert surrogate_strings(b'PATTERN = r"[\\ud800-\\udfff]"\n', "m.py") == []
    assert surrogate_docstrings(b'"""\\udfff"""\n', "m.py") == ["m.py:1"]
