"""The ``repeat-guard`` command's entry: the console script and ``python -m repeat_guard_entry``
call ``main``.

A ``hook`` command line of the plain shape ``install`` writes runs in ``repeat_guard_hookcall``
without the parser, a new process per tool call, so this package imports nothing else; any other
goes to ``repeat_guard_cli``, imported only then. (``python -m repeat_guard_cli``, which older
installs wrote into hook entries, runs the same ``main`` after importing the whole command.)

The console script and ``python -m`` enter through ``console``, which ends the process as soon
as ``main`` has returned and the output is flushed.
"""

from __future__ import annotations

import os
import sys

from repeat_guard_hookcall import hook_shape, run_hook_call

TYPE_CHECKING = False  # not typing itself: see repeat_guard_hookcall
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["console", "main"]


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


def console() -> int:
    """Run ``main`` as the ``repeat-guard`` script and ``python -m repeat_guard_entry`` do, then
    end the process at once with its status, once stdout and stderr are flushed.

    What the interpreter would do after that, freeing every module and object one by one, is work
    no command needs: every file a command writes is closed (written whole and renamed) and every
    worker process it starts has ended before ``main`` returns (a resident guard a hook starts
    lives on by design), so what is left registered to run at exit (Dask's handlers and idle
    threads, when Dask ran) has nothing to do. That teardown was about a sixth of a hook call
    answered by the resident guard and a seventh of an empty audit (1.22x and 1.16x with and
    without). Where a flush fails (the reader of stdout went away), returns the status instead, for
    the interpreter's usual exit to deal with as before.
    """
    status = main()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a closed pipe; a stream already closed
        return status
    os._exit(status)
