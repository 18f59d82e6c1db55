"""Running the real agent binaries offline, against a scripted stand-in model.

``make e2e`` installs the pinned npm packages into ``.tools/npm``. Each run gets a temporary
``HOME`` (and ``CODEX_HOME``), a project directory, the hook entries written by the real
``repeat-guard install`` and its own state file, so runs never share anything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
NPM_BIN = ROOT / ".tools" / "npm" / "node_modules" / ".bin"
CLAUDE = NPM_BIN / "claude"
CODEX = NPM_BIN / "codex"
COPILOT = NPM_BIN / "copilot"
REPEAT_GUARD = Path(sys.executable).parent / "repeat-guard"
TIMEOUT = 300


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A temporary home, a project in it, and the state file the hooks use."""

    home: Path
    project: Path
    state: Path

    @classmethod
    def create(cls, root: Path) -> Sandbox:
        home = root / "home"
        project = root / "project"
        home.mkdir()
        (project / ".git").mkdir(parents=True)
        return cls(home, project, root / "state" / "state.sqlite3")

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "REPEAT_GUARD_STATE": str(self.state),
            **extra,
        }

    def install(self, agent: str, *flags: str) -> str:
        """Run the real ``repeat-guard install`` in the project; return its stdout."""
        done = subprocess.run(
            [str(REPEAT_GUARD), "install", agent, *flags],
            cwd=self.project,
            env=self.env(CODEX_HOME=str(self.home / ".codex")),
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def log(self) -> str:
        path = Path(f"{self.state}.log")
        return path.read_text() if path.exists() else ""


def trust_project(sandbox: Sandbox) -> None:
    """Let Claude Code read the project's settings without asking (its trust dialog)."""
    config = {
        "hasCompletedOnboarding": True,
        "projects": {str(sandbox.project): {"hasTrustDialogAccepted": True}},
    }
    (sandbox.home / ".claude.json").write_text(json.dumps(config))


def run_claude(
    sandbox: Sandbox, base_url: str, prompt: str, allowed: Sequence[str] = ("Bash(ls)",)
) -> dict[str, Any]:
    """Run ``claude -p PROMPT`` in the project; return its JSON result."""
    done = subprocess.run(
        [str(CLAUDE), "-p", prompt, "--output-format", "json", "--allowedTools", *allowed],
        cwd=sandbox.project,
        env=_claude_env(sandbox, base_url),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run_claude_session(
    sandbox: Sandbox, base_url: str, prompts: Sequence[str], allowed: Sequence[str] = ("Bash(ls)",)
) -> list[dict[str, Any]]:
    """Send ``prompts`` to one Claude Code session (``--input-format stream-json``), each after
    the previous one's result; return the result lines."""
    command = [
        str(CLAUDE),
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--allowedTools",
        *allowed,
    ]
    process = subprocess.Popen(
        command,
        cwd=sandbox.project,
        env=_claude_env(sandbox, base_url),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    results: list[dict[str, Any]] = []
    try:
        for prompt in prompts:
            message = {"type": "user", "message": {"role": "user", "content": prompt}}
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            for line in process.stdout:
                event = json.loads(line)
                if event.get("type") == "result":
                    results.append(event)
                    break
        process.stdin.close()
        process.wait(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
    return results


def _claude_env(sandbox: Sandbox, base_url: str) -> dict[str, str]:
    return sandbox.env(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="sk-ant-offline",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )


def configure_codex(sandbox: Sandbox, base_url: str) -> None:
    """Point Codex at the stand-in as a custom Responses API provider."""
    codex_home = sandbox.home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model = "stand-in"\n'
        'model_provider = "standin"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "[model_providers.standin]\n"
        'name = "stand-in"\n'
        f'base_url = "{base_url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "STANDIN_KEY"\n'
    )


def run_codex(sandbox: Sandbox, *arguments: str) -> subprocess.CompletedProcess[str]:
    """Run ``codex exec`` with hooks trusted for this run only."""
    return subprocess.run(
        [
            str(CODEX),
            "exec",
            "--dangerously-bypass-hook-trust",
            "--skip-git-repo-check",
            *arguments,
        ],
        cwd=sandbox.project,
        env=sandbox.env(CODEX_HOME=str(sandbox.home / ".codex"), STANDIN_KEY="offline"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )


def blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The content blocks of a Messages API message (a string is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def run_copilot(
    sandbox: Sandbox, base_url: str, prompt: str, *arguments: str
) -> subprocess.CompletedProcess[str]:
    """Run ``copilot -p PROMPT`` in the project, offline, with the stand-in as its own model
    provider (Chat Completions) and the project trusted, so that Copilot runs its hooks
    (``--trust-folder`` would do for one run, but not with ``--session-id`` or ``--resume``)."""
    config = sandbox.home / ".copilot" / "config.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps({"trusted_folders": [str(sandbox.project)]}))
    return subprocess.run(
        [str(COPILOT), "-p", prompt, "--allow-all-tools", *arguments],
        cwd=sandbox.project,
        env=sandbox.env(
            COPILOT_OFFLINE="true",
            COPILOT_PROVIDER_BASE_URL=f"{base_url}/v1",
            COPILOT_PROVIDER_API_KEY="offline",
            COPILOT_MODEL="gpt-4.1",
        ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
