"""The resident guard in process: it answers what run_hook answers, keeps SQLite the store of
record beside hook processes, and stops when it should."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from repeat_guard_hookcall import (
    ask_daemon,
    daemon_paths,
    decode_answer,
    encode_answer,
    encode_hook_request,
    hook_via_daemon,
    start_daemon,
)
from repeat_guard_hookcall._limits import INPUT_LIMIT
from repeat_guard_hooks import CLAUDE_CODE, DIALECTS, HookOptions, run_hook
from repeat_guard_hooks._daemon import _Keeper
from repeat_guard_hooks.resident import (
    DEFAULT_IDLE,
    REQUEST_LIMIT,
    Daemon,
    HttpSettings,
    read_http_settings,
    serve,
)


def _pre(session: str = "s", command: str = "ls", cwd: str = "/nonexistent") -> bytes:
    payload = {
        "session_id": session,
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    return json.dumps(payload).encode()


def _repeats(state: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(state)) as connection, connection:
        rows = connection.execute("SELECT agent, chain FROM agents").fetchall()
    return {agent: json.loads(chain)[3] for agent, chain in rows}


class Running:
    """A guard serving in a thread of this process."""

    def __init__(self, state: Path, idle: float = DEFAULT_IDLE, tick: float = 0.05) -> None:
        self.state = state
        self.ready = threading.Event()
        self.daemon: Daemon | None = None
        self.reason: str | None = None

        def run() -> None:
            self.reason = serve(str(state), idle, tick=tick, ready=self._ready)

        self.thread = threading.Thread(target=run)
        self.thread.start()
        assert self.ready.wait(10)

    def _ready(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.ready.set()

    def stop(self) -> str | None:
        ask_daemon(str(self.state), b"Q\n")
        self.thread.join(10)
        assert not self.thread.is_alive()
        return self.reason


@pytest.fixture
def guard(tmp_path: Path) -> Iterator[Running]:
    running = Running(tmp_path / "st.db")
    yield running
    if running.thread.is_alive():
        running.stop()


def _hook(state: Path, data: bytes, dialect: str = "claude-code", **options: object) -> object:
    config = options.get("config")
    days = options.get("expire_days")
    preset = options.get("preset")
    assert config is None or isinstance(config, str)
    assert days is None or isinstance(days, float)
    assert preset is None or isinstance(preset, str)
    return hook_via_daemon(str(state), encode_hook_request(dialect, config, days, data, preset))


def test_the_guard_answers_what_run_hook_answers(guard: Running, tmp_path: Path) -> None:
    here = tmp_path / "here.db"
    calls = [_pre("a")] * 5 + [_pre("b", "pwd")] * 3 + [b"not json", _pre("a")]
    for dialect in ("claude-code", "codex"):
        for data in calls:
            expected = run_hook(HookOptions(DIALECTS[dialect], str(here)), data, time.time())
            stderr = expected.stderr.encode()
            assert _hook(guard.state, data, dialect) == (expected.status, expected.stdout, stderr)
    assert _repeats(guard.state) == _repeats(here)
    # Both logged the unusable input, each its own pid.
    lines = [line.split(" ", 2)[2] for line in Path(f"{guard.state}.log").read_text().splitlines()]
    assert lines == ["claude-code ?: stdin is not JSON", "codex ?: stdin is not JSON"]


def _poll(session: str, event: str, output: str | None = None) -> bytes:
    # Claude Code polling a background task, and (with ``output``) its result.
    payload: dict[str, object] = {
        "session_id": session,
        "cwd": "/nonexistent",
        "hook_event_name": event,
        "tool_name": "TaskOutput",
        "tool_input": {"task_id": "b1"},
    }
    if output is not None:
        payload["tool_response"] = {"output": output}
    return json.dumps(payload).encode()


def test_the_guard_runs_a_call_under_the_preset_of_its_request(guard: Running) -> None:
    for preset, expected in ((None, [False] * 4), ("seed", [False, False, True, False])):
        session = preset or "own"
        reminded = []
        for output in "1234":
            pre = _hook(guard.state, _poll(session, "PreToolUse"), preset=preset)
            post = _hook(guard.state, _poll(session, "PostToolUse", output), preset=preset)
            assert isinstance(pre, tuple)
            assert isinstance(post, tuple)
            reminded.append(b"repeating" in pre[1] + post[1])
        assert reminded == expected


def test_the_guard_reads_the_configuration_and_says_what_is_wrong(
    guard: Running, tmp_path: Path
) -> None:
    config = tmp_path / "guard.toml"
    config.write_text("thresholds = [1]\n")
    answer = _hook(guard.state, _pre(), config=str(config))
    message = f"repeat-guard: invalid configuration in {config}: key 'thresholds'"
    assert isinstance(answer, tuple)
    assert answer[0] == 1
    assert answer[2].decode().startswith(message)
    config.write_text("thresholds = [2]\n")
    assert _hook(guard.state, _pre(), config=str(config), expire_days=1.0) == (0, b"", b"")
    assert _hook(guard.state, _pre(), config=str(config))[1]  # type: ignore[index]  # an answer


def test_a_relative_config_or_a_bad_request_is_declined(guard: Running) -> None:
    state = str(guard.state)
    assert (
        hook_via_daemon(state, encode_hook_request("claude-code", "g.toml", None, _pre())) is None
    )
    assert hook_via_daemon(state, encode_hook_request("no-such-host", None, None, _pre())) is None
    assert hook_via_daemon(state, b"Hclaude-code\0\0seven\0\n{}") is None
    assert hook_via_daemon(state, b"Hclaude-code\0\0\0no-such-preset\n{}") is None
    # The three-field head of an older release: declined, the client runs the call itself.
    assert hook_via_daemon(state, b"Hclaude-code\0\0\n{}") is None
    assert hook_via_daemon(state, b"Hclaude-code\n{}") is None
    assert ask_daemon(state, b"X\n") == (b"-", None)
    assert not guard.state.exists() or _repeats(guard.state) == {}


def test_status_and_stop(guard: Running) -> None:
    _hook(guard.state, _pre())
    reply, failure = ask_daemon(str(guard.state), b"S\n")
    assert failure is None
    lines = reply[1:].decode().splitlines()
    assert lines[:5] == [
        f"pid {os.getpid()}",
        f"state {guard.state}",
        f"socket {guard.state}.sock",
        "http off",
        "calls 1",
    ]
    assert lines[6].endswith(f"(exits after {DEFAULT_IDLE:g} s)")
    assert guard.stop() == "asked to stop"
    assert not Path(f"{guard.state}.sock").exists()
    assert Path(f"{guard.state}.log").read_text().endswith("daemon: stopped: asked to stop\n")
    assert ask_daemon(str(guard.state), b"S\n") == (b"", "No such file or directory")


def test_the_socket_is_0600_in_a_0700_directory(tmp_path: Path) -> None:
    running = Running(tmp_path / "new" / "st.db")
    try:
        assert (tmp_path / "new").stat().st_mode & 0o777 == 0o700
        assert Path(f"{running.state}.sock").stat().st_mode & 0o777 == 0o600
    finally:
        running.stop()


def test_one_guard_per_state(guard: Running) -> None:
    assert serve(str(guard.state)) == "another guard serves this state"
    assert start_daemon(str(guard.state), [sys.executable, "-c", "pass"]) is None


def test_a_path_too_long_for_a_socket_gets_no_guard(tmp_path: Path) -> None:
    state = str(tmp_path / ("x" * 120))
    assert serve(state) == "its socket's path is too long"
    assert ask_daemon(state, b"S\n") == (b"", "socket path too long")
    assert start_daemon(state, [sys.executable, "-c", "pass"]) is None


def test_start_daemon_starts_the_command_detached(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    script = "import os, sys; open(sys.argv[1], 'w').write(str(os.getsid(0)))"
    pid = start_daemon(str(tmp_path / "st.db"), [sys.executable, "-c", script, str(marker)])
    assert pid is not None
    assert os.waitpid(pid, 0)[1] == 0
    assert marker.read_text() == str(pid)  # a session of its own
    assert start_daemon(str(tmp_path / "st.db"), ["/nonexistent/python"]) is None


def test_the_guard_stops_when_idle(tmp_path: Path) -> None:
    running = Running(tmp_path / "st.db", idle=0.2)
    running.thread.join(10)
    assert running.reason == "idle for 0.2 s"


def test_the_guard_stops_when_its_socket_goes(guard: Running) -> None:
    os.unlink(f"{guard.state}.sock")
    guard.thread.join(10)
    assert guard.reason == "its socket was removed or replaced"


def test_a_call_after_the_state_file_was_replaced_is_declined(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    daemon = Daemon(str(state), DEFAULT_IDLE)
    accepted: list[bool] = []
    assert daemon.hook(CLAUDE_CODE, None, None, _pre(), lambda: accepted.append(True))
    os.replace(state, tmp_path / "elsewhere.db")
    run_hook(HookOptions(CLAUDE_CODE, str(state)), _pre(), time.time())  # a new file
    # Nothing done, not accepted: the hook process handles the call itself.
    assert daemon.hook(CLAUDE_CODE, None, None, _pre(), lambda: accepted.append(True)) is None
    assert accepted == [True]
    assert daemon.stop_reason == "its state file was replaced"
    daemon.stop("asked to stop")  # the first reason stays
    assert daemon.why_stop(None) == "its state file was replaced"
    daemon.close()
    assert _repeats(state) == {"s": 1}


def test_the_guard_notices_a_replaced_state_file_between_calls(tmp_path: Path) -> None:
    running = Running(tmp_path / "st.db")
    _hook(running.state, _pre())
    os.replace(running.state, tmp_path / "elsewhere.db")
    running.thread.join(10)
    assert running.reason == "its state file was replaced"


def test_the_kept_connection_is_dropped_when_a_call_fails_with_it(tmp_path: Path) -> None:
    keeper = _Keeper()
    state = tmp_path / "st.db"
    options = HookOptions(CLAUDE_CODE, str(state), busy_timeout=0.05, stores=keeper)
    assert run_hook(options, _pre(), time.time()) == (0, b"", "")
    kept = keeper.open(str(state), 1.0)
    assert keeper.open(str(state), 1.0) is kept
    holder = sqlite3.connect(state, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert run_hook(options, _pre(), time.time()) == (0, b"", "")  # failed open: busy
    finally:
        holder.close()
    assert keeper.open(str(state), 1.0) is not kept
    # A corrupt file put in its place: opened afresh, found corrupt, set aside, started again.
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"definitely not sqlite" * 300)
    os.replace(garbage, state)
    assert keeper.replaced(str(state))
    assert run_hook(options, _pre(), time.time()) == (0, b"", "")
    lines = Path(f"{state}.log").read_text().splitlines()
    assert [("SQLITE_BUSY" in lines[0]), ("state store corrupt" in lines[1])] == [True, True]
    assert _repeats(state) == {"s": 1}
    assert not keeper.replaced(str(state))
    keeper.close()
    assert not keeper.replaced(str(state))


def test_hook_processes_and_the_guard_lose_no_count_side_by_side(guard: Running) -> None:
    # 50 calls on one agent at once: half through the guard, half as hook processes would
    # make them (each its own connection), none lost.
    state = guard.state
    answers: list[object] = []

    def through_guard() -> None:
        answers.append(_hook(state, _pre()))

    def by_itself() -> None:
        outcome = run_hook(HookOptions(CLAUDE_CODE, str(state)), _pre(), time.time())
        answers.append((outcome.status, outcome.stdout, outcome.stderr.encode()))

    threads = [threading.Thread(target=(through_guard, by_itself)[n % 2]) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == 50
    assert sum(1 for answer in answers if isinstance(answer, tuple) and answer[1]) == 3
    assert _repeats(state) == {"s": 50}
    assert not Path(f"{state}.log").exists()


def test_a_request_cut_off_or_too_large_is_declined(guard: Running) -> None:
    path = f"{guard.state}.sock"
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(path)
        client.sendall(b"H" + b"x" * (REQUEST_LIMIT + 1))
        client.shutdown(socket.SHUT_WR)
        assert client.recv(10) == b"-"


def test_answers_are_framed_and_anything_short_is_unknown(tmp_path: Path) -> None:
    whole = b"+" + encode_answer(0, b"{}\n", b"warn")
    assert decode_answer(whole) == (0, b"{}\n", b"warn")
    for cut in (b"+", b"+0", b"+0\x003", b"+x\x001\n", whole[:-6]):
        assert decode_answer(cut) is None


@contextlib.contextmanager
def a_guard_that_takes_a_call_and_goes_away(state: Path) -> Iterator[None]:
    """A listener on the guard's socket of ``state`` that takes one call, says ``+`` and
    closes, for as long as the block runs."""
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(daemon_paths(str(state)).socket)
        listener.listen()

        def take_and_vanish() -> None:
            connection, _ = listener.accept()
            connection.recv(1 << 16)
            connection.sendall(b"+")
            connection.close()

        thread = threading.Thread(target=take_and_vanish)
        thread.start()
        yield
        thread.join()


def test_a_guard_that_takes_a_call_and_goes_away_is_an_unknown_outcome(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    with a_guard_that_takes_a_call_and_goes_away(state):
        answer = _hook(state, _pre())
    assert answer == "the resident guard took the call and gave no answer (cut short)"


def test_http_settings_are_read_or_refused(tmp_path: Path) -> None:
    path = tmp_path / "st.db.http"
    assert read_http_settings(str(path)) is None
    secret = "s" * 32
    for content, expected in [
        (json.dumps({"port": 8123, "secret": secret}), HttpSettings(8123, secret)),
        ("[1]", f"{path} holds no port and secret"),
        (json.dumps({"port": 0, "secret": secret}), f"{path} holds no port and secret"),
        (json.dumps({"port": 80, "secret": 3}), f"{path} holds no port and secret"),
        (json.dumps({"port": 80, "secret": "short"}), f"{path} holds a secret too short to be one"),
        ("{", f"cannot read {path}: JSONDecodeError"),
    ]:
        path.write_text(content)
        assert read_http_settings(str(path)) == expected


def test_a_client_too_slow_to_send_is_dropped(
    guard: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("repeat_guard_hooks._daemon._READ_TIMEOUT", 0.05)
    with socket.socket(socket.AF_UNIX) as slow:
        slow.connect(f"{guard.state}.sock")
        slow.sendall(b"H")
        assert slow.recv(10) == b"-"  # it never finished its request
    assert _hook(guard.state, _pre()) == (0, b"", b"")


def test_a_socket_path_that_cannot_be_listened_on_stops_the_guard(tmp_path: Path) -> None:
    state = tmp_path / "st.db"
    (tmp_path / "st.db.sock" / "inside").mkdir(parents=True)
    assert serve(str(state)) == f"cannot listen on {state}.sock: Is a directory"
    assert (
        Path(f"{state}.log")
        .read_text()
        .endswith(f"daemon: stopped: cannot listen on {state}.sock: Is a directory\n")
    )


def test_serve_returns_why_it_stopped(tmp_path: Path) -> None:
    assert serve(str(tmp_path / "st.db"), 0.05, tick=0.01) == "idle for 0.05 s"


def test_an_event_past_the_input_limit_gets_what_the_hook_gives_it(
    guard: Running, tmp_path: Path
) -> None:
    huge = b'{"hook_event_name": "PreToolUse", "x": "' + b"a" * INPUT_LIMIT + b'"}'
    expected = run_hook(HookOptions(CLAUDE_CODE, str(tmp_path / "here.db")), huge, time.time())
    assert _hook(guard.state, huge) == (expected.status, expected.stdout, b"")
    log = Path(f"{guard.state}.log").read_text()
    assert log.split(" ", 2)[2] == (tmp_path / "here.db.log").read_text().split(" ", 2)[2]
