"""Running the real host binaries (Claude Code, Codex, Copilot CLI, Gemini CLI, Qwen Code,
Cline) offline, against a scripted stand-in model.

Which binaries: ``host_params`` reads ``$REPEAT_GUARD_E2E_<HOST>`` (the host's dialect name in
capitals, dashes as underscores: ``REPEAT_GUARD_E2E_CLAUDE_CODE``), executables separated by
``:``, which ``make e2e`` sets to the pinned versions it installs into
``.tools/npm/<host>/<version>`` and ``make e2e-latest`` to each host's newest release; without
it, every version installed under ``.tools/npm/<host>/``. A test takes one binary as a
parameter named by its version. Each run gets a temporary ``HOME`` (and ``CODEX_HOME``), a
project directory, the hook entries written by the real ``repeat-guard install`` and its own
state file, so runs never share anything.
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

import pytest

ROOT = Path(__file__).resolve().parents[3]
REPEAT_GUARD = Path(sys.executable).parent / "repeat-guard"
TIMEOUT = 300


@dataclass(frozen=True, slots=True)
class Host:
    """One release of a host: its executable and its version (``"not-installed"`` when the
    executable's package is not where npm puts it)."""

    executable: Path
    version: str

    @property
    def release(self) -> tuple[int, ...]:
        """The version as numbers, for comparing releases (empty when not installed)."""
        return tuple(int(part) for part in self.version.split(".") if part.isdigit())


def host_params(host: str, package: str, binary: str) -> list[Any]:
    """The releases of ``host`` to run, as pytest parameters named by version (see the module's
    docstring); one that fails, saying how to install it, when none is found."""
    variable = "REPEAT_GUARD_E2E_" + host.upper().replace("-", "_")
    listed = os.environ.get(variable, "")
    if listed:
        paths = [Path(path) for path in listed.split(os.pathsep) if path]
    else:
        paths = list(ROOT.glob(f".tools/npm/{host}/*/node_modules/.bin/{binary}"))
    hosts = sorted((Host(path, _npm_version(path, package)) for path in paths), key=_newest_first)
    if not hosts:
        missing = ROOT / ".tools" / "npm" / host / f"not installed: run make e2e ({variable})"
        hosts = [Host(missing, "not-installed")]
    return [pytest.param(found, id=found.version) for found in hosts]


def _newest_first(host: Host) -> tuple[int, ...]:
    return tuple(-part for part in host.release)


def _npm_version(executable: Path, package: str) -> str:
    # npm links <prefix>/node_modules/.bin/<binary> beside <prefix>/node_modules/<package>.
    manifest = executable.parent.parent / package / "package.json"
    try:
        version = json.loads(manifest.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "not-installed"
    return str(version)


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
        # The hooks start a resident guard for the state (unless REPEAT_GUARD_DAEMON=off is
        # given): a short idle time, so that none outlives its test for long.
        return {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "REPEAT_GUARD_STATE": str(self.state),
            "REPEAT_GUARD_DAEMON_IDLE": "20",
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
    claude: Host,
    sandbox: Sandbox,
    base_url: str,
    prompt: str,
    allowed: Sequence[str] = ("Bash(ls)",),
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run ``claude -p PROMPT`` in the project (with ``extra_env`` in its environment); return
    its JSON result."""
    done = subprocess.run(
        [
            str(claude.executable),
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allowedTools",
            *allowed,
        ],
        cwd=sandbox.project,
        env={**_claude_env(sandbox, base_url), **(extra_env or {})},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run_claude_session(
    claude: Host,
    sandbox: Sandbox,
    base_url: str,
    prompts: Sequence[str],
    allowed: Sequence[str] = ("Bash(ls)",),
) -> list[dict[str, Any]]:
    """Send ``prompts`` to one Claude Code session (``--input-format stream-json``), each after
    the previous one's result; return the result lines."""
    command = [
        str(claude.executable),
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


def run_codex(codex: Host, sandbox: Sandbox, *arguments: str) -> subprocess.CompletedProcess[str]:
    """Run ``codex exec`` with hooks trusted for this run only."""
    return subprocess.run(
        [
            str(codex.executable),
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
    copilot: Host, sandbox: Sandbox, base_url: str, prompt: str, *arguments: str
) -> subprocess.CompletedProcess[str]:
    """Run ``copilot -p PROMPT`` in the project, offline, with the stand-in as its own model
    provider (Chat Completions) and the project trusted, so that Copilot runs its hooks
    (``--trust-folder`` would do for one run, but not with ``--session-id`` or ``--resume``)."""
    config = sandbox.home / ".copilot" / "config.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps({"trusted_folders": [str(sandbox.project)]}))
    return subprocess.run(
        [str(copilot.executable), "-p", prompt, "--allow-all-tools", *arguments],
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


def run_gemini(
    gemini: Host,
    sandbox: Sandbox,
    base_url: str,
    prompt: str,
    *arguments: str,
    detect_loops: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``gemini -p PROMPT`` in the project, offline, against the stand-in (an API key's
    authentication, ``GOOGLE_GEMINI_BASE_URL``), every tool allowed and the workspace trusted,
    so that Gemini CLI runs the project's hooks. Gemini CLI's own loop detection (which stops
    the 5th identical call) is off unless ``detect_loops``."""
    settings = sandbox.home / ".gemini" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    user = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"disableLoopDetection": not detect_loops},
    }
    settings.write_text(json.dumps(user))
    return subprocess.run(
        [str(gemini.executable), "-p", prompt, "--approval-mode", "yolo", "-o", "json", *arguments],
        cwd=sandbox.project,
        env=sandbox.env(
            GOOGLE_GEMINI_BASE_URL=base_url,
            GEMINI_API_KEY="offline",
            GEMINI_CLI_TRUST_WORKSPACE="true",
        ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )


def run_qwen(
    qwen: Host, sandbox: Sandbox, base_url: str, prompt: str, *arguments: str
) -> dict[str, Any]:
    """Run ``qwen -p PROMPT`` headless in the project against the OpenAI-compatible stand-in at
    ``base_url``, every tool allowed; return its JSON result (the last event it prints)."""
    done = subprocess.run(
        [
            str(qwen.executable),
            "-p",
            prompt,
            "--auth-type",
            "openai",
            "--openai-api-key",
            "offline",
            "--openai-base-url",
            f"{base_url}/v1",
            "-m",
            "stand-in",
            "--approval-mode",
            "yolo",
            "-o",
            "json",
            *arguments,
        ],
        cwd=sandbox.project,
        env=sandbox.env(QWEN_CODE_SUPPRESS_YOLO_WARNING="1"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    events: list[dict[str, Any]] = json.loads(done.stdout)
    return events[-1]


def cline_hooks(sandbox: Sandbox) -> None:
    """Give the project Cline's hook files (``.clinerules/hooks/<event>``) with this
    ``repeat-guard install cline``, and make it a git repository, which Cline takes for its
    workspace root."""
    subprocess.run(["git", "init", "-q", str(sandbox.project)], check=True)
    sandbox.install("cline")


def run_cline(
    cline: Host, sandbox: Sandbox, base_url: str, prompt: str
) -> subprocess.CompletedProcess[str]:
    """Point Cline at the stand-in as an OpenAI-compatible provider (``cline auth``), then run
    ``cline --json PROMPT`` in the project (act mode, every tool approved)."""
    env = sandbox.env()
    auth = [str(cline.executable), "auth", "-p", "openai", "-k", "offline", "-m", "gpt-4.1"]
    subprocess.run(
        [*auth, "-b", f"{base_url}/v1"],
        cwd=sandbox.project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    return subprocess.run(
        [str(cline.executable), "--json", prompt],
        cwd=sandbox.project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
