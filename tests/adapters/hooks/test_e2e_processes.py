"""Many real hook processes at once on one state file, and the ways a hook must fail open.

Each hook call is a fresh ``repeat-guard hook`` process, as the agents run it.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import pytest

from .agents import REPEAT_GUARD

pytestmark = pytest.mark.e2e


def _pre(session: str, command: str = "ls") -> bytes:
    payload = {
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    return json.dumps(payload).encode()


def _start(state: Path, data: bytes, launcher: Sequence[str] = ()) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [*launcher, str(REPEAT_GUARD), "hook", "claude-code", "--state", str(state)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.close()
    return process


def _finish(processes: Sequence[subprocess.Popen[bytes]]) -> list[tuple[int, bytes, bytes]]:
    finished = []
    for process in processes:
        assert process.stdout is not None
        assert process.stderr is not None
        out, err = process.stdout.read(), process.stderr.read()
        process.stdout.close()
        process.stderr.close()
        finished.append((process.wait(timeout=120), out, err))
    return finished


def _run(state: Path, data: bytes, launcher: Sequence[str] = ()) -> tuple[int, bytes, bytes]:
    return _finish([_start(state, data, launcher)])[0]


def _repeats(state: Path) -> dict[str, int]:
    with closing(sqlite3.connect(state)) as connection, connection:
        rows = connection.execute("SELECT agent, chain FROM agents").fetchall()
    return {agent: json.loads(chain)[3] for agent, chain in rows}


def _log(state: Path) -> list[str]:
    path = Path(f"{state}.log")
    return path.read_text().splitlines() if path.exists() else []


def test_fifty_processes_on_one_agent_lose_no_count(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    finished = _finish([_start(state, _pre("s")) for _ in range(50)])
    assert {status for status, _, _ in finished} == {0}
    answers = [json.loads(out) for _, out, _ in finished if out]
    # The default thresholds 3, 5 and 8 each fire exactly once, whichever process got there.
    assert len(answers) == 3
    assert _repeats(state) == {"s": 50}
    assert _log(state) == []


def test_twenty_agents_at_once_stay_independent(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    processes = [_start(state, _pre(f"session-{n:02d}")) for _ in range(3) for n in range(20)]
    finished = _finish(processes)
    assert {status for status, _, _ in finished} == {0}
    assert sum(1 for _, out, _ in finished if out) == 20  # one gentle reminder per agent
    assert _repeats(state) == {f"session-{n:02d}": 3 for n in range(20)}
    assert _log(state) == []


def test_garbage_on_stdin_fails_open(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    assert _run(state, b"\x89PNG\r\n\x1a\n secret-argument") == (0, b"", b"")
    (line,) = _log(state)
    assert line.endswith("claude-code ?: stdin is not JSON")
    assert "secret" not in line


def test_a_locked_store_fails_open(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    _run(state, _pre("s"))
    holder = sqlite3.connect(state, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert _run(state, _pre("s")) == (0, b"", b"")
    finally:
        holder.close()
    (line,) = _log(state)
    assert line.endswith("PreToolUse: state store unusable: OperationalError SQLITE_BUSY")
    assert _repeats(state) == {"s": 1}


def test_a_corrupt_store_is_set_aside(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    state.write_bytes(b"\x00" * 100 + b"definitely not sqlite" * 50)
    assert _run(state, _pre("s")) == (0, b"", b"")
    (line,) = _log(state)
    assert "state store corrupt" in line
    assert "set aside as" in line
    assert _repeats(state) == {"s": 1}
    assert len(list(tmp_path.glob("state.sqlite3.corrupt-*"))) == 1


def test_a_full_disk_fails_open(tmp_path: Path) -> None:
    # No small filesystem to fill here: a file-size limit makes every write past 1 KiB fail
    # with EFBIG, as ENOSPC would. Python ignores the SIGXFSZ that comes with it.
    state = tmp_path / "state.sqlite3"
    _run(state, _pre("s"))

    limit_file_size = [
        sys.executable,
        "-c",
        "import os, resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024)); "
        "os.execv(sys.argv[1], sys.argv[1:])",
    ]
    assert _run(state, _pre("s"), limit_file_size) == (0, b"", b"")
    (line,) = _log(state)
    assert " PreToolUse: state store unusable: " in line
    assert _repeats(state) == {"s": 1}


def test_a_bad_config_exits_1_naming_file_and_key(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".repeat-guard.toml").write_text('include = "Bash"\n')
    payload = json.loads(_pre("s"))
    payload["cwd"] = str(tmp_path)
    status, out, err = _run(tmp_path / "state.sqlite3", json.dumps(payload).encode())
    assert (status, out) == (1, b"")
    config = tmp_path / ".repeat-guard.toml"
    assert err.decode().startswith(
        f"repeat-guard: invalid configuration in {config}: key 'include'"
    )
