"""The resident guard with the real hosts and real hook processes: calls go through it, a guard
killed with SIGKILL mid-session loses no count, and 50 calls at once on one agent, some through
the guard and some handled by hook processes while it starts, lose none either."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from repeat_guard_hookcall import ask_daemon

from .agents import REPEAT_GUARD, Host, Sandbox, configure_codex, run_claude, run_codex
from .agents import trust_project as _trust
from .standins import MessagesStandIn, ResponsesStandIn, Say, Step
from .test_e2e_claude_code import (
    LOOP,
    LS_CALL,
    _contexts,
    _results_since_prompt,
    _turns,
    _wrapped,
    claude,
)
from .test_e2e_codex import LS, _outputs, _reminders, codex
from .test_e2e_codex import _reminder as _codex_reminder

pytestmark = pytest.mark.e2e
__all__ = ["claude", "codex"]  # the fixtures, imported for the tests below


def _status(state: Path) -> dict[str, str]:
    """What ``daemon status`` says of the guard of ``state`` (empty when none runs)."""
    reply, _ = ask_daemon(str(state), b"S\n")
    lines = reply[1:].decode().splitlines() if reply[:1] == b"+" else []
    return dict(line.split(" ", 1) for line in lines)


def _start_guard(sandbox: Sandbox) -> int:
    env = sandbox.env()
    subprocess.run([str(REPEAT_GUARD), "daemon", "start"], env=env, check=True)
    return int(_status(sandbox.state)["pid"])


def _stop_guard(state: Path) -> None:
    ask_daemon(str(state), b"Q\n")


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1].startswith("Z")  # a zombie nobody reaped
    except FileNotFoundError:
        return True


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _gone(pid)


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    _wait_gone(pid)


def test_claude_code_through_the_guard_killed_mid_session(tmp_path: Path, claude: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    _trust(sandbox)
    sandbox.install("claude-code")
    first = _start_guard(sandbox)
    before_kill: list[int] = []

    def script(request: Mapping[str, Any]) -> Step:
        if not request.get("tools"):
            return Say("ok")
        done = _results_since_prompt(request)
        if done == 2 and not before_kill:
            # Two calls counted through the guard; it dies before the third.
            before_kill.append(int(_status(sandbox.state)["calls"]))
            _kill(first)
        return (LS_CALL,) if done < 6 else Say("done")

    try:
        with MessagesStandIn(script) as model:
            result = run_claude(claude, sandbox, model.url, "list the files")
        after = _status(sandbox.state)
    finally:
        _stop_guard(sandbox.state)
    assert result["result"] == "done"
    seen = [(_results_since_prompt(r), _contexts(r)) for r in _turns(model)]
    gentle, detailed = _wrapped(claude, LOOP.reminder(3)), _wrapped(claude, LOOP.reminder(5))
    # The same reminders at the same calls as without a guard: the kill lost no count.
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, []), (5, [detailed]), (6, [])]
    assert before_kill[0] >= 2
    # The third call found no guard, counted itself and started the guard that took the rest.
    assert after["pid"] != str(first)
    assert int(after["calls"]) >= 3
    # A guard asked to stop says so in the log as it exits, after it has answered.
    _wait_gone(int(after["pid"]))
    assert [line.split(": ", 1)[1] for line in sandbox.log().splitlines()] == [
        "stopped: asked to stop"
    ]


def test_codex_through_the_guard(tmp_path: Path, codex: Host) -> None:
    def script(request: Mapping[str, Any]) -> Step:
        return (LS,) if _outputs(request) < 6 else Say("done")

    with ResponsesStandIn(script) as model:
        sandbox = Sandbox.create(tmp_path)
        configure_codex(sandbox, model.url)
        sandbox.install("codex")
        guard = _start_guard(sandbox)
        try:
            run_codex(codex, sandbox, "list the files")
            after = _status(sandbox.state)
        finally:
            _stop_guard(sandbox.state)
    last = model.model_requests()[-1]
    assert _reminders(last) == [(3, _codex_reminder(3)), (5, _codex_reminder(5))]
    assert after["pid"] == str(guard)
    assert int(after["calls"]) >= 6  # every PreToolUse went through it


def _pre(session: str) -> bytes:
    payload = {
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    return json.dumps(payload).encode()


def _burst(state: Path, session: str, env: dict[str, str]) -> list[bytes]:
    processes = [
        subprocess.Popen(
            [str(REPEAT_GUARD), "hook", "claude-code", "--state", str(state)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        for _ in range(50)
    ]
    answers = []
    for process in processes:
        out, _ = process.communicate(_pre(session), timeout=120)
        assert process.returncode == 0
        answers.append(out)
    return answers


def _repeats(state: Path) -> dict[str, int]:
    with closing(sqlite3.connect(state)) as connection, connection:
        rows = connection.execute("SELECT agent, chain FROM agents").fetchall()
    return {agent: json.loads(chain)[3] for agent, chain in rows}


def test_fifty_calls_at_once_on_one_agent_with_the_guard_lose_no_count(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite3"
    env = {**os.environ, "REPEAT_GUARD_DAEMON_IDLE": "20"}
    env.pop("REPEAT_GUARD_DAEMON")
    try:
        # No guard yet: the first calls count themselves and race to start one (one starts).
        cold = _burst(state, "cold", env)
        assert _status(state)  # started by one of them
        # A guard running: the calls go through it.
        calls = int(_status(state)["calls"])
        warm = _burst(state, "warm", env)
        assert int(_status(state)["calls"]) == calls + 50
        guard = int(_status(state)["pid"])
    finally:
        _stop_guard(state)
    _wait_gone(guard)  # it writes its last log line as it exits
    assert _repeats(state) == {"cold": 50, "warm": 50}
    # The thresholds 3, 5 and 8 each fired once, whichever process or guard got there.
    assert [sum(1 for out in burst if out) for burst in (cold, warm)] == [3, 3]
    log = Path(f"{state}.log").read_text().splitlines()
    assert [line.split(": ", 1)[1] for line in log] == ["stopped: asked to stop"]
