"""The resident guard's HTTP listener, for hosts whose hooks POST their input to a URL.

``POST /hook/<dialect>`` (or ``/hook/<dialect>?preset=<name>``) with the hook input as the body
and the secret of ``<state>.http`` in the ``X-Repeat-Guard-Secret`` header is answered as
``repeat-guard hook <dialect>`` (with ``--preset <name>``) would answer it: status 200 with the
hook's stdout as the body (empty when there is nothing to say). A call the hook would exit 1 for
(an invalid configuration) is answered 500 with the message as plain text, which the hosts
report as a non-blocking hook error, as they do the exit status.

Threat model (also in the hooks README): the listener binds 127.0.0.1 only, so only this
machine can reach it, but every local user and every page a local browser loads can. It does
nothing for a request without the secret (401), and the secret lives in a 0600 file in the
user's 0700 state directory and in the environment of the user's agent: another local user
cannot read it. A browser page can send a POST to 127.0.0.1 but cannot read the secret, and
cannot send a custom header without a CORS preflight, which is never granted; any request
carrying an ``Origin`` header (which browsers add to a cross-origin POST) is refused (403) before
its secret is looked at. A body over ``REQUEST_LIMIT`` is refused (413) unread, as is one
without a length (411). Nothing of a request (no path, header or argument) is logged; a refused
request gets one line naming the status only.
"""

from __future__ import annotations

import hmac
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from repeat_guard import PRESETS

from ._daemon import REQUEST_LIMIT
from ._dialects import DIALECTS, SECRET_HEADER, hook_path

if TYPE_CHECKING:
    from ._daemon import Daemon, HttpSettings
    from ._dialects import Dialect

__all__ = ["SECRET_HEADER", "check_secret", "make_server"]

# Each path the listener answers: the host's dialect and the preset (``None``: the host's own).
_PATHS: dict[str, tuple[Dialect, str | None]] = {
    hook_path(name, preset): (dialect, preset)
    for name, dialect in DIALECTS.items()
    for preset in (None, *PRESETS)
}


def check_secret(sent: str | None, secret: str) -> bool:
    """Whether ``sent`` (a request's secret header) is ``secret``, in constant time."""
    return sent is not None and hmac.compare_digest(sent.encode(), secret.encode())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, guard: Daemon, settings: HttpSettings) -> None:
        self.guard = guard
        self.secret = settings.secret
        super().__init__(("127.0.0.1", settings.port), _Handler)


def make_server(guard: Daemon, settings: HttpSettings) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 at ``settings.port`` answering hook calls for ``guard``."""
    return _Server(guard, settings)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10.0
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass  # a request line holds a path; nothing of a request is logged

    def do_POST(self) -> None:
        guard = self.server.guard
        refusal = self._refusal()
        if refusal is not None:
            guard.log(f"http: refused a request ({refusal})")
            self.close_connection = True
            self._send(refusal, b"", "text/plain")
            return
        data = self.rfile.read(int(self.headers["Content-Length"]))
        dialect, preset = _PATHS[self.path]
        outcome = guard.hook(dialect, None, None, data, preset=preset)
        if outcome is None:
            self._send(503, b"", "text/plain")
        elif outcome.status == 0:
            self._send(200, outcome.stdout, "application/json")
        else:
            self._send(500, outcome.stderr.encode("utf-8", "backslashreplace"), "text/plain")

    def _refusal(self) -> int | None:
        if self.headers.get("Origin") is not None:
            return 403
        if not check_secret(self.headers.get(SECRET_HEADER), self.server.secret):
            return 401
        if self.path not in _PATHS:
            return 404
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            return 411
        if int(length) > REQUEST_LIMIT:
            return 413
        return None

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response_only(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
