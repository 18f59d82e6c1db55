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
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import Deny, GuardConfig, GuardState, Reminder, ToolCallFinished, admit, reduce

from .standins import Call, Say, Step

ROOT = Path(__file__).resolve().parents[3]
REPEAT_GUARD = Path(sys.executable).parent / "repeat-guard"
TIMEOUT = 300
Script = Callable[[Mapping[str, Any]], Step]


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


def host_fixture(host: str, package: str, binary: str) -> Callable[..., Host]:
    """A fixture giving each release ``host_params`` finds, one a test (``make e2e``: the pinned
    ones; ``make e2e-latest``: the newest); named by the variable it is assigned to."""

    @pytest.fixture(params=host_params(host, package, binary))
    def release(request: pytest.FixtureRequest) -> Host:
        found: Host = request.param
        return found

    return release


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


# The resident guard's line as it stops, idle (``REPEAT_GUARD_DAEMON_IDLE`` seconds) or asked
# to: ``<time> pid=<pid> daemon: stopped: idle for 20 s``.
_GUARD_STOPPED = re.compile(r" daemon: stopped: (idle for [0-9.]+ s|asked to stop)$")


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

    def configure(self, text: str) -> None:
        """Write the project's ``.repeat-guard.toml``."""
        (self.project / ".repeat-guard.toml").write_text(text)

    def log(self) -> str:
        """The state's log, but for the lines of a resident guard that stopped once idle (a
        run slowed down by a busy machine may leave it idle between two of its hooks)."""
        path = Path(f"{self.state}.log")
        lines = path.read_text().splitlines(keepends=True) if path.exists() else []
        return "".join(line for line in lines if " daemon: stopped: idle for " not in line)

    def errors(self) -> list[str]:
        """The state log's lines that say something went wrong: a hook that stood aside (its
        host, event and why) or the resident guard's own trouble. Not the guard's stopping,
        once idle or when asked: when a run on a busy machine leaves it idle long enough is
        timing, not an error."""
        path = Path(f"{self.state}.log")
        lines = path.read_text().splitlines() if path.exists() else []
        return [line for line in lines if not _GUARD_STOPPED.search(line)]


def installed(root: Path, host: str, config: str | None = None, *, git: bool = False) -> Sandbox:
    """A sandbox with ``repeat-guard install HOST`` run in its project, and ``config`` (if any)
    as the project's ``.repeat-guard.toml``; ``git``: the project is a git repository (Cline
    takes one for its workspace root)."""
    sandbox = Sandbox.create(root)
    if git:
        subprocess.run(["git", "init", "-q", str(sandbox.project)], check=True)
    sandbox.install(host)
    if config is not None:
        sandbox.configure(config)
    return sandbox


def check_install(sandbox: Sandbox, host: str, path: Path, events: Sequence[str]) -> dict[str, Any]:
    """Run the real ``install HOST`` twice; check that the first adds one group to each of
    ``events`` in ``path``, running this ``repeat-guard hook HOST``, and the second changes
    nothing. Return the file's hook entries by event."""
    assert sandbox.install(host).splitlines()[0] == f"repeat-guard {host} hooks added to {path}"
    hooks: dict[str, Any] = json.loads(path.read_text())["hooks"]
    assert sorted(hooks) == sorted(events)
    for groups in hooks.values():
        ((entry,),) = [group["hooks"] for group in groups]
        assert entry["command"] == f"{REPEAT_GUARD} hook {host}"
    again = sandbox.install(host).splitlines()[0]
    assert again == f"{path}: already as wanted; nothing changed"
    return hooks


@dataclass(frozen=True, slots=True)
class Repeated:
    """One call repeated identically, ``tool`` with ``arguments`` as the host reports it to its
    hooks: what the core says of it, which is what the host's model should read."""

    tool: str
    arguments: object

    def _state(self, count: int, config: GuardConfig | None) -> tuple[GuardState, list[Reminder]]:
        state = GuardState.initial(config)
        fired: list[Reminder] = []
        for _ in range(count):
            state, new = reduce(state, ToolCallFinished("a", self.tool, self.arguments))
            fired.extend(new)
        return state, fired

    def reminder(self, count: int, config: GuardConfig | None = None) -> Reminder:
        """The newest reminder fired by the ``count``-th call in a row."""
        return self._state(count, config)[1][-1]

    def refusal(self, count: int, deny_at: int | None = None) -> str:
        """Why the ``count``-th call in a row is refused under ``deny_at`` (default ``count``)."""
        state, _ = self._state(count - 1, GuardConfig(deny_at=deny_at or count))
        refused = admit(state, ToolCallFinished("a", self.tool, self.arguments))
        assert isinstance(refused, Deny)
        return refused.reason


Count = Callable[[Mapping[str, Any]], int]
"""How many tool calls a request shows since the user's prompt (each model API its own)."""


def looping(call: Call, times: int, count: Count, *, side: bool = False) -> Script:
    """A model that asks for ``call`` until ``times`` results came back, then says "done";
    ``side``: a request without tools (the host's own side question) gets "ok"."""

    def script(request: Mapping[str, Any]) -> Step:
        if side and not request.get("tools"):
            return Say("ok")
        return (call,) if count(request) < times else Say("done")

    return script


def with_subagent(call: Call, spawn: Call, count: Count, *, side: bool = False) -> Script:
    """A model whose main agent calls ``call`` twice, ``spawn`` (starting a subagent on a task
    saying ``SUBTASK``) and ``call`` again; the subagent calls ``call`` three times."""
    plan: list[Step] = [(call,), (call,), (spawn,), (call,)]
    subagent = looping(call, 3, count)

    def script(request: Mapping[str, Any]) -> Step:
        if side and not request.get("tools"):
            return Say("ok")
        if is_subagent(request):
            step = subagent(request)
            return Say("sub done") if isinstance(step, Say) else step
        done = count(request)
        return plan[done] if done < len(plan) else Say("done")

    return script


def since_prompt(
    items: Sequence[Mapping[str, Any]],
    is_prompt: Callable[[Mapping[str, Any]], bool],
    results: Callable[[Mapping[str, Any]], int],
) -> tuple[int, int]:
    """How many of a request's ``items`` (messages, contents) are the user's prompts, and how
    many tool results (``results`` of each) came after the last of them."""
    prompts = count = 0
    for item in items:
        if is_prompt(item):
            prompts, count = prompts + 1, 0
        count += results(item)
    return prompts, count


def texts(message: Mapping[str, Any]) -> list[str]:
    """The texts of a Messages or Chat Completions message (a string is one text)."""
    return [str(block.get("text", "")) for block in blocks(message)]


def is_subagent(request: Mapping[str, Any]) -> bool:
    """Whether a Messages or Chat Completions request is a subagent's (its task says SUBTASK)."""
    first = next(m for m in request["messages"] if m.get("role") == "user")
    return any("SUBTASK" in text for text in texts(first))


def contexts_after_tool(request: Mapping[str, Any], mark: str) -> list[str]:
    """The user messages starting with ``mark`` after a Chat Completions request's newest tool
    result: what the hooks of the last call said, where the host writes it so."""
    messages = request["messages"]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "tool"), default=-1)
    return [
        str(m["content"])
        for m in messages[last + 1 :]
        if m.get("role") == "user" and str(m.get("content", "")).startswith(mark)
    ]


def run_host(
    host: Host,
    sandbox: Sandbox,
    arguments: Sequence[str],
    env: Mapping[str, str],
    *,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run ``host`` with ``arguments`` in the project, with ``env`` and nothing on stdin, for
    ``TIMEOUT`` seconds at most."""
    return subprocess.run(
        [str(host.executable), *arguments],
        cwd=sandbox.project,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=check,
    )


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
    done = run_host(
        claude,
        sandbox,
        ["-p", prompt, "--output-format", "json", "--allowedTools", *allowed],
        {**_claude_env(sandbox, base_url), **(extra_env or {})},
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
    return run_host(
        codex,
        sandbox,
        ["exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", *arguments],
        sandbox.env(CODEX_HOME=str(sandbox.home / ".codex"), STANDIN_KEY="offline"),
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
    return run_host(
        copilot,
        sandbox,
        ["-p", prompt, "--allow-all-tools", *arguments],
        sandbox.env(
            COPILOT_OFFLINE="true",
            COPILOT_PROVIDER_BASE_URL=f"{base_url}/v1",
            COPILOT_PROVIDER_API_KEY="offline",
            COPILOT_MODEL="gpt-4.1",
        ),
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
    return run_host(
        gemini,
        sandbox,
        ["-p", prompt, "--approval-mode", "yolo", "-o", "json", *arguments],
        sandbox.env(
            GOOGLE_GEMINI_BASE_URL=base_url,
            GEMINI_API_KEY="offline",
            GEMINI_CLI_TRUST_WORKSPACE="true",
        ),
    )


def run_qwen(
    qwen: Host, sandbox: Sandbox, base_url: str, prompt: str, *arguments: str
) -> dict[str, Any]:
    """Run ``qwen -p PROMPT`` headless in the project against the OpenAI-compatible stand-in at
    ``base_url``, every tool allowed; return its JSON result (the last event it prints)."""
    provider = ["--auth-type", "openai", "--openai-api-key", "offline"]
    provider += ["--openai-base-url", f"{base_url}/v1", "-m", "stand-in"]
    done = run_host(
        qwen,
        sandbox,
        ["-p", prompt, *provider, "--approval-mode", "yolo", "-o", "json", *arguments],
        sandbox.env(QWEN_CODE_SUPPRESS_YOLO_WARNING="1"),
        check=False,
    )
    events: list[dict[str, Any]] = json.loads(done.stdout)
    return events[-1]


def run_cline(
    cline: Host, sandbox: Sandbox, base_url: str, prompt: str
) -> subprocess.CompletedProcess[str]:
    """Point Cline at the stand-in as an OpenAI-compatible provider (``cline auth``), then run
    ``cline --json PROMPT`` in the project (act mode, every tool approved)."""
    auth = ["auth", "-p", "openai", "-k", "offline", "-m", "gpt-4.1", "-b", f"{base_url}/v1"]
    run_host(cline, sandbox, auth, sandbox.env())
    return run_host(cline, sandbox, ["--json", prompt], sandbox.env())


CLINE_HUB = b"--cline-hub-daemon"
"""The argument of the hub daemon Cline starts for a run (``cline --cline-hub-daemon``), detached
in a session of its own, which outlives the run (Cline 3.0.65)."""


def cline_hubs(sandbox: Sandbox) -> list[int]:
    """The process ids of the Cline hub daemons started from ``sandbox`` (their ``HOME`` is
    its home), none of another test's or anyone else's."""
    home = b"HOME=" + os.fsencode(sandbox.home)
    found = []
    for process in Path("/proc").iterdir():
        try:
            if CLINE_HUB not in (process / "cmdline").read_bytes().split(b"\0"):
                continue
            if home in (process / "environ").read_bytes().split(b"\0"):
                found.append(int(process.name))
        except OSError:  # gone meanwhile, not a process, or not ours to read
            continue
    return found


def stop_cline_hub(cline: Host, sandbox: Sandbox, timeout: float = 10.0) -> list[int]:
    """Stop the hub daemon Cline started from ``sandbox`` with its own ``cline hub stop``
    (which finds it by the discovery file under the sandbox's home); return the ids of those
    still running after ``timeout`` seconds, which are then killed (empty: it stopped)."""
    run_host(cline, sandbox, ["hub", "stop"], sandbox.env(), check=False)
    deadline = time.monotonic() + timeout
    while (left := cline_hubs(sandbox)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left
