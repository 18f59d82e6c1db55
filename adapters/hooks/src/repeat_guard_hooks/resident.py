"""The resident guard: one process per state file that answers hook calls over its Unix socket
(and, with ``install --http``, over HTTP), so that a hook call need not import the core. Apart
from ``repeat_guard_hooks`` so that a hook process never imports it.
"""

from __future__ import annotations

from ._daemon import DEFAULT_IDLE, REQUEST_LIMIT, Daemon, HttpSettings, read_http_settings, serve

__all__ = [
    "DEFAULT_IDLE",
    "REQUEST_LIMIT",
    "Daemon",
    "HttpSettings",
    "read_http_settings",
    "serve",
]
