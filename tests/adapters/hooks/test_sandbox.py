"""The host end-to-end tests' check of the state's log (``Sandbox.errors``), on real lines: it
passes by the resident guard's stopping, whenever it comes, and keeps every other line."""

from __future__ import annotations

import time
from pathlib import Path

from repeat_guard_hooks import log_line
from repeat_guard_hooks.resident import serve

from .agents import Sandbox


def test_the_guards_stopping_is_no_error_and_a_hooks_line_is(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    state = str(sandbox.state)
    # A real guard, idle at once: what a slow run may leave between two hooks.
    assert serve(state, 0.05, tick=0.01) == "idle for 0.05 s"
    log_line(state, "daemon", "stopped: asked to stop", time.time())
    assert sandbox.errors() == []
    assert len(Path(f"{state}.log").read_text().splitlines()) == 2
    log_line(state, "claude-code PreToolUse", "the store is busy; stood aside", time.time())
    log_line(state, "daemon", "stopped: its socket was removed or replaced", time.time())
    assert [line.split(": ", 1)[1] for line in sandbox.errors()] == [
        "the store is busy; stood aside",
        "stopped: its socket was removed or replaced",
    ]
