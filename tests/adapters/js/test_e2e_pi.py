"""The real pi (``@mariozechner/pi-coding-agent``), offline, with the package's pi extension.

pi runs in print mode (``pi -p``) against the scripted Messages API stand-in; the checks are on
what reached the model. The reminder comes as its own user message (pi's steered custom
message), right after the tool result of the call that fired it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import GuardConfig, GuardState, Reminder, ToolCallFinished, reduce

from ..hooks.agents import Sandbox, blocks
from ..hooks.standins import Call, MessagesStandIn, Say, Step
from .hosts import BUILT, HOSTS_BIN, TIMEOUT, host_env, kill_sidecars, results_since_prompt, texts

pytestmark = pytest.mark.e2e

PI = HOSTS_BIN / "pi"
LS = {"command": "ls"}


def _reminders(count: int, config: GuardConfig | None = None) -> list[Reminder]:
    state = GuardState.initial(config)
    fired: list[Reminder] = []
    for _ in range(count):
        state, reminders = reduce(state, ToolCallFinished("a", "bash", LS))
        fired.extend(reminders)
    return fired


def _script(calls: int) -> Any:
    def script(request: Mapping[str, Any]) -> Step:
        if results_since_prompt(request) < calls:
            return (Call("bash", LS),)
        return Say("done")

    return script


def _run_pi(sandbox: Sandbox, model: MessagesStandIn, prompt: str, *flags: str) -> str:
    agent = sandbox.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    provider = {"baseUrl": model.url, "api": "anthropic-messages", "apiKey": "stand-in"}
    models = {"providers": {"standin": {**provider, "models": [{"id": "stand-in"}]}}}
    (agent / "models.json").write_text(json.dumps(models))
    command = [str(PI), "-p", "--provider", "standin", "--model", "stand-in", "--offline"]
    command += ["-e", str(BUILT / "pi.js"), *flags, prompt]
    done = subprocess.run(
        command,
        cwd=sandbox.project,
        env=host_env(sandbox, PI_CODING_AGENT_DIR=str(agent)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    return done.stdout


def _reminder_texts(request: Mapping[str, Any]) -> list[str]:
    return [t for m in request["messages"] for t in texts(m) if "<system-reminder>" in t]


def _after_results(model: MessagesStandIn) -> dict[int, Mapping[str, Any]]:
    # The request that followed the n-th tool result of the prompt, by n.
    return {results_since_prompt(r): r for r in model.model_requests()}


def test_pi_gets_the_gentle_then_the_detailed_reminder_as_its_own_message(
    tmp_path: Path,
) -> None:
    sandbox = Sandbox.create(tmp_path)
    with MessagesStandIn(_script(6)) as model:
        assert _run_pi(sandbox, model, "list the files").strip() == "done"
    gentle, detailed = _reminders(5)
    requests = _after_results(model)
    assert [len(_reminder_texts(requests[n])) for n in range(7)] == [0, 0, 0, 1, 1, 2, 2]
    third = requests[3]["messages"]
    # Right after the third call's result, a user message of its own holding the reminder.
    assert [b.get("type") for b in blocks(third[-2])] == ["tool_result"]
    assert third[-1]["role"] == "user"
    assert texts(third[-1]) == [gentle.text]
    assert texts(requests[5]["messages"][-1]) == [detailed.text]
    assert sandbox.log() == ""


def test_a_new_prompt_starts_over_in_a_continued_session(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    with MessagesStandIn(_script(3)) as model:
        _run_pi(sandbox, model, "list the files")
        _run_pi(sandbox, model, "and again", "--continue")
    (gentle,) = _reminders(3)
    last = model.model_requests()[-1]
    # Two prompts in one session, three calls after each: the gentle reminder twice, never
    # the detailed one (which a chain carried over the prompt would have reached at 5).
    assert _reminder_texts(last) == [gentle.text, gentle.text]


def test_denyat_refuses_the_call_and_pi_gives_the_model_the_reason(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    (sandbox.project / ".repeat-guard.toml").write_text("denyAt = 4\n")
    with MessagesStandIn(_script(5)) as model:
        _run_pi(sandbox, model, "list the files")
    requests = _after_results(model)
    results = [b for m in requests[5]["messages"] for b in blocks(m) if b["type"] == "tool_result"]
    assert [r.get("is_error") for r in results] == [False, False, False, True, True]
    assert "refused: this would be the 4th identical call to `bash`" in json.dumps(results[3])
    assert "refused: this would be the 5th identical call" in json.dumps(results[4])


def test_pi_keeps_working_when_the_sidecar_is_killed_mid_session(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    killed: list[int] = []
    inner = _script(6)

    def script(request: Mapping[str, Any]) -> Step:
        if results_since_prompt(request) == 2 and not killed:
            killed.append(kill_sidecars(sandbox.state))
        return inner(request)  # type: ignore[no-any-return]  # a Step, as _script builds it

    with MessagesStandIn(script) as model:
        assert _run_pi(sandbox, model, "list the files").strip() == "done"
    assert killed == [1]
    # Started again once, on the chain the store kept: the reminders come as before.
    requests = _after_results(model)
    assert [len(_reminder_texts(requests[n])) for n in range(7)] == [0, 0, 0, 1, 1, 2, 2]
    assert sandbox.log() == ""
