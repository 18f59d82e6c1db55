"""``main``: the command's one entry. A ``hook`` command line of the plain shape ``install``
writes runs in ``_hook_process`` without the parser; any other goes to ``_cli``, imported only
then.
"""

from __future__ import annotations

import sys

from ._hook_process import hook_shape, run_hook_call

TYPE_CHECKING = False  # not typing itself: see the package's __init__
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
    from ._cli import run_command_line  # noqa: PLC0415  # see the module's docstring

    return run_command_line(arguments)
