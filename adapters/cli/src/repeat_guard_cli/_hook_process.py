"""The hook process: ``repeat-guard hook HOST [--state PATH] [--config FILE] [--expire-days
DAYS]``, the line ``install`` writes, read by hand and run without building the argparse parser
(argparse and the translations it loads cost a hook process several milliseconds), a new
process per tool call. A hook command line not of exactly that shape (``--help``, an
abbreviated or repeated option, a missing or dash-led value, a number ``float`` refuses) goes
to the full parser, which answers it as it always has: the short way only ever accepts what
argparse accepts, with the same meaning.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import NamedTuple, TextIO

from ._errors import silence

__all__ = ["HookArguments", "parse_hook_arguments", "run_hook_process"]

_OPTIONS = ("--state", "--config", "--expire-days")


class HookArguments(NamedTuple):
    """A ``hook`` command line: the host's dialect (its name in ``DIALECTS``) and the options,
    as argparse gives them (``expire_days`` ``None``: the store's own default)."""

    agent: str
    state: str | None = None
    config: str | None = None
    expire_days: float | None = None


def parse_hook_arguments(arguments: Sequence[str]) -> HookArguments | None:
    """Return ``arguments`` (``["hook", agent, option, value, ...]``) read as the ``hook``
    command, or ``None`` when they are not of that plain shape and argparse must decide."""
    if arguments[:1] != ["hook"] or len(arguments) < 2:
        return None
    from repeat_guard_hooks import DIALECTS  # noqa: PLC0415  # only a hook command needs it

    agent = arguments[1]
    if agent not in DIALECTS:
        return None
    values: dict[str, str] = {}
    rest = arguments[2:]
    if len(rest) % 2:
        return None
    for option, value in zip(rest[::2], rest[1::2], strict=True):
        if option not in _OPTIONS or option in values or value.startswith("-"):
            return None
        values[option] = value
    expire_days = None
    if "--expire-days" in values:
        try:
            expire_days = float(values["--expire-days"])
        except ValueError:
            return None
    return HookArguments(agent, values.get("--state"), values.get("--config"), expire_days)


def run_hook_process(arguments: HookArguments) -> int:
    """Run one hook call on this process's stdin and stdout; return the exit status.

    Fails open as the hook does: a stdin that cannot be read, or a stdout or stderr that cannot
    be written (closed, a full disk, a reader gone), gets one line in ``<state>.log`` and the
    status the call would have had."""
    import time  # noqa: PLC0415  # only the hook needs it

    from repeat_guard_hooks import (  # noqa: PLC0415
        DIALECTS,
        HookOptions,
        log_reason,
        resolve_state,
        run_hook,
    )

    state = resolve_state(arguments.state, os.environ, os.path.expanduser("~"))
    options = HookOptions(DIALECTS[arguments.agent], state, arguments.config)
    if arguments.expire_days is not None:
        options = options._replace(expire_after=arguments.expire_days * 86400.0)
    now = time.time()
    data = _read_stdin()
    if isinstance(data, str):
        log_reason(options, "?", f"cannot read stdin: {data}", now)
        return 0
    outcome = run_hook(options, data, now)
    failed = _write(sys.stdout, outcome.stdout)
    if failed is not None:
        log_reason(options, "-", f"cannot write the answer to stdout: {failed}", now)
    failed = _write(sys.stderr, outcome.stderr.encode("utf-8", "backslashreplace"))
    if failed is not None:
        log_reason(
            options, "-", f"cannot write to stderr ({failed}): {outcome.stderr.strip()}", now
        )
    return outcome.status


def _read_stdin() -> bytes | str:
    """The bytes on stdin, or why they cannot be read."""
    if sys.stdin is None:
        return "it is closed"
    try:
        return sys.stdin.buffer.read()
    except OSError as error:
        return error.strerror or type(error).__name__


def _write(stream: TextIO | None, data: bytes) -> str | None:
    """Write ``data`` to ``stream``'s bytes, flushed; return why it could not be, or ``None``."""
    if not data:
        return None
    if stream is None:
        return "it is closed"
    try:
        stream.buffer.write(data)
        stream.buffer.flush()
    except OSError as error:
        silence(stream)
        return error.strerror or type(error).__name__
    return None
