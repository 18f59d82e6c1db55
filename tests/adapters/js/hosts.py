"""Running the real JavaScript hosts offline with the npm package's plugins, against a stand-in.

``make e2e`` installs the pinned hosts into ``.tools/npm/<host>/<version>`` and ``make
e2e-latest`` the newest (``host_params``, as for the hook hosts). Each run gets a temporary
``HOME``, a project directory and its own state file; the real ``repeat-guard install`` lists
the plugin the hooks package ships, which starts the real ``repeat-guard serve`` from ``PATH``
(this venv's).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..hooks.agents import REPEAT_GUARD, Sandbox, blocks

TIMEOUT = 300

__all__ = [
    "TIMEOUT",
    "host_env",
    "kill_sidecars",
    "results_since_prompt",
    "texts",
]


def host_env(sandbox: Sandbox, **extra: str) -> dict[str, str]:
    """The sandbox's environment, with this venv's ``repeat-guard`` first on ``PATH``."""
    env = sandbox.env(**extra)
    env["PATH"] = f"{REPEAT_GUARD.parent}{os.pathsep}{env['PATH']}"
    return env


def texts(message: Mapping[str, Any]) -> list[str]:
    """The text blocks of a Messages API message."""
    return [str(b["text"]) for b in blocks(message) if b.get("type") == "text"]


# OpenClaw follows a batch of tool results with a user message of its own context, no prompt.
OPENCLAW_CONTEXT = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"


def results_since_prompt(request: Mapping[str, Any]) -> int:
    """How many tool results the conversation holds since the user's last prompt."""
    count = 0
    for message in request["messages"]:
        kinds = {b.get("type") for b in blocks(message)}
        said = texts(message)
        reminder = any("<system-reminder>" in t for t in said)
        context = bool(said) and all(t.startswith(OPENCLAW_CONTEXT) for t in said)
        if (
            message.get("role") == "user"
            and "tool_result" not in kinds
            and not (reminder or context)
        ):
            count = 0  # a prompt
        count += sum(1 for b in blocks(message) if b.get("type") == "tool_result")
    return count


def kill_sidecars(state: Path) -> int:
    """Kill every ``repeat-guard serve`` using the store ``state``; return how many."""
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            command = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
            if b"serve" in command and f"REPEAT_GUARD_STATE={state}".encode() in environ:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed
