"""The ``repeat-guard`` command's entry: the console script and ``python -m repeat_guard_entry``
call ``main``.

A ``hook`` command line of the plain shape ``install`` writes runs in ``repeat_guard_hookcall``
without the parser, a new process per tool call, so this package imports nothing else; any other
goes to ``repeat_guard_cli``, imported only then. (``python -m repeat_guard_cli``, which older
installs wrote into hook entries, runs the same ``main`` after importing the whole command.)
"""

from __future__ import annotations

import sys

from repeat_guard_hookcall import hook_shape, run_hook_call

TYPE_CHECKING = False  # not typing itself: see repeat_guard_hookcall
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command with ``argv`` (default: the process's arguments).

    Returns the exit status documented in each subcommand's ``--help``.
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    hook = hook_shape(arguments)
    status = None if hook is None else run_hook_call(hook)
    if status is not None:
        return status
    from repeat_guard_cli._cli import run_command_line  # noqa: PLC0415  # see the docstring

    return run_command_line(arguments)
