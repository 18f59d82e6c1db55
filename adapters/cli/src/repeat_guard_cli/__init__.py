"""The ``repeat-guard`` command: replay ACP transcripts, check configs, run a JSONL sidecar,
and serve as an agent host's hook.

``main(argv)`` runs the command and returns its exit status; the console script
``repeat-guard`` and ``python -m repeat_guard_cli`` both call it. The names below are imported
when first used, so that a hook process (a new one for every tool call) loads only the command
it runs.
"""

from __future__ import annotations

import importlib

# typing itself is not imported: this module is on the path of every hook call (the resident
# guard's client), where importing typing costs more than the whole call.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from ._cli import build_parser
    from ._entry import main
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

_HOMES = {
    "build_parser": "._cli",
    "main": "._entry",
    "UsageError": "._errors",
    "AdmitQuery": "._serve",
    "StoredState": "._serve",
    "LineError": "._serve",
    "parse_event": "._serve",
    "serve": "._serve",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
