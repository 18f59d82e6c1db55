"""One hook call, start to finish: stdin in, the hook's stdout, stderr and exit status out.

A hook must never break the agent that runs it. So every failure but one fails open: the
status is 0, stdout is empty (the agent proceeds as if there were no hook) and one line saying
why goes to a log file beside the state (``<state>.log``, created 0600). The log names the
session's hook event and the reason, never a tool's arguments: an unexpected exception is
logged by its type and the place it was raised, not its message.

The one exception is a bad configuration, which the user must see: its message, naming the file
and the key, goes to stderr with the status the host shows to the user without stopping the call
(``Dialect.error_status``: 1 for Claude Code, a non-blocking hook error, and Codex).

``run_hook`` is the hook's whole answer as a function of the dialect and the input bytes (and
the time): ``repeat-guard hook HOST`` writes what it returns, and anything else that answers a
host's hook calls answers by calling it.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from typing import TYPE_CHECKING, NamedTuple

from repeat_guard import NO_PRESET, PRESETS, ConfigError, Event, GuardConfig, ToolCallReturned
from repeat_guard_hookcall import resolve_state
from repeat_guard_hookcall.config_file import load_config_file

from ._dialects import (
    AfterCall,
    AgentEvent,
    Dialect,
    SessionEnded,
    carries,
    hook_input_or_reason,
    refusal,
    reminder_text,
    render_answer,
)
from ._store import (
    BUSY_TIMEOUT,
    DEFAULT_EXPIRE_AFTER,
    FRESH_STORES,
    CorruptStore,
    ForeignStore,
    StoreKeeper,
    StoreResult,
    apply_action,
    make_private_folders,
    set_aside,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from repeat_guard import Reminder

__all__ = [
    "CONFIG_FILE_NAME",
    "LOG_LIMIT",
    "HookOptions",
    "HookOutcome",
    "find_config_file",
    "hook_config",
    "log_line",
    "log_reason",
    "resolve_state",
    "run_hook",
]

CONFIG_FILE_NAME = ".repeat-guard.toml"
LOG_LIMIT = 1 << 20
"""Bytes of ``<state>.log`` past which it is renamed ``<state>.log.1`` and begun afresh."""


# NamedTuples rather than dataclasses, as in _dialects: cheaper to define in every hook process.
class HookOptions(NamedTuple):
    """How to run: the host's dialect (a row of ``DIALECTS``), the state file, an explicit
    config file, expiry.

    ``expire_after``: seconds after which an unseen agent's chain is dropped;
    ``busy_timeout``: seconds to wait for another hook's transaction before failing open;
    ``stores``: where each call gets its connection to the store (the resident guard keeps
    one open between calls); ``preset``: the preset that stands in for the host's own
    (``--preset``, one of ``PRESETS``; ``None``: the host's), under the configuration file's
    own ``preset`` (``hook_config``).
    """

    dialect: Dialect
    state: str
    config: str | None = None
    expire_after: float = DEFAULT_EXPIRE_AFTER
    busy_timeout: float = BUSY_TIMEOUT
    stores: StoreKeeper = FRESH_STORES
    preset: str | None = None


class HookOutcome(NamedTuple):
    """What the hook process writes and returns."""

    status: int
    stdout: bytes = b""
    stderr: str = ""


def run_hook(options: HookOptions, data: bytes, now: float) -> HookOutcome:
    """Run one hook call on the input ``data`` at time ``now`` (seconds since the epoch)."""
    hook_event = "?"
    try:
        hook_input = hook_input_or_reason(options.dialect, data)
        if isinstance(hook_input, str):
            return _fail_open(options, hook_event, hook_input, now)
        hook_event = hook_input.hook_event
        action = hook_input.action
        if not isinstance(action, AgentEvent | SessionEnded | AfterCall):
            return HookOutcome(0)
        preset = options.preset or options.dialect.name
        config = hook_config(options.config, hook_input.cwd, preset)
        if isinstance(config, str):
            return HookOutcome(options.dialect.error_status, b"", f"repeat-guard: {config}\n")
        needed = _needed(config, action)
        if needed is None:
            return HookOutcome(0)
        result = _apply(options, config, needed, now)
        if result.dropped:
            log_reason(
                options, hook_event, f"{result.dropped} unreadable chain(s) started afresh", now
            )
        return _answer(options.dialect, hook_event, result.reminders, result.denied)
    except (sqlite3.Error, OSError) as error:
        return _fail_open(options, hook_event, _store_reason(error), now)
    except Exception as error:
        return _fail_open(options, hook_event, f"internal error: {_where(error)}", now)


def _answer(
    dialect: Dialect, hook_event: str, reminders: Sequence[Reminder], denied: str | None
) -> HookOutcome:
    # What the hook writes: the host's answer on stdout, or for a host that reads a refusal
    # from the exit status (``Dialect.deny_status``), that status with the refusal on stderr.
    if denied is not None and dialect.deny_status:
        text = refusal(denied, reminder_text(dialect, reminders))
        return HookOutcome(dialect.deny_status, b"", f"{text}\n")
    return HookOutcome(0, render_answer(dialect, hook_event, reminders, denied))


def _needed(
    config: GuardConfig, action: AgentEvent | SessionEnded | AfterCall
) -> AgentEvent | SessionEnded | AfterCall | None:
    # The action less what changes nothing (``None``: all of it): a result the configuration
    # ignores, or an after-call's, whose reminders are due all the same.
    if isinstance(action, AgentEvent) and _ignores(config, action.event):
        return None
    if isinstance(action, AfterCall) and _ignores(config, action.returned):
        return action._replace(returned=None)
    return action


def _ignores(config: GuardConfig, event: Event | None) -> bool:
    # A result changes nothing unless the configuration reads that tool's results (its own
    # progress, or a preset's) or keeps a retry window: the store stays shut.
    if not isinstance(event, ToolCallReturned) or config.retry_window:
        return False
    return config.policy(event.tool).progress != "result"


def _apply(
    options: HookOptions,
    config: GuardConfig,
    action: AgentEvent | SessionEnded | AfterCall,
    now: float,
) -> StoreResult:
    try:
        return _apply_once(options, config, action, now)
    except CorruptStore as error:
        aside = set_aside(options.state, now)
        log_reason(options, "-", f"state store corrupt ({error}); set aside as {aside}", now)
    return _apply_once(options, config, action, now)


def _apply_once(
    options: HookOptions,
    config: GuardConfig,
    action: AgentEvent | SessionEnded | AfterCall,
    now: float,
) -> StoreResult:
    stores = options.stores
    connection = stores.open(options.state, options.busy_timeout)
    carry = carries(options.dialect)
    try:
        result = apply_action(connection, config, action, now, options.expire_after, carry=carry)
    except BaseException:
        stores.discard(connection)
        raise
    stores.release(connection)
    return result


def find_config_file(cwd: str | None) -> str | None:
    """Return the nearest ``.repeat-guard.toml`` from ``cwd`` upwards, or ``None``.

    The search stops after the first directory holding ``.git`` (the repository root) or at
    the filesystem root; a ``cwd`` that is missing or relative finds nothing.
    """
    if cwd is None or not os.path.isabs(cwd):
        return None
    directory = os.path.normpath(cwd)
    while True:
        candidate = os.path.join(directory, CONFIG_FILE_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory or os.path.exists(os.path.join(directory, ".git")):
            return None
        directory = parent


def hook_config(
    explicit: str | None, cwd: str | None, preset: str = NO_PRESET
) -> GuardConfig | str:
    """The configuration a hook run from ``cwd`` uses, or what is wrong with it (for the user).

    ``explicit`` (``--config``) when given, else the nearest ``.repeat-guard.toml``
    (``find_config_file``), else the defaults; with ``preset`` (the hook's ``--preset``, else
    its host's name: that host's polling tools follow their results) unless the file says
    ``preset`` itself, which wins (``"seed"``: none). So the order, last word first: the file,
    ``--preset``, the host's own preset. A name that is no preset (a host given none) adds
    none."""
    path = explicit if explicit is not None else find_config_file(cwd)
    # A host with no preset of its own (one added after the presets were made) gets none.
    defaults = {"preset": preset} if preset in PRESETS else None
    config = load_config_file(path, defaults=defaults)
    if isinstance(config, ConfigError):
        return f"invalid configuration in {path}: key {config.key!r}: {config.message}"
    return config


def _fail_open(options: HookOptions, hook_event: str, reason: str, now: float) -> HookOutcome:
    log_reason(options, hook_event, reason, now)
    return HookOutcome(0)


def log_reason(options: HookOptions, hook_event: str, reason: str, now: float) -> None:
    """Append one line to ``<state>.log``: the time ``now``, this process, the dialect, the
    ``hook_event`` (``-`` when none applies) and ``reason``, which must not quote a tool's
    arguments. Never raises and never waits: a log that cannot be written (its folder cannot
    be made, it is not a regular file, the disk is full) is passed over."""
    log_line(options.state, f"{options.dialect.name} {hook_event}", reason, now)


def log_line(state: str, source: str, reason: str, now: float) -> None:
    """Append one line to ``<state>.log``, as ``log_reason`` does, saying ``source`` (what
    logs: a dialect and its hook event, or the resident guard) and ``reason``."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    line = f"{stamp} pid={os.getpid()} {source}: {reason}\n"
    path = f"{state}.log"
    try:
        # The store's folder, made as the store makes it: the first hook may fail before that.
        make_private_folders(os.path.dirname(path) or ".")
        descriptor = _open_log(path)
        opened = os.fstat(descriptor)
        if opened.st_size >= LOG_LIMIT:
            # A store that stays unusable logs every tool call: the log is kept to two files.
            os.close(descriptor)
            if os.stat(path).st_ino == opened.st_ino:  # not renamed by another hook meanwhile
                os.replace(path, f"{path}.1")
            descriptor = _open_log(path)
        try:
            os.write(descriptor, line.encode("utf-8", "replace"))
        finally:
            os.close(descriptor)
    except OSError:
        pass  # nowhere left to say it; the agent still proceeds


def _open_log(path: str) -> int:
    # Non-blocking: opening a FIFO for writing would wait for a reader, and the agent with it.
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o600)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise OSError(f"{path} is not a regular file")
    return descriptor


def _store_reason(error: sqlite3.Error | OSError) -> str:
    if isinstance(error, ForeignStore):  # its message names the version, and nothing else
        return f"stood aside: {error}"
    return f"state store unusable: {_describe(error)}"


def _describe(error: sqlite3.Error | OSError) -> str:
    # Neither carries argument text: SQLite's error name, or the OS's errno text.
    if isinstance(error, sqlite3.Error):
        detail = getattr(error, "sqlite_errorname", None) or str(error)
    else:
        detail = error.strerror or ""
    return f"{type(error).__name__} {detail}".rstrip()


def _where(error: Exception) -> str:
    # The type and the innermost place only: an exception's message may quote arguments.
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_next is not None:
        traceback = traceback.tb_next
    assert traceback is not None  # a raised exception has one
    place = f"{os.path.basename(traceback.tb_frame.f_code.co_filename)}:{traceback.tb_lineno}"
    return f"{type(error).__name__} at {place}"
