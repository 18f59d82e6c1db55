"""The ``repeat-guard`` command: replay ACP transcripts, check configs, run a JSONL sidecar.

``main(argv)`` runs the command and returns its exit status; the console script
``repeat-guard`` and ``python -m repeat_guard_cli`` both call it.
"""

from ._cli import build_parser, main
from ._errors import UsageError
from ._serve import LineError, parse_event, serve

__all__ = ["LineError", "UsageError", "build_parser", "main", "parse_event", "serve"]
