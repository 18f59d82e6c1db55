"""The real JavaScript hosts, offline, with the plugin ``repeat-guard install`` lists: pi,
opencode and OpenClaw.

Each host runs headless against the scripted Messages API stand-in; the checks are on what
reached the model. pi gets a reminder as its own user message (a steered custom message) right
after the result of the call that fired it; opencode and OpenClaw get it appended to that
call's result, under the guard's mark.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import GuardState, Reminder, ToolCallFinished, reduce

from ..hooks.agents import ROOT, Host, Sandbox, blocks, host_params
from ..hooks.standins import Call, MessagesStandIn, Say, Step
from .hosts import TIMEOUT, host_env, kill_sidecars, results_since_prompt, texts

pytestmark = pytest.mark.e2e

MARK = "\n\n[repeat-guard]\n"


def _run(command: list[str], sandbox: Sandbox, **env: str) -> str:
    done = subprocess.run(
        command,
        cwd=sandbox.project,
        env=host_env(sandbox, **env),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    return done.stdout


def _run_pi(release: Host, sandbox: Sandbox, url: str, prompt: str, continued: bool) -> str:
    agent = sandbox.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    provider = {"baseUrl": url, "api": "anthropic-messages", "apiKey": "stand-in"}
    models = {"providers": {"standin": {**provider, "models": [{"id": "stand-in"}]}}}
    (agent / "models.json").write_text(json.dumps(models))
    sandbox.install("pi")  # .pi/settings.json lists the plugin
    command = [str(release.executable), "-p", "--provider", "standin", "--model", "stand-in"]
    command += ["--offline", *(["--continue"] * continued), prompt]
    return _run(command, sandbox, PI_CODING_AGENT_DIR=str(agent))


def _pi_reminders(request: Mapping[str, Any]) -> list[str]:
    # A user message of its own, holding the reminder alone.
    found = []
    for message in request["messages"]:
        kinds = [b.get("type") for b in blocks(message)]
        if message["role"] == "user" and kinds == ["text"]:
            found += [t for t in texts(message) if t.startswith("<system-reminder>")]
    return found


def _run_opencode(release: Host, sandbox: Sandbox, url: str, prompt: str, continued: bool) -> str:
    provider = {
        "npm": "@ai-sdk/anthropic",
        "options": {"baseURL": f"{url}/v1", "apiKey": "stand-in"},
        "models": {"stand-in": {"name": "stand-in", "tool_call": True}},
    }
    config = {"model": "standin/stand-in", "provider": {"standin": provider}}
    (sandbox.project / "opencode.json").write_text(json.dumps({**config, "permission": "allow"}))
    sandbox.install("opencode")  # opencode.json lists the plugin too
    command = [str(release.executable), "run", *(["--continue"] * continued), prompt]
    env = {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"}
    return _run(command, sandbox, **env)


def _tool_results(request: Mapping[str, Any]) -> list[str]:
    found = []
    for message in request["messages"]:
        for block in blocks(message):
            if block.get("type") == "tool_result":
                content = block.get("content")
                found.append(content if isinstance(content, str) else json.dumps(content))
    return found


def _appended_reminders(request: Mapping[str, Any]) -> list[str]:
    # Appended to the call's result, under the guard's mark.
    return [r.split(MARK, 1)[1] for r in _tool_results(request) if MARK in r]


def _run_openclaw(release: Host, sandbox: Sandbox, url: str, prompt: str, continued: bool) -> str:
    # OpenClaw needs a newer Node than the machine's: the Makefile's, first on PATH.
    node = os.environ.get("REPEAT_GUARD_E2E_OPENCLAW_PATH", str(ROOT / ".tools/node24/node"))
    config_file = sandbox.home / ".openclaw" / "openclaw.json"
    if not continued:
        provider = {"baseUrl": url, "api": "anthropic-messages", "apiKey": "stand-in"}
        model = {"id": "stand-in", "name": "stand-in"}
        models = {"providers": {"standin": {**provider, "models": [model]}}}
        defaults = {"model": {"primary": "standin/stand-in"}, "workspace": str(sandbox.project)}
        config_file.parent.mkdir(parents=True)
        config_file.write_text(json.dumps({"models": models, "agents": {"defaults": defaults}}))
        sandbox.install("openclaw")  # lists the plugin in ~/.openclaw/openclaw.json
    command = [str(release.executable), "agent", "--local", "--session-id", "s1", "-m", prompt]
    out = _run(command, sandbox, PATH=f"{node}{os.pathsep}{os.environ['PATH']}")
    # The reply, without OpenClaw's log lines ("[agent/embedded] ...") around it.
    return "\n".join(line for line in out.splitlines() if not line.startswith("["))


@dataclass(frozen=True)
class PluginHost:
    """A host as these tests drive it: its npm package and binary, how to run one prompt, where
    the reminder lands, and the identical call the script repeats."""

    name: str
    package: str
    binary: str
    run_prompt: Callable[[Host, Sandbox, str, str, bool], str]
    reminders: Callable[[Mapping[str, Any]], list[str]]
    call: Call


HOSTS = [
    PluginHost(
        "pi",
        "@mariozechner/pi-coding-agent",
        "pi",
        _run_pi,
        _pi_reminders,
        Call("bash", {"command": "ls"}),
    ),
    PluginHost(
        "opencode",
        "opencode-ai",
        "opencode",
        _run_opencode,
        _appended_reminders,
        Call("bash", {"command": "ls", "description": "List files"}),
    ),
    PluginHost(
        "openclaw",
        "openclaw",
        "openclaw",
        _run_openclaw,
        _appended_reminders,
        Call("exec", {"command": "ls"}),
    ),
]


@dataclass(frozen=True)
class Release:
    """One release of one host."""

    host: PluginHost
    release: Host

    def run(self, sandbox: Sandbox, url: str, prompt: str, continued: bool) -> str:
        return self.host.run_prompt(self.release, sandbox, url, prompt, continued)

    @property
    def call(self) -> Call:
        return self.host.call

    def reminders(self, request: Mapping[str, Any]) -> list[str]:
        return self.host.reminders(request)


def _releases() -> list[Any]:
    params = []
    for host in HOSTS:
        for param in host_params(host.name, host.package, host.binary):
            (release,) = param.values
            assert isinstance(release, Host)
            params.append(pytest.param(Release(host, release), id=f"{host.name}-{release.version}"))
    return params


def _expected(host: Release, count: int) -> list[Reminder]:
    state = GuardState.initial()
    fired: list[Reminder] = []
    for _ in range(count):
        state, reminders = reduce(state, ToolCallFinished("a", host.call.tool, host.call.arguments))
        fired.extend(reminders)
    return fired


def _script(host: Release, calls: int) -> Callable[[Mapping[str, Any]], Step]:
    def script(request: Mapping[str, Any]) -> Step:
        return (host.call,) if results_since_prompt(request) < calls else Say("done")

    return script


def _after_results(model: MessagesStandIn) -> dict[int, Mapping[str, Any]]:
    # The request that followed the n-th tool result of the prompt, by n.
    return {results_since_prompt(r): r for r in model.model_requests()}


@pytest.fixture(params=_releases())
def host(request: pytest.FixtureRequest) -> Release:
    chosen: Release = request.param
    return chosen


def test_the_gentle_then_the_detailed_reminder_reach_the_model(
    host: Release, tmp_path: Path
) -> None:
    sandbox = Sandbox.create(tmp_path)
    with MessagesStandIn(_script(host, 6)) as model:
        assert host.run(sandbox, model.url, "list the files", False).strip().endswith("done")
    gentle, detailed = _expected(host, 5)
    requests = _after_results(model)
    assert [len(host.reminders(requests[n])) for n in range(7)] == [0, 0, 0, 1, 1, 2, 2]
    assert host.reminders(requests[6]) == [gentle.text, detailed.text]
    assert sandbox.errors() == []


def test_a_new_prompt_starts_over_in_a_continued_session(host: Release, tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    with MessagesStandIn(_script(host, 3)) as model:
        host.run(sandbox, model.url, "list the files", False)
        host.run(sandbox, model.url, "and again", True)
    (gentle,) = _expected(host, 3)
    # Two prompts in one session, three calls after each: the gentle reminder twice, never
    # the detailed one (which a chain carried over the prompt would have reached at 5).
    assert host.reminders(model.model_requests()[-1]) == [gentle.text, gentle.text]


def test_denyat_refuses_the_call_and_the_model_reads_the_reason(
    host: Release, tmp_path: Path
) -> None:
    sandbox = Sandbox.create(tmp_path)
    (sandbox.project / ".repeat-guard.toml").write_text("denyAt = 4\n")
    with MessagesStandIn(_script(host, 5)) as model:
        host.run(sandbox, model.url, "list the files", False)
    results = _tool_results(_after_results(model)[5])
    assert len(results) == 5
    assert not any("refused" in r for r in results[:3])
    tool = host.call.tool
    assert f"refused: this would be the 4th identical call to `{tool}`" in results[3]
    assert f"refused: this would be the 5th identical call to `{tool}`" in results[4]


def test_the_host_keeps_working_when_the_sidecar_is_killed_mid_session(
    host: Release, tmp_path: Path
) -> None:
    sandbox = Sandbox.create(tmp_path)
    killed: list[int] = []
    inner = _script(host, 6)

    def script(request: Mapping[str, Any]) -> Step:
        if results_since_prompt(request) == 2 and not killed:
            killed.append(kill_sidecars(sandbox.state))
        return inner(request)

    with MessagesStandIn(script) as model:
        assert host.run(sandbox, model.url, "list the files", False).strip().endswith("done")
    assert killed == [1]
    # Started again once, on the chain the store kept: the reminders come as before.
    requests = _after_results(model)
    assert [len(host.reminders(requests[n])) for n in range(7)] == [0, 0, 0, 1, 1, 2, 2]
