"""The ``repeat-guard`` command: replay ACP transcripts, check configs, run a JSONL sidecar,
and serve as an agent host's hook.

``main(argv)`` runs the command and returns its exit status; the console script
``repeat-guard`` and ``python -m repeat_guard_entry`` call it from ``repeat_guard_entry``,
which a hook process (a new one for every tool call) enters without importing this package.
The sidecar's names (``serve`` and its types) are imported when first asked for: every other
subcommand starts without the sidecar and what it needs (``sqlite3`` among them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repeat_guard_entry import main

from ._cli import build_parser
from ._errors import UsageError

if TYPE_CHECKING:
    from ._serve import AdmitQuery, LineError, StoredState, parse_event, serve

__all__ = [
    "AdmitQuery",
    "LineError",
    "StoredState",
    "UsageError",
    "build_parser",
    "main",
    "parse_event",
    "serve",
]

_SIDECAR = frozenset({"AdmitQuery", "LineError", "StoredState", "parse_event", "serve"})


def __getattr__(name: str) -> object:
    if name in _SIDECAR:
        from . import _serve  # noqa: PLC0415  # see the module's docstring

        return getattr(_serve, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
