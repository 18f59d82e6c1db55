"""The hook process: ``repeat-guard hook HOST [--state PATH] [--config FILE] [--expire-days DAYS]
[--preset NAME]``, the line ``install`` writes, read by hand and run without building the
argparse parser (argparse and the translations it loads cost a hook process several
milliseconds), a new process per tool call. A hook command line not of exactly that shape
(``--help``, an abbreviated or repeated option, a missing or dash-led value, a number ``float``
refuses) goes to the command's parser, which answers it as it always has: the short way only
ever accepts what argparse accepts, with the same meaning.

The resident guard of the state file answers the call when one is running (see
``_client``): this path then imports what passing bytes needs, and no core,
SQLite, JSON or argparse. So the host's name and the preset's are taken as given
(``hook_shape``): the guard answers only for a name in ``DIALECTS`` and a preset the core
knows; a call no guard answered looks both up, and a name that is no host's or no preset goes to
argparse after all, which says so.
"""

from __future__ import annotations

import os
import sys

from ._client import encode_hook_request, hook_via_daemon, start_daemon
from ._limits import INPUT_LIMIT
from ._paths import resolve_state

TYPE_CHECKING = False  # not typing itself: see the package's __init__
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

__all__ = [
    "DAEMON_SWITCH",
    "HookArguments",
    "daemon_command",
    "hook_shape",
    "parse_hook_arguments",
    "run_hook_call",
    "run_hook_process",
    "silence",
]

DAEMON_SWITCH = "REPEAT_GUARD_DAEMON"
"""The environment variable that, set to ``off``, keeps every hook call in its own process."""

_OPTIONS = ("--state", "--config", "--expire-days", "--preset")
_CHUNK = 1 << 20


class HookArguments:
    """A ``hook`` command line: the host's dialect (its name in ``DIALECTS``) and the options,
    as argparse gives them (``expire_days`` ``None``: the store's own default; ``preset``
    ``None``: the host's own preset). A plain class, not a NamedTuple: this path must not import
    ``typing``."""

    __slots__ = ("agent", "config", "expire_days", "preset", "state")

    def __init__(
        self,
        agent: str,
        state: str | None = None,
        config: str | None = None,
        expire_days: float | None = None,
        preset: str | None = None,
    ) -> None:
        self.agent = agent
        self.state = state
        self.config = config
        self.expire_days = expire_days
        self.preset = preset

    def _fields(self) -> tuple[str, str | None, str | None, float | None, str | None]:
        return self.agent, self.state, self.config, self.expire_days, self.preset

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookArguments) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())


def hook_shape(arguments: Sequence[str]) -> HookArguments | None:
    """Return ``arguments`` (``["hook", host, option, value, ...]``) read as the ``hook``
    command without looking the host's name up, or ``None`` when they are not of that plain
    shape and argparse must decide."""
    if arguments[:1] != ["hook"] or len(arguments) < 2 or arguments[1].startswith("-"):
        return None
    values: dict[str, str] = {}
    rest = arguments[2:]
    if len(rest) % 2:
        return None
    for option, value in zip(rest[::2], rest[1::2], strict=True):
        if option not in _OPTIONS or option in values or value.startswith("-"):
            return None
        values[option] = value
    if values.get("--preset") == "":
        return None  # no preset's name: the resident guard would read it as none given
    expire_days = None
    if "--expire-days" in values:
        try:
            expire_days = float(values["--expire-days"])
        except ValueError:
            return None
    return HookArguments(
        arguments[1],
        values.get("--state"),
        values.get("--config"),
        expire_days,
        values.get("--preset"),
    )


def parse_hook_arguments(arguments: Sequence[str]) -> HookArguments | None:
    """``hook_shape``, and ``None`` too when the host is not in ``DIALECTS`` or the preset is
    none the core knows."""
    shape = hook_shape(arguments)
    if shape is None:
        return None
    return shape if _known(shape) else None


def _known(arguments: HookArguments) -> bool:
    # The host and the preset named are real: else argparse says what is wrong.
    from repeat_guard import PRESETS  # noqa: PLC0415  # the core, only now
    from repeat_guard_hooks import DIALECTS  # noqa: PLC0415  # only a hook command needs it

    return arguments.agent in DIALECTS and arguments.preset in (None, *PRESETS)


def run_hook_process(arguments: HookArguments) -> int:
    """``run_hook_call`` for a command line argparse has read (its host is in ``DIALECTS``)."""
    return run_hook_call(arguments) or 0


def run_hook_call(arguments: HookArguments) -> int | None:
    """Run one hook call on this process's stdin and stdout; return the exit status, or
    ``None`` when the host's name is not in ``DIALECTS`` or the preset's is none the core knows
    (argparse's to say; stdin was read).

    The resident guard of the state file answers it when one is running; else this process
    handles it itself, as the guard would, and starts a guard for the next call (unless
    ``$REPEAT_GUARD_DAEMON`` is ``off``).

    Fails open as the hook does: a stdin that cannot be read, or a stdout or stderr that cannot
    be written (closed, a full disk, a reader gone), gets one line in ``<state>.log`` and the
    status the call would have had."""
    import time  # noqa: PLC0415  # only the hook needs it

    state = resolve_state(arguments.state, os.environ, os.path.expanduser("~"))
    now = time.time()
    data = _read_stdin(INPUT_LIMIT)
    # A relative --config names a file from this process's directory, not the guard's.
    resident = os.environ.get(DAEMON_SWITCH) != "off" and (
        arguments.config is None or os.path.isabs(arguments.config)
    )
    if resident and isinstance(data, bytes):
        request = encode_hook_request(
            arguments.agent, arguments.config, arguments.expire_days, data, arguments.preset
        )
        answer = hook_via_daemon(state, request)
        if isinstance(answer, str):
            _log(arguments, state, "-", answer, now)
            return 0
        if answer is not None:
            return _deliver(arguments, state, *answer, now)
    if not _known(arguments):
        return None
    if isinstance(data, str):
        _log(arguments, state, "?", f"cannot read stdin: {data}", now)
        return 0
    status = _run_here(arguments, state, data, now)
    if resident:
        start_daemon(state, daemon_command(state))
    return status


def daemon_command(state: str) -> list[str]:
    """The command that serves ``state`` as its resident guard, with this interpreter."""
    return [sys.executable, "-m", "repeat_guard_entry", "daemon", "serve", "--state", state]


def _run_here(arguments: HookArguments, state: str, data: bytes, now: float) -> int:
    from repeat_guard_hooks import DIALECTS, HookOptions, run_hook  # noqa: PLC0415  # as above

    options = HookOptions(
        DIALECTS[arguments.agent], state, arguments.config, preset=arguments.preset
    )
    if arguments.expire_days is not None:
        options = options._replace(expire_after=arguments.expire_days * 86400.0)
    outcome = run_hook(options, data, now)
    stderr = outcome.stderr.encode("utf-8", "backslashreplace")
    return _deliver(arguments, state, outcome.status, outcome.stdout, stderr, now)


def _deliver(
    arguments: HookArguments, state: str, status: int, stdout: bytes, stderr: bytes, now: float
) -> int:
    """Write the answer's ``stdout`` and ``stderr``; return ``status``."""
    failed = _write(sys.stdout, stdout)
    if failed is not None:
        _log(arguments, state, "-", f"cannot write the answer to stdout: {failed}", now)
    failed = _write(sys.stderr, stderr)
    if failed is not None:
        message = stderr.decode("utf-8", "replace").strip()
        _log(arguments, state, "-", f"cannot write to stderr ({failed}): {message}", now)
    return status


def _log(arguments: HookArguments, state: str, hook_event: str, reason: str, now: float) -> None:
    from repeat_guard_hooks import log_line  # noqa: PLC0415  # only when something went wrong

    log_line(state, f"{arguments.agent} {hook_event}", reason, now)


def _read_stdin(limit: int) -> bytes | str:
    """The bytes on stdin, no more than ``limit`` and one (which ``run_hook`` refuses), or why
    they cannot be read."""
    if sys.stdin is None:
        return "it is closed"
    try:
        stream = sys.stdin.buffer
        data = stream.read(limit + 1)
        if len(data) > limit:
            # Read to the end without keeping it: the host writing the event must not meet a
            # pipe closed under it, and memory stays at the limit.
            while stream.read(_CHUNK):
                pass
    except OSError as error:
        return error.strerror or type(error).__name__
    return data


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


def silence(stream: TextIO) -> None:
    """Point ``stream`` at /dev/null, after its reader went away or writing to it failed, so
    that the interpreter's final flush of what is still buffered cannot fail a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, stream.fileno())
    os.close(devnull)
