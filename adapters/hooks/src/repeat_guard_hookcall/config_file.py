"""Loading a configuration file: the one loader the hook and every command use.

A module of its own, which ``import repeat_guard_hookcall`` does not load (it imports the core):
a command that reads a configuration but runs no hook (``audit``, ``replay``) imports it without
``repeat_guard_hooks`` and its hosts' dialects, and ``repeat_guard_hooks`` names the same
functions.

``load_config_file`` reads the file (``read_config_file``) and hands its bytes, with any
overrides, to the core's one parser (``load_config_or_error``, which needs no ``returns``); each
caller only words the answer for its user.

A configuration is a small regular file. Anything else is refused before a byte is read,
instead of hanging or filling memory: a FIFO (opening it would wait for a writer, and a hook
that waits blocks the agent's tool call), a device (``/dev/zero`` never ends), a socket.
The file is opened without blocking (a FIFO's open would wait for a writer) and what was
opened is looked at before a byte is read. A file past ``CONFIG_LIMIT`` is refused after
reading one byte more than the limit.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

from repeat_guard import ConfigError, GuardConfig, load_config_or_error

__all__ = ["CONFIG_LIMIT", "load_config_file", "read_config_file"]

CONFIG_LIMIT = 1 << 20
"""Bytes a configuration file may hold; a larger one is refused unread."""

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO's open must not wait


def read_config_file(path: str) -> bytes | str:
    """Return the bytes of the configuration file at ``path``, or why it cannot be read (a
    message naming the file: it is missing, not a regular file, or larger than
    ``CONFIG_LIMIT``)."""
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
        with os.fdopen(descriptor, "rb") as stream:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return f"cannot read config file {path}: not a regular file"
            data = stream.read(CONFIG_LIMIT + 1)
    except OSError as error:
        return f"cannot read config file {path}: {error.strerror}"
    if len(data) > CONFIG_LIMIT:
        return f"cannot read config file {path}: larger than {CONFIG_LIMIT >> 20} MiB"
    return data


def load_config_file(
    path: str | None,
    overrides: Mapping[str, object] | None = None,
    defaults: Mapping[str, object] | None = None,
) -> GuardConfig | ConfigError | str:
    """Return the configuration in the file at ``path`` (the defaults for ``None``) with
    ``overrides`` (keys as in ``parse_config``) on top and ``defaults`` under it; or why the
    file cannot be read (a message naming it); or what is wrong with it (the core's
    ``ConfigError``, naming it)."""
    data = b"{}" if path is None else read_config_file(path)
    if isinstance(data, str):
        return data
    return load_config_or_error(data, source=path, overrides=overrides, defaults=defaults)
