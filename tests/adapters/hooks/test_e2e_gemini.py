"""The real Gemini CLI binary, offline, with the hooks ``repeat-guard install`` writes.

Gemini CLI runs against a scripted Gemini API stand-in on 127.0.0.1 (``GOOGLE_GEMINI_BASE_URL``),
which logs every request; the checks are on what reached it. Gemini CLI counts a call at
``BeforeTool`` and hands the model a hook's context only at ``AfterTool``: these runs show the
reminder crossing from the one hook to the other through the store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import Deny, GuardConfig, GuardState, Reminder, ToolCallFinished, admit, reduce

from .agents import REPEAT_GUARD, Host, Sandbox, host_params, run_gemini
from .standins import Call, GeminiStandIn, Say, Step

pytestmark = pytest.mark.e2e


@pytest.fixture(params=host_params("gemini", "@google/gemini-cli", "gemini"))
def gemini(request: pytest.FixtureRequest) -> Host:
    """One Gemini CLI release (``make e2e``: the pinned ones; ``make e2e-latest``: the newest)."""
    host: Host = request.param
    return host


LS = {"command": "ls"}
LS_CALL = Call("run_shell_command", LS)


def _reminder(count: int, config: GuardConfig | None = None) -> Reminder:
    state = GuardState.initial(config)
    fired: list[Reminder] = []
    for _ in range(count):
        state, reminders = reduce(state, ToolCallFinished("a", "run_shell_command", LS))
        fired.extend(reminders)
    return fired[-1]


def _wrapped(reminder: Reminder) -> str:
    # Gemini CLI's own envelope around an AfterTool answer, appended to the call's output.
    return f"<hook_context>{reminder.body}</hook_context>"


def _parts(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [part for content in request["contents"] for part in content.get("parts", [])]


def _prompts(request: Mapping[str, Any]) -> int:
    return sum(
        1
        for content in request["contents"]
        if content.get("role") == "user"
        and not any("functionResponse" in part for part in content.get("parts", []))
    )


def _results_since_prompt(request: Mapping[str, Any]) -> int:
    count = 0
    for content in request["contents"]:
        parts = content.get("parts", [])
        responses = sum(1 for part in parts if "functionResponse" in part)
        if content.get("role") == "user" and not responses:
            count = 0
        count += responses
    return count


def _responses(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [
        part["functionResponse"]["response"]
        for part in _parts(request)
        if "functionResponse" in part
    ]


def _contexts(request: Mapping[str, Any]) -> list[str]:
    """The hook contexts in the newest call's result: what its hooks said."""
    responses = _responses(request)
    if not responses:
        return []
    output = str(responses[-1].get("output", ""))
    return ["<hook_context>" + piece for piece in output.split("<hook_context>")[1:]]


def test_install_writes_entries_that_run_this_executable(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    out = sandbox.install("gemini")
    path = sandbox.project / ".gemini" / "settings.json"
    assert out.startswith(f"repeat-guard gemini hooks added to {path}\n")
    hooks = json.loads(path.read_text())["hooks"]
    assert sorted(hooks) == ["AfterTool", "BeforeAgent", "BeforeTool", "SessionEnd"]
    timeouts = {}
    for event, groups in hooks.items():
        ((entry,),) = [group["hooks"] for group in groups]
        assert entry["command"] == f"{REPEAT_GUARD} hook gemini"
        timeouts[event] = entry["timeout"]
    # Milliseconds, as Gemini CLI reads them.
    assert timeouts == {
        "BeforeTool": 10000,
        "AfterTool": 10000,
        "BeforeAgent": 10000,
        "SessionEnd": 3000,
    }
    assert sandbox.install("gemini").startswith(f"{path}: already as wanted; nothing changed\n")


def test_a_loop_gets_the_gentle_then_the_detailed_reminder(tmp_path: Path, gemini: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("gemini")

    def script(request: Mapping[str, Any]) -> Step:
        return (LS_CALL,) if _results_since_prompt(request) < 6 else Say("done")

    with GeminiStandIn(script) as model:
        run_gemini(gemini, sandbox, model.url, "list the files")
    seen = [(_results_since_prompt(r), _contexts(r)) for r in model.model_requests()]
    gentle, detailed = _wrapped(_reminder(3)), _wrapped(_reminder(5))
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, []), (5, [detailed]), (6, [])]
    assert "You are repeating the exact same tool call." in gentle
    assert "<system-reminder>" not in gentle
    assert sandbox.log() == ""


def test_a_second_prompt_starts_the_chain_over(tmp_path: Path, gemini: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("gemini")
    calls_per_prompt = {1: 2, 2: 3}

    def script(request: Mapping[str, Any]) -> Step:
        wanted = calls_per_prompt.get(_prompts(request), 0)
        return (LS_CALL,) if _results_since_prompt(request) < wanted else Say("done")

    with GeminiStandIn(script) as model:
        first = run_gemini(gemini, sandbox, model.url, "list the files")
        second = run_gemini(gemini, sandbox, model.url, "again, please", "--resume", "latest")
    seen = [(_prompts(r), _results_since_prompt(r), _contexts(r)) for r in model.model_requests()]
    # Without the reset the second prompt's first call would be the third in a row.
    assert seen == [
        (1, 0, []),
        (1, 1, []),
        (1, 2, []),
        (2, 0, []),
        (2, 1, []),
        (2, 2, []),
        (2, 3, [_wrapped(_reminder(3))]),
    ]
    # Both prompts were one session: BeforeAgent, not a new session, reset the chain.
    assert json.loads(first.stdout)["session_id"] == json.loads(second.stdout)["session_id"]
    assert sandbox.log() == ""


def test_deny_at_refuses_the_call_and_the_model_reads_why(tmp_path: Path, gemini: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("gemini")
    (sandbox.project / ".repeat-guard.toml").write_text("denyAt = 4\n")

    def script(request: Mapping[str, Any]) -> Step:
        return (LS_CALL,) if _results_since_prompt(request) < 5 else Say("done")

    with GeminiStandIn(script) as model:
        run_gemini(gemini, sandbox, model.url, "list the files")
    requests = model.model_requests()
    assert [_results_since_prompt(r) for r in requests] == [0, 1, 2, 3, 4, 5]
    state = GuardState.initial(GuardConfig(deny_at=4))
    for _ in range(3):
        state, _ = reduce(state, ToolCallFinished("a", "run_shell_command", LS))
    refusal = admit(state, ToolCallFinished("a", "run_shell_command", LS))
    assert isinstance(refusal, Deny)
    responses = _responses(requests[-1])
    # The first three ran (the third with the gentle reminder); the fourth and fifth did not.
    assert ["output" in response for response in responses] == [True, True, True, False, False]
    assert responses[2]["output"].endswith(_wrapped(_reminder(3)))
    assert responses[3] == {"error": f"Tool execution blocked: {refusal.reason}"}
    # No AfterTool follows a refused call: the detailed reminder goes with the fifth's refusal.
    fifth = str(responses[4]["error"])
    assert fifth.startswith("Tool execution blocked: refused: this would be the 5th")
    assert fifth.endswith(f"\n\n{_reminder(5).body}")
    assert sandbox.log() == ""


def test_a_bad_configuration_is_a_warning_and_every_call_runs(tmp_path: Path, gemini: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("gemini")
    (sandbox.project / ".repeat-guard.toml").write_text("thresholds = 3\n")

    def script(request: Mapping[str, Any]) -> Step:
        return (LS_CALL,) if _results_since_prompt(request) < 3 else Say("done")

    with GeminiStandIn(script) as model:
        done = run_gemini(gemini, sandbox, model.url, "list the files")
    responses = _responses(model.model_requests()[-1])
    assert ["output" in response for response in responses] == [True, True, True]
    # Exit status 1: Gemini CLI shows the hook's stderr as a warning and goes on.
    assert "repeat-guard: invalid configuration in " in done.stderr


def test_gemini_clis_own_loop_detection_stops_the_fifth_call(tmp_path: Path, gemini: Host) -> None:
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("gemini")

    def script(request: Mapping[str, Any]) -> Step:
        return (LS_CALL,) if _results_since_prompt(request) < 6 else Say("done")

    with GeminiStandIn(script) as model:
        run_gemini(gemini, sandbox, model.url, "list the files", detect_loops=True)
    requests = model.model_requests()
    seen = [(_results_since_prompt(r), _contexts(r)) for r in requests[:5]]
    # The guard's gentle reminder comes first; Gemini CLI then stops the 5th identical call
    # before it runs (no hook sees it) and tells the model so in a prompt of its own.
    assert seen == [(0, []), (1, []), (2, []), (3, [_wrapped(_reminder(3))]), (4, [])]
    notice = requests[5]["contents"][-1]["parts"][0]["text"]
    assert notice.startswith("System: Potential loop detected.")
    assert sandbox.log() == ""
