"""The ``repeat-guard`` command: replay ACP transcripts, check configs, run a JSONL sidecar,
and serve as an agent host's hook.

``main(argv)`` runs the command and returns its exit status; the console script
``repeat-guard`` and ``python -m repeat_guard_entry`` call it from ``repeat_guard_entry``,
which a hook process (a new one for every tool call) enters without importing this package.
"""

from __future__ import annotations

from repeat_guard_entry import main

from ._cli import build_parser
from ._errors import UsageError
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
