"""The core is sans-IO: every module it imports is on an allow-list of pure modules.

A runtime look at ``sys.modules`` cannot see ``os``, ``time`` or ``io``, which the interpreter
loads before any user code, so this reads the core's source instead: every ``import`` in every
module of ``repeat_guard``, at any depth (inside functions and ``if TYPE_CHECKING:`` too), must
name a module below. The same rule is enforced for editors and ``make lint`` by ruff's
``banned-api`` list in ``core/pyproject.toml``; this test is the allow-list that catches what a
ban list forgets.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import repeat_guard

# Each entry is pure: no I/O, no clock, no randomness, no global state the core could change.
ALLOWED = {
    "__future__",
    "collections",  # collections.abc for Mapping and friends
    "dataclasses",
    "hashlib",  # fixed-size digests of long argument texts
    "_blake2",  # the same BLAKE2 that hashlib.blake2b is, imported without OpenSSL
    "json",  # the canonical text is JSON, written by the standard encoder
    "math",
    "orjson",  # the fast path of the canonical text: encodes a value to bytes, nothing else
    "re",  # tool-name patterns
    "tomllib",  # config from text: parses a string, opens no file
    "typing",
    "pyrsistent",  # the persistent maps the state is made of
    "returns",  # Result at the boundaries that can fail for expected reasons
}

CORE = Path(repeat_guard.__file__).parent


def imported_modules(source: str) -> set[str]:
    """Return the top-level name of every absolute import in ``source``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def test_every_core_module_imports_only_allowed_modules() -> None:
    sources = sorted(CORE.glob("*.py"))
    assert CORE / "_state.py" in sources
    found = {path.name: imported_modules(path.read_text(encoding="utf-8")) for path in sources}
    assert {name: sorted(mods - ALLOWED) for name, mods in found.items() if mods - ALLOWED} == {}
    assert "pyrsistent" in set().union(*found.values())


def test_the_import_reader_sees_nested_and_from_imports_but_not_relative_ones() -> None:
    source = (
        "import os.path, json\n"
        "from time import monotonic\n"
        "from . import _state\n"
        "from ._events import Event\n"
        "def f():\n"
        "    import asyncio\n"
        "if TYPE_CHECKING:\n"
        "    from logging import Logger\n"
    )
    assert imported_modules(source) == {"os", "json", "time", "asyncio", "logging"}


# What the dependencies pull in is outside the allow-list's sight: check it at run time, for the
# modules the interpreter does not load on its own.
NOT_LOADED = [
    "asyncio",
    "logging",
    "pluggy",
    "socket",
    "subprocess",
    "threading",
    "hypothesis",
    "repeat_guard_pluggy",
    "repeat_guard_agentloop",
    "repeat_guard_transcripts",
    "repeat_guard_hooks",
    "repeat_guard_hookcall",
    "repeat_guard_entry",
    "repeat_guard_langchain",
    "repeat_guard_pydantic_ai",
    "repeat_guard_acp_agent",
    "repeat_guard_cli",
    "repeat_guard_testing",
]


def test_importing_the_core_loads_no_event_loop_logging_or_adapter() -> None:
    code = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "import repeat_guard\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, text=True
    ).stdout
    loaded = set(json.loads(output))
    assert {"repeat_guard", "pyrsistent"} <= loaded
    assert [name for name in NOT_LOADED if name in loaded] == []
