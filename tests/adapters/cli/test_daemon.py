"""``repeat-guard hook`` through the resident guard, and ``repeat-guard daemon``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repeat_guard_cli import main
from repeat_guard_cli._resident import IDLE_VARIABLE
from repeat_guard_hookcall._process import HookArguments, daemon_command

from ..hooks.test_daemon import Running, _repeats, a_guard_that_takes_a_call_and_goes_away

PRE = {
    "session_id": "s",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "ls"},
}


def _hook(
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    argv: list[str],
    data: bytes = json.dumps(PRE).encode(),
) -> tuple[int, bytes, bytes]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    status = main(argv)
    captured = capsysbinary.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def resident(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """The guard switched on, with the guards hook processes would start recorded, not run."""
    monkeypatch.delenv("REPEAT_GUARD_DAEMON")
    started: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(
        "repeat_guard_hookcall._process.start_daemon",
        lambda state, command: started.append((state, command)),
    )
    return started


def test_a_call_goes_through_the_running_guard(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    resident: list[tuple[str, list[str]]],
) -> None:
    running = Running(tmp_path / "st.db")
    try:
        argv = ["hook", "claude-code", "--state", str(running.state)]
        answers = [_hook(monkeypatch, capsysbinary, argv) for _ in range(3)]
        config = tmp_path / "bad.toml"
        config.write_text("thresholds = [1]\n")
        bad = _hook(monkeypatch, capsysbinary, [*argv, "--config", str(config)])
        assert running.daemon is not None
        assert running.daemon.calls == 4
    finally:
        running.stop()
    assert [(status, err) for status, _, err in answers] == [(0, b"")] * 3
    assert [bool(out) for _, out, _ in answers] == [False, False, True]
    assert bad[:2] == (1, b"")
    assert bad[2].startswith(b"repeat-guard: invalid configuration in ")
    assert resident == []


def test_with_no_guard_the_call_is_handled_here_and_one_is_started(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    resident: list[tuple[str, list[str]]],
) -> None:
    state = str(tmp_path / "st.db")
    assert _hook(monkeypatch, capsysbinary, ["hook", "codex", "--state", state]) == (0, b"", b"")
    assert resident == [(state, daemon_command(state))]
    assert daemon_command(state) == [
        sys.executable,
        "-m",
        "repeat_guard_entry",
        "daemon",
        "serve",
        "--state",
        state,
    ]
    assert _repeats(Path(state)) == {"s": 1}


def test_a_relative_config_is_read_here_and_starts_no_guard(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    resident: list[tuple[str, list[str]]],
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("guard.toml").write_text("thresholds = [2]\n")
    running = Running(tmp_path / "st.db")
    try:
        argv = ["hook", "claude-code", "--state", str(running.state), "--config", "guard.toml"]
        answers = [_hook(monkeypatch, capsysbinary, argv)[1] for _ in range(2)]
        assert running.daemon is not None
        assert running.daemon.calls == 0
    finally:
        running.stop()
    assert [bool(answer) for answer in answers] == [False, True]
    assert resident == []


def test_a_guard_gone_during_the_call_fails_open_and_says_so(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    resident: list[tuple[str, list[str]]],
) -> None:
    state = tmp_path / "st.db"
    with a_guard_that_takes_a_call_and_goes_away(state):
        argv = ["hook", "claude-code", "--state", str(state)]
        assert _hook(monkeypatch, capsysbinary, argv) == (0, b"", b"")
    (line,) = Path(f"{state}.log").read_text().splitlines()
    assert line.endswith(
        " claude-code -: the resident guard took the call and gave no answer (cut short)"
    )
    assert not state.exists()  # not counted here a second time
    assert resident == []


def test_daemon_serve_status_and_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "st.db"
    assert main(["daemon", "status", "--state", str(state)]) == 1
    assert capsys.readouterr().out == f"no resident guard is running for {state}\n"
    assert main(["daemon", "stop", "--state", str(state)]) == 0
    assert capsys.readouterr().out == f"no resident guard is running for {state}\n"
    monkeypatch.setenv(IDLE_VARIABLE, "0.1")
    started = time.monotonic()
    assert main(["daemon", "serve", "--state", str(state)]) == 0
    assert time.monotonic() - started < 5
    assert Path(f"{state}.log").read_text().endswith("daemon: stopped: idle for 0.1 s\n")
    # A state named relative to here, an explicit idle time.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(IDLE_VARIABLE, "soon")
    assert main(["daemon", "serve", "--state", "st.db", "--idle", "0.1"]) == 0
    assert Path(f"{state}.log").read_text().count("idle for 0.1 s") == 2


def test_daemon_start_starts_a_detached_guard_and_stop_stops_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state" / "st.db"
    monkeypatch.setenv(IDLE_VARIABLE, "-3")  # not a time: the default
    assert main(["daemon", "start", "--state", str(state)]) == 0
    assert main(["daemon", "start", "--state", str(state)]) == 0  # running: nothing to do
    assert capsys.readouterr().out == ""
    assert main(["daemon", "status", "--state", str(state)]) == 0
    status = capsys.readouterr().out.splitlines()
    pid = int(status[0].removeprefix("pid "))
    assert pid != os.getpid()
    assert status[-1].endswith("(exits after 300 s)")
    assert main(["daemon", "stop", "--state", str(state)]) == 0
    assert capsys.readouterr().out == f"stopped the resident guard of {state}\n"
    assert os.waitpid(pid, 0)[1] == 0  # started by this process: reaped here


def test_a_guard_that_cannot_start_leaves_start_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("repeat_guard_cli._resident._START_WAIT", 0.1)
    monkeypatch.setattr("repeat_guard_hookcall.start_daemon", lambda state, command: None)
    assert main(["daemon", "start", "--state", str(tmp_path / "st.db")]) == 0
    assert capsys.readouterr() == ("", "")


def test_daemon_idle_must_be_a_positive_time(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["daemon", "serve", "--idle", "0"]) == 2
    assert "must be more than 0 seconds, got 0" in capsys.readouterr().err


_CLIENT_PROBE = (
    "import sys\n"
    "from repeat_guard_entry import main\n"
    "status = main(['hook', 'claude-code', '--state', sys.argv[1]])\n"
    "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'repeat_guard', 'sqlite3', "
    "'_sqlite3', 'json', 'argparse', 'socket', 'orjson', 'pyrsistent', 'dataclasses', 'typing', "
    "'collections', 're', 'enum'} "
    "or m in {'repeat_guard_hooks._run', 'repeat_guard_hooks._store', 'repeat_guard_cli._cli'})\n"
    "print(status, heavy, file=sys.stderr)\n"
)


def test_the_client_path_imports_nothing_but_what_passes_bytes(tmp_path: Path) -> None:
    running = Running(tmp_path / "st.db")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CLIENT_PROBE, str(running.state)],
            input=json.dumps(PRE).encode(),
            capture_output=True,
            check=True,
            env={**os.environ, "REPEAT_GUARD_DAEMON": "auto"},
        )
        assert running.daemon is not None
        assert running.daemon.calls == 1
    finally:
        running.stop()
    assert done.stderr.decode().strip() == "0 []"


def test_hook_arguments_are_values() -> None:
    one, same = HookArguments("codex", "s.db", None, 1.5), HookArguments("codex", "s.db", None, 1.5)
    assert one == same
    assert {one, same} == {one}
    assert one != HookArguments("codex", "s.db")
    assert one != ("codex", "s.db", None, 1.5)
