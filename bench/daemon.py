"""Resident guard benchmark: a hook call through the guard, over its socket and over HTTP.

Three comparisons, each of two things timed alternately in one run, so that load on the
machine falls on both alike:

- the command hook through a warm guard (``repeat-guard hook claude-code``, which hands the
  JSON to the running guard over its Unix socket) against the do-nothing Python hook that reads
  the same JSON (target: at most 1.1x, median and p95);
- an http hook call (a POST of the same JSON to the guard's HTTP listener, with its secret, on
  a new connection each time, as a host without keep-alive would make it) against the same
  round trip to a do-nothing HTTP server in a process of its own, built on the same standard
  library server (target: at most 1.5x, and at most 2 ms median);
- a cold start (no guard running: the hook handles the call itself and starts a guard) against
  today's hook (``REPEAT_GUARD_DAEMON=off``) (target: at most 1.1x). After each cold call the
  guard it started is waited for and stopped, untimed.
"""

from __future__ import annotations

import fcntl
import http.client
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from repeat_guard_hookcall import ask_daemon

from .hook import DO_NOTHING, PAYLOAD, serving

RUNS = 40
WARMUP = 3
HTTP_RUNS = 400
SECRET_HEADER = "X-Repeat-Guard-Secret"
BARE_SERVER = """\
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response_only(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "0")
        self.end_headers()

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def _p95(samples: Sequence[float]) -> float:
    return sorted(samples)[max(0, round(0.95 * len(samples)) - 1)]


def _process(command: Sequence[str], data: bytes, env: dict[str, str]) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(command, input=data, stdout=subprocess.DEVNULL, env=env, check=True)

    return run


def _post(port: int, data: bytes, headers: dict[str, str]) -> Callable[[], None]:
    def run() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("POST", "/hook/claude-code", body=data, headers=headers)
        response = connection.getresponse()
        response.read()
        connection.close()
        assert response.status == 200

    return run


def _sample(
    pair: dict[str, Callable[[], None]],
    runs: int,
    after: dict[str, Callable[[], None]] | None = None,
) -> dict[str, list[float]]:
    """Time each of ``pair`` alternately, forwards then backwards; ``after`` runs untimed."""
    samples: dict[str, list[float]] = {name: [] for name in pair}
    for run in range(WARMUP + runs):
        order = list(pair.items())
        for name, call in order if run % 2 else reversed(order):
            start = time.perf_counter()
            call()
            elapsed = time.perf_counter() - start
            if run >= WARMUP:
                samples[name].append(elapsed)
            if after and name in after:
                after[name]()
    return samples


def _stop(state: str) -> None:
    """Wait for the guard a cold call started, stop it, and wait until it let go of its lock."""
    assert serving(state), "the cold call started no guard"
    ask_daemon(state, b"Q\n")
    descriptor = os.open(f"{state}.lock", os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
    finally:
        os.close(descriptor)


def _print(title: str, labels: dict[str, str], samples: dict[str, list[float]]) -> None:
    print(title)
    for name, label in labels.items():
        median, p95 = statistics.median(samples[name]), _p95(samples[name])
        print(f"  {label:<34} median {median * 1000:7.2f} ms   p95 {p95 * 1000:7.2f} ms")


def _ratio(label: str, samples: dict[str, list[float]], ours: str, base: str) -> None:
    median = statistics.median(samples[ours]) / statistics.median(samples[base])
    p95 = _p95(samples[ours]) / _p95(samples[base])
    print(f"  {label:<34} median {median:6.2f}x    p95 {p95:6.2f}x")


def main() -> None:
    """Run the three comparisons and print their ratios."""
    executable = str(Path(sys.executable).parent / "repeat-guard")
    data = json.dumps(PAYLOAD).encode()
    with tempfile.TemporaryDirectory() as directory:
        state = str(Path(directory) / "state" / "state.sqlite3")
        secret = secrets.token_hex(16)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        os.makedirs(os.path.dirname(state), mode=0o700)
        Path(f"{state}.http").write_text(json.dumps({"port": port, "secret": secret}))
        baseline = Path(directory) / "do_nothing_hook.py"
        baseline.write_text(DO_NOTHING)
        env = {**os.environ, "REPEAT_GUARD_STATE": state, "REPEAT_GUARD_DAEMON": "auto"}
        off = {**env, "REPEAT_GUARD_DAEMON": "off"}
        hook = [executable, "hook", "claude-code"]
        do_nothing = _process([sys.executable, str(baseline)], data, env)

        guard = subprocess.Popen([executable, "daemon", "serve", "--state", state], env=env)
        bare = subprocess.Popen(
            [sys.executable, "-c", BARE_SERVER], stdout=subprocess.PIPE, text=True
        )
        try:
            assert serving(state), "the guard did not start"
            assert bare.stdout is not None
            bare_port = int(bare.stdout.readline())
            warm = _sample({"warm": _process(hook, data, env), "baseline": do_nothing}, RUNS)
            headers = {SECRET_HEADER: secret, "Content-Type": "application/json"}
            http_samples = _sample(
                {"http": _post(port, data, headers), "bare": _post(bare_port, data, {})},
                HTTP_RUNS,
            )
        finally:
            ask_daemon(state, b"Q\n")
            guard.wait(timeout=30)
            bare.terminate()
            bare.wait(timeout=30)
        cold = _sample(
            {"cold": _process(hook, data, env), "today": _process(hook, data, off)},
            RUNS,
            after={"cold": lambda: _stop(state)},
        )
    print(
        f"daemon: the resident guard, {RUNS} hook runs and {HTTP_RUNS} http runs each, alternating"
    )
    _print(
        "  warm guard",
        {"baseline": "do-nothing Python hook", "warm": "repeat-guard hook via the guard"},
        warm,
    )
    _ratio("ratio (target <= 1.1)", warm, "warm", "baseline")
    _print(
        "  http",
        {"bare": "POST to a do-nothing server", "http": "http hook call to the guard"},
        http_samples,
    )
    _ratio("ratio (target <= 1.5, <= 2 ms)", http_samples, "http", "bare")
    _print(
        "  cold start",
        {"today": "hook, REPEAT_GUARD_DAEMON=off", "cold": "hook with no guard running"},
        cold,
    )
    _ratio("ratio (target <= 1.1)", cold, "cold", "today")


if __name__ == "__main__":
    main()
