"""Record ``fixtures/opencode/opencode.db`` with the real opencode, offline.

opencode runs headless (``opencode run``) in a temporary home against the scripted Messages
API stand-in on 127.0.0.1, with no plugin; its own database is then copied here. Run from the
repository root, after ``make .tools/npm/opencode/1.18.33/.installed``::

    .venv/bin/python -m tests.adapters.transcripts.record_opencode

The script: one session, whose first prompt makes the same ``bash`` call three times and a
second prompt (``--continue``) twice more; then a session in a project whose configuration
denies ``bash``, where the model asks for it once.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..hooks.agents import ROOT, Sandbox
from ..hooks.standins import Call, MessagesStandIn, Say, Step
from ..js.hosts import results_since_prompt

VERSION = "1.18.33"
BINARY = ROOT / f".tools/npm/opencode/{VERSION}/node_modules/.bin/opencode"
TARGET = Path(__file__).parent / "fixtures" / "opencode" / "opencode.db"
LS = Call("bash", {"command": "ls", "description": "List files"})


def _script(calls: int) -> Any:
    def script(request: Mapping[str, Any]) -> Step:
        return (LS,) if results_since_prompt(request) < calls else Say("done")

    return script


def _run(
    binary: Path, sandbox: Sandbox, url: str, prompt: str, permission: object, *flags: str
) -> None:
    provider = {
        "npm": "@ai-sdk/anthropic",
        "options": {"baseURL": f"{url}/v1", "apiKey": "stand-in"},
        "models": {"stand-in": {"name": "stand-in", "tool_call": True}},
    }
    config = {"model": "standin/stand-in", "provider": {"standin": provider}}
    (sandbox.project / "opencode.json").write_text(json.dumps({**config, "permission": permission}))
    env = sandbox.env(OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1")
    subprocess.run(
        [str(binary), "run", *flags, prompt],
        cwd=sandbox.project,
        env=env,
        check=True,
        timeout=180,
        capture_output=True,
    )


def record(binary: Path, target: Path) -> None:
    """Run ``binary`` (an opencode) through the script and copy its database to ``target``."""
    with tempfile.TemporaryDirectory() as root:
        sandbox = Sandbox.create(Path(root))
        with MessagesStandIn(_script(3)) as model:
            _run(binary, sandbox, model.url, "list the files", "allow")
        with MessagesStandIn(_script(2)) as model:
            _run(binary, sandbox, model.url, "list them again", "allow", "--continue")
        other = Sandbox(sandbox.home, Path(root) / "denied", sandbox.state)
        (other.project / ".git").mkdir(parents=True)
        with MessagesStandIn(_script(1)) as model:
            _run(binary, other, model.url, "list the files", {"bash": "ask"})
        database = sandbox.home / ".local" / "share" / "opencode" / "opencode.db"
        with contextlib.closing(sqlite3.connect(database)) as connection:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # all of it in the one file
            # A rollback journal, so that reading the fixture leaves no -wal or -shm beside it.
            connection.execute("PRAGMA journal_mode=DELETE")
            connection.execute("VACUUM")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(database, target)


if __name__ == "__main__":
    record(BINARY, TARGET)
