"""Reading a configuration file's bytes: the one reader the hook and every command use.

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

__all__ = ["CONFIG_LIMIT", "read_config_file"]

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
