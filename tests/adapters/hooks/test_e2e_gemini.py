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

from repeat_guard import Reminder

from .agents import (
    Host,
    Repeated,
    Sandbox,
    check_install,
    host_fixture,
    installed,
    looping,
    run_gemini,
    since_prompt,
)
from .standins import Call, GeminiStandIn, Say, Step, growing_log

pytestmark = pytest.mark.e2e

gemini = host_fixture("gemini", "@google/gemini-cli", "gemini")

LS = {"command": "ls"}
LS_CALL = Call("run_shell_command", LS)
LOOP = Repeated("run_shell_command", LS)


def _wrapped(reminder: Reminder) -> str:
    # Gemini CLI's own envelope around an AfterTool answer, appended to the call's output.
    return f"<hook_context>{reminder.body}</hook_context>"


def _parts(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [part for content in request["contents"] for part in content.get("parts", [])]


def _function_responses(content: Mapping[str, Any]) -> int:
    return sum(1 for part in content.get("parts", []) if "functionResponse" in part)


def _is_prompt(content: Mapping[str, Any]) -> bool:
    return content.get("role") == "user" and not _function_responses(content)


def _prompts(request: Mapping[str, Any]) -> int:
    return since_prompt(request["contents"], _is_prompt, _function_responses)[0]


def _results_since_prompt(request: Mapping[str, Any]) -> int:
    return since_prompt(request["contents"], _is_prompt, _function_responses)[1]


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
    path = sandbox.project / ".gemini" / "settings.json"
    events = ["AfterTool", "BeforeAgent", "BeforeTool", "SessionEnd"]
    hooks = check_install(sandbox, "gemini", path, events)
    # Milliseconds, as Gemini CLI reads them.
    assert {event: groups[0]["hooks"][0]["timeout"] for event, groups in hooks.items()} == {
        "BeforeTool": 10000,
        "AfterTool": 10000,
        "BeforeAgent": 10000,
        "SessionEnd": 3000,
    }


def test_a_loop_gets_the_gentle_then_the_detailed_reminder(tmp_path: Path, gemini: Host) -> None:
    sandbox = installed(tmp_path, "gemini")
    with GeminiStandIn(looping(LS_CALL, 6, _results_since_prompt)) as model:
        run_gemini(gemini, sandbox, model.url, "list the files")
    seen = [(_results_since_prompt(r), _contexts(r)) for r in model.model_requests()]
    gentle, detailed = _wrapped(LOOP.reminder(3)), _wrapped(LOOP.reminder(5))
    assert seen == [(0, []), (1, []), (2, []), (3, [gentle]), (4, []), (5, [detailed]), (6, [])]
    assert "You are repeating the exact same tool call." in gentle
    assert "<system-reminder>" not in gentle
    assert sandbox.errors() == []


def test_a_second_prompt_starts_the_chain_over(tmp_path: Path, gemini: Host) -> None:
    sandbox = installed(tmp_path, "gemini")
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
        (2, 3, [_wrapped(LOOP.reminder(3))]),
    ]
    # Both prompts were one session: BeforeAgent, not a new session, reset the chain.
    assert json.loads(first.stdout)["session_id"] == json.loads(second.stdout)["session_id"]
    assert sandbox.errors() == []


def test_deny_at_refuses_the_call_and_the_model_reads_why(tmp_path: Path, gemini: Host) -> None:
    sandbox = installed(tmp_path, "gemini", "denyAt = 4\n")
    with GeminiStandIn(looping(LS_CALL, 5, _results_since_prompt)) as model:
        run_gemini(gemini, sandbox, model.url, "list the files")
    requests = model.model_requests()
    assert [_results_since_prompt(r) for r in requests] == [0, 1, 2, 3, 4, 5]
    responses = _responses(requests[-1])
    # The first three ran (the third with the gentle reminder); the fourth and fifth did not.
    assert ["output" in response for response in responses] == [True, True, True, False, False]
    assert responses[2]["output"].endswith(_wrapped(LOOP.reminder(3)))
    assert responses[3] == {"error": f"Tool execution blocked: {LOOP.refusal(4)}"}
    # No AfterTool follows a refused call: the detailed reminder goes with the fifth's refusal.
    fifth = str(responses[4]["error"])
    assert fifth.startswith("Tool execution blocked: refused: this would be the 5th")
    assert fifth.endswith(f"\n\n{LOOP.reminder(5).body}")
    assert sandbox.errors() == []


def test_a_bad_configuration_is_a_warning_and_every_call_runs(tmp_path: Path, gemini: Host) -> None:
    sandbox = installed(tmp_path, "gemini", "thresholds = 3\n")
    with GeminiStandIn(looping(LS_CALL, 3, _results_since_prompt)) as model:
        done = run_gemini(gemini, sandbox, model.url, "list the files")
    responses = _responses(model.model_requests()[-1])
    assert ["output" in response for response in responses] == [True, True, True]
    # Exit status 1: Gemini CLI shows the hook's stderr as a warning and goes on.
    assert "repeat-guard: invalid configuration in " in done.stderr


def test_gemini_clis_own_loop_detection_stops_the_fifth_call(tmp_path: Path, gemini: Host) -> None:
    sandbox = installed(tmp_path, "gemini")
    with GeminiStandIn(looping(LS_CALL, 6, _results_since_prompt)) as model:
        run_gemini(gemini, sandbox, model.url, "list the files", detect_loops=True)
    requests = model.model_requests()
    seen = [(_results_since_prompt(r), _contexts(r)) for r in requests[:5]]
    # The guard's gentle reminder comes first; Gemini CLI then stops the 5th identical call
    # before it runs (no hook sees it) and tells the model so in a prompt of its own.
    assert seen == [(0, []), (1, []), (2, []), (3, [_wrapped(LOOP.reminder(3))]), (4, [])]
    notice = requests[5]["contents"][-1]["parts"][0]["text"]
    assert notice.startswith("System: Potential loop detected.")
    assert sandbox.errors() == []


POLL = Call("run_shell_command", {"command": "tail -n 20 build.log"})
BUILT = ["compiled a.o", "compiled b.o", "compiled c.o", "compiled d.o"]


@pytest.mark.parametrize(("flags", "reminded"), [((), []), (("--preset", "seed"), [3])])
def test_a_shell_poll_whose_output_grows_follows_the_installed_preset(
    tmp_path: Path, gemini: Host, flags: tuple[str, ...], reminded: list[int]
) -> None:
    # A build writes one line more to its log before each of four identical polls (the
    # script writes it, as the build would, before asking for the poll). AfterTool brings each
    # poll's output to the guard: under the gemini preset a poll whose output changed is
    # progress; under --preset seed the third poll is reminded, whatever it read.
    sandbox = Sandbox.create(tmp_path)
    sandbox.install("gemini", *flags)
    log = sandbox.project / "build.log"

    script = growing_log(log, BUILT, (POLL,), _results_since_prompt)
    with GeminiStandIn(script) as model:
        run_gemini(gemini, sandbox, model.url, "wait for the build")
    requests = model.model_requests()
    seen = [(_results_since_prompt(r), _contexts(r)) for r in requests]
    assert [count for count, _ in seen] == [0, 1, 2, 3, 4]
    assert [count for count, contexts in seen if contexts] == reminded
    if reminded:
        assert seen[3][1] == [_wrapped(Repeated(POLL.tool, POLL.arguments).reminder(3))]
    # Each poll read one line more than the one before.
    outputs = [str(response["output"]) for response in _responses(requests[-1])]
    assert [sum(line in output for line in BUILT) for output in outputs] == [1, 2, 3, 4]
    assert sandbox.errors() == []
