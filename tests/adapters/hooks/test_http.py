"""The resident guard's HTTP listener: what an http hook gets, and what everyone else does not."""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from repeat_guard_hooks import CODEX, HookOptions, run_hook
from repeat_guard_hooks._http import SECRET_HEADER, check_secret
from repeat_guard_hooks.resident import REQUEST_LIMIT

from .test_daemon import Running, _pre, _repeats

SECRET = "0123456789abcdef0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Running, int]]:
    port = _free_port()
    state = tmp_path / "st.db"
    Path(f"{state}.http").write_text(json.dumps({"port": port, "secret": SECRET}))
    running = Running(state)
    assert running.daemon is not None
    assert running.daemon.http_port == port
    yield running, port
    running.stop()


def _post(
    port: int, body: bytes, headers: Mapping[str, str], path: str = "/hook/claude-code"
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", path, body=body, headers=dict(headers))
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_an_http_hook_gets_what_the_command_hook_writes(
    served: tuple[Running, int], tmp_path: Path
) -> None:
    running, port = served
    here = HookOptions(CODEX, str(tmp_path / "here.db"))
    for _ in range(5):
        status, body = _post(port, _pre(), {SECRET_HEADER: SECRET}, "/hook/codex")
        assert (status, body) == (200, run_hook(here, _pre(), time.time()).stdout)
    assert _repeats(running.state) == {"s": 5}
    # One connection kept alive for several calls, as an http client may.
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for _ in range(2):
        connection.request(
            "POST", "/hook/claude-code", body=_pre(), headers={SECRET_HEADER: SECRET}
        )
        assert connection.getresponse().read() == b""
    connection.close()
    assert _repeats(running.state) == {"s": 7}
    reply = running.daemon.status() if running.daemon else ""
    assert f"http 127.0.0.1:{port}\ncalls 7\n" in reply


def test_an_http_hook_names_its_preset_in_the_path(served: tuple[Running, int]) -> None:
    running, port = served
    poll = {
        "session_id": "p",
        "cwd": "/nonexistent",
        "hook_event_name": "PostToolUse",
        "tool_name": "write_stdin",
        "tool_input": {"session_id": 7},
        "tool_response": "1 passed",
    }
    body = json.dumps(poll).encode()
    # Under Codex's own preset the poll's result is read (the store holds the agent); under
    # seed it changes nothing, and the store is not opened for it.
    assert _post(port, body, {SECRET_HEADER: SECRET}, "/hook/codex?preset=seed") == (200, b"")
    assert not running.state.exists()
    assert _post(port, body, {SECRET_HEADER: SECRET}, "/hook/codex") == (200, b"")
    assert running.state.exists()
    assert _post(port, body, {SECRET_HEADER: SECRET}, "/hook/codex?preset=nope")[0] == 404


def test_a_bad_configuration_is_a_500_with_the_message(
    served: tuple[Running, int], tmp_path: Path
) -> None:
    _, port = served
    (tmp_path / ".git").mkdir()
    (tmp_path / ".repeat-guard.toml").write_text("thresholds = [1]\n")
    status, body = _post(port, _pre(cwd=str(tmp_path)), {SECRET_HEADER: SECRET})
    assert status == 500
    assert body.decode().startswith("repeat-guard: invalid configuration in ")


@pytest.mark.parametrize(
    ("headers", "path", "expected"),
    [
        ({}, "/hook/claude-code", 401),
        ({SECRET_HEADER: SECRET[:-1] + "0"}, "/hook/claude-code", 401),
        ({SECRET_HEADER: SECRET, "Origin": "https://example.com"}, "/hook/claude-code", 403),
        ({SECRET_HEADER: SECRET}, "/hook/no-such-host", 404),
        ({SECRET_HEADER: SECRET}, "/hook/claude-code?x=1", 404),
        ({SECRET_HEADER: SECRET, "Content-Length": str(REQUEST_LIMIT + 1)}, "/hook/codex", 413),
    ],
)
def test_requests_without_the_secret_or_out_of_bounds_are_refused_unread(
    served: tuple[Running, int], headers: dict[str, str], path: str, expected: int
) -> None:
    running, port = served
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if "Content-Length" not in headers:
            lines.append(f"Content-Length: {len(_pre())}")
        client.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + _pre())
        reply = client.makefile("rb").read()
    assert reply.startswith(f"HTTP/1.1 {expected} ".encode())
    assert b"Connection: close" in reply
    assert not running.state.exists()  # nothing was counted
    log = Path(f"{running.state}.log").read_text()
    assert log.endswith(f"daemon: http: refused a request ({expected})\n")
    assert "ls" not in log


def test_a_request_without_a_length_is_refused(served: tuple[Running, int]) -> None:
    _, port = served
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        head = f"POST /hook/codex HTTP/1.1\r\n{SECRET_HEADER}: {SECRET}\r\n"
        client.sendall(head.encode() + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        assert client.makefile("rb").read().startswith(b"HTTP/1.1 411 ")


def test_a_replaced_state_file_is_a_503(tmp_path: Path) -> None:
    port = _free_port()
    state = tmp_path / "st.db"
    Path(f"{state}.http").write_text(json.dumps({"port": port, "secret": SECRET}))
    running = Running(state, tick=60)  # no look between the calls: the call itself notices
    try:
        assert _post(port, _pre(), {SECRET_HEADER: SECRET})[0] == 200
        os.replace(state, tmp_path / "elsewhere.db")
        assert _post(port, _pre(), {SECRET_HEADER: SECRET}) == (503, b"")
    finally:
        assert running.stop() == "its state file was replaced"


def test_the_secret_is_compared_whole() -> None:
    assert check_secret(SECRET, SECRET)
    assert not check_secret(None, SECRET)
    assert not check_secret(SECRET + "x", SECRET)
    assert not check_secret("é", SECRET)


def test_a_port_in_use_or_bad_settings_mean_no_http(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        Path(f"{state}.http").write_text(json.dumps({"port": port, "secret": SECRET}))
        running = Running(state)
        running.stop()
    Path(f"{state}.http").write_text("{")
    running = Running(state)
    running.stop()
    lines = Path(f"{state}.log").read_text().splitlines()
    assert lines[0].endswith(
        f"daemon: no HTTP: cannot listen on 127.0.0.1:{port}: Address already in use"
    )
    assert lines[2].endswith(f"daemon: no HTTP: cannot read {state}.http: JSONDecodeError")


def test_other_methods_and_garbage_get_errors_and_no_log_of_the_request(
    served: tuple[Running, int],
) -> None:
    running, port = served
    for request, expected in [
        (b"GET /hook/codex?ls HTTP/1.1\r\n\r\n", b"HTTP/1.1 501 "),
        (b"\x16\x03\x01 ls\r\n\r\n", b"Error code: 400"),  # answered as HTTP/0.9
    ]:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(request)
            assert expected in client.makefile("rb").read()
    assert not Path(f"{running.state}.log").exists()
