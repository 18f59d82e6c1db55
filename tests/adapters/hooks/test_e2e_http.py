"""Claude Code's http hooks against the resident guard's HTTP listener, with the real binary:
the guard's answer reaches the model as the command hook's does, and a guard that is down or
does not answer never blocks or fails the tool call (only delays it, up to the hook's timeout).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .agents import Host, Sandbox, looping, run_claude
from .agents import trust_project as _trust
from .standins import MessagesStandIn
from .test_e2e_claude_code import (
    LOOP,
    LS_CALL,
    _contexts,
    _results_since_prompt,
    _turns,
    _wrapped,
    claude,
)
from .test_e2e_daemon import _start_guard, _status, _stop_guard

pytestmark = pytest.mark.e2e
__all__ = ["claude"]  # the fixture, imported for the tests below

SECRET = "0123456789abcdef0123456789abcdef"
VARIABLE = "REPEAT_GUARD_HTTP_SECRET"
TIMEOUT = 3


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _http_settings(sandbox: Sandbox, port: int) -> None:
    """The project's hooks as http hooks to the guard, the secret from the environment."""
    entry = {
        "type": "http",
        "url": f"http://127.0.0.1:{port}/hook/claude-code",
        "headers": {"X-Repeat-Guard-Secret": f"${VARIABLE}"},
        "allowedEnvVars": [VARIABLE],
        "timeout": TIMEOUT,
    }
    hooks = {
        "PreToolUse": [{"matcher": "*", "hooks": [entry]}],
        "UserPromptSubmit": [{"hooks": [entry]}],
    }
    folder = sandbox.project / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"hooks": hooks}))


_loop = looping(LS_CALL, 6, _results_since_prompt, side=True)


def _run(claude: Host, sandbox: Sandbox) -> tuple[dict[str, Any], MessagesStandIn, float]:
    env_secret = {VARIABLE: SECRET}
    with MessagesStandIn(_loop) as model:
        started = time.monotonic()
        result = run_claude(claude, sandbox, model.url, "list the files", extra_env=env_secret)
        took = time.monotonic() - started
    return result, model, took


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    made = Sandbox.create(tmp_path)
    _trust(made)
    yield made
    _stop_guard(made.state)


def test_http_hooks_get_the_guards_answer(sandbox: Sandbox, claude: Host) -> None:
    port = _free_port()
    sandbox.state.parent.mkdir(mode=0o700)
    Path(f"{sandbox.state}.http").write_text(json.dumps({"port": port, "secret": SECRET}))
    _start_guard(sandbox)
    assert _status(sandbox.state)["http"] == f"127.0.0.1:{port}"
    _http_settings(sandbox, port)
    result, model, _ = _run(claude, sandbox)
    assert result["result"] == "done"
    seen = [(_results_since_prompt(r), _contexts(r)) for r in _turns(model)]
    gentle, detailed = _wrapped(claude, LOOP.reminder(3)), _wrapped(claude, LOOP.reminder(5))
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, []), (5, [detailed]), (6, [])]
    assert int(_status(sandbox.state)["calls"]) == 7  # six calls and the prompt


def test_a_guard_that_is_down_never_blocks_a_call(sandbox: Sandbox, claude: Host) -> None:
    _http_settings(sandbox, _free_port())  # nothing listens there
    result, model, took = _run(claude, sandbox)
    assert result["result"] == "done"
    assert [_results_since_prompt(r) for r in _turns(model)] == [0, 1, 2, 3, 4, 5, 6]
    assert all(_contexts(r) == [] for r in _turns(model))
    assert took < 7 * TIMEOUT  # no call waited its timeout (the whole run took 3.1 to 3.3 s)


def test_a_guard_that_does_not_answer_delays_a_call_by_the_timeout(
    sandbox: Sandbox, claude: Host
) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        _http_settings(sandbox, silent.getsockname()[1])
        result, model, took = _run(claude, sandbox)
    assert result["result"] == "done"
    assert [_results_since_prompt(r) for r in _turns(model)] == [0, 1, 2, 3, 4, 5, 6]
    assert all(_contexts(r) == [] for r in _turns(model))
    # Seven hook calls (six tool calls and the prompt), each waited out to its timeout.
    assert took >= 7 * TIMEOUT


def test_install_http_configures_claude_code_end_to_end(sandbox: Sandbox, claude: Host) -> None:
    # The real `repeat-guard install claude-code --http`, and nothing else: no guard running, no
    # secret in Claude Code's environment. Its SessionStart hook starts the guard, and the
    # secret reaches the http hooks' header from the env of .claude/settings.local.json.
    out = sandbox.install("claude-code", "--http")
    settings = sandbox.project / ".claude"
    assert out == (
        f"repeat-guard claude-code hooks added to {settings / 'settings.json'}\n"
        f"repeat-guard claude-code http secret added to {settings / 'settings.local.json'}\n"
    )
    listener = json.loads(Path(f"{sandbox.state}.http").read_text())
    assert listener["secret"] not in (settings / "settings.json").read_text()
    local = json.loads((settings / "settings.local.json").read_text())
    assert local == {"env": {VARIABLE: listener["secret"]}}
    assert _status(sandbox.state) == {}
    with MessagesStandIn(_loop) as model:
        result = run_claude(claude, sandbox, model.url, "list the files")
    assert result["result"] == "done"
    seen = [(_results_since_prompt(r), _contexts(r)) for r in _turns(model)]
    gentle, detailed = _wrapped(claude, LOOP.reminder(3)), _wrapped(claude, LOOP.reminder(5))
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, []), (5, [detailed]), (6, [])]
    status = _status(sandbox.state)
    assert status["http"] == f"127.0.0.1:{listener['port']}"
    # Six calls, each before it ran and with its result (the claude-code preset's result entry
    # names Bash), and the prompt went over HTTP (and the session's end, when Claude Code sends
    # it before it exits); no hook process ran, so none came over the socket.
    assert int(status["calls"]) in {13, 14}
    assert "http: refused" not in sandbox.log()
