"""The real Codex CLI, offline, with the hooks ``repeat-guard install codex`` writes.

Codex sends a shell call to its hooks as ``Bash`` with ``{"command": ...}`` (its rollout records
the same call as ``exec_command`` with ``{"cmd": ...}``), and puts a hook's ``additionalContext``
into the next request as a developer message just before the call's output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import GuardConfig

from .agents import (
    Host,
    Repeated,
    Sandbox,
    check_install,
    configure_codex,
    host_fixture,
    looping,
    run_codex,
)
from .standins import Call, ResponsesStandIn, Say, Step

pytestmark = pytest.mark.e2e

LS = Call("exec_command", {"cmd": "ls"})
# Codex reports its shell calls to hooks as Claude Code's Bash.
LOOP = Repeated("Bash", {"command": "ls"})

codex = host_fixture("codex", "@openai/codex", "codex")


def _reminder(count: int, config: GuardConfig | None = None) -> str:
    # Codex passes the reminder's whole text on, the core's envelope and all.
    return LOOP.reminder(count, config).text


def _since_prompt(request: Mapping[str, Any], *, whole: bool = False) -> list[dict[str, Any]]:
    items = [i for i in request.get("input", []) if isinstance(i, dict)]
    if whole:
        return items
    last_user = max(
        (n for n, i in enumerate(items) if i.get("type") == "message" and i.get("role") == "user"),
        default=-1,
    )
    return items[last_user + 1 :]


def _outputs(request: Mapping[str, Any], *, whole: bool = False) -> int:
    items = _since_prompt(request, whole=whole)
    return sum(1 for i in items if i.get("type") == "function_call_output")


def _reminders(request: Mapping[str, Any], *, whole: bool = False) -> list[tuple[int, str]]:
    """(the call it follows, text) of each guard message since the prompt (or in all input)."""
    found: list[tuple[int, str]] = []
    outputs = 0
    for item in _since_prompt(request, whole=whole):
        if item.get("type") == "function_call_output":
            outputs += 1
        elif item.get("type") == "message" and item.get("role") == "developer":
            for part in item.get("content", []):
                text = str(part.get("text", ""))
                if "<system-reminder>" in text:
                    found.append((outputs + 1, text))
    return found


def _setup(tmp_path: Path, model: ResponsesStandIn, config: str | None = None) -> Sandbox:
    sandbox = Sandbox.create(tmp_path)
    configure_codex(sandbox, model.url)
    sandbox.install("codex")
    if config is not None:
        sandbox.configure(config)
    return sandbox


def test_install_writes_hooks_json_in_codex_home(tmp_path: Path) -> None:
    sandbox = Sandbox.create(tmp_path)
    path = sandbox.home / ".codex" / "hooks.json"
    # With write_stdin's results (Codex's preset) alone (a tool matcher).
    events = ["PreToolUse", "SessionEnd", "SubagentStop", "UserPromptSubmit", "PostToolUse"]
    check_install(sandbox, "codex", path, events)


def test_a_loop_gets_the_gentle_then_the_detailed_reminder(tmp_path: Path, codex: Host) -> None:
    with ResponsesStandIn(looping(LS, 6, _outputs)) as model:
        sandbox = _setup(tmp_path, model)
        run_codex(codex, sandbox, "list files")
    requests = model.model_requests()
    assert [_outputs(r) for r in requests] == [0, 1, 2, 3, 4, 5, 6]
    assert [len(_reminders(r)) for r in requests] == [0, 0, 0, 1, 1, 2, 2]
    assert _reminders(requests[-1]) == [(3, _reminder(3)), (5, _reminder(5))]
    assert sandbox.errors() == []


def test_parallel_identical_calls_lose_no_count(tmp_path: Path, codex: Host) -> None:
    def script(request: Mapping[str, Any]) -> Step:
        return (LS, LS) if _outputs(request) < 6 else Say("done")

    with ResponsesStandIn(script) as model:
        sandbox = _setup(tmp_path, model, "thresholds = [3, 6]\n")
        run_codex(codex, sandbox, "list files")
    config = GuardConfig(thresholds=(3, 6))
    final = model.model_requests()[-1]
    assert _outputs(final) == 6
    assert [text for _, text in _reminders(final)] == [_reminder(3, config), _reminder(6, config)]
    assert sandbox.errors() == []


def test_a_subagent_keeps_its_own_chain(tmp_path: Path, codex: Host) -> None:
    # Codex's subagent tools live in the multi_agent_v1 namespace; its hooks see them as
    # spawn_agent and multi_agent_v1wait_agent, excluded here so the parent's ls calls around
    # them form one run. The subagent's calls carry agent_id and the parent's session_id.
    def is_subagent(request: Mapping[str, Any]) -> bool:
        items = request.get("input", [])
        return any("SUBTASK" in json.dumps(i) for i in items if i.get("role") == "user")

    # Codex adds a user-role notice to the parent when the subagent is done, so the parent's
    # calls are counted over its whole input.
    def script(request: Mapping[str, Any]) -> Step:
        if is_subagent(request):
            return (LS,) if _outputs(request) < 3 else Say("sub done")
        done = _outputs(request, whole=True)
        if done == 2:
            return (Call("spawn_agent", {"message": "SUBTASK: list files"}, "multi_agent_v1"),)
        if done == 3:
            items = _since_prompt(request, whole=True)
            spawned = [i for i in items if "agent_id" in str(i.get("output"))]
            agent = json.loads(spawned[-1]["output"])["agent_id"]
            return (Call("wait_agent", {"targets": [agent]}, "multi_agent_v1"),)
        return (LS,) if done < 5 else Say("done")

    with ResponsesStandIn(script) as model:
        sandbox = _setup(tmp_path, model, 'exclude = ["spawn_agent", "*wait_agent"]\n')
        run_codex(codex, sandbox, "list files")
    requests = model.model_requests()
    sub = [r for r in requests if is_subagent(r)]
    main = [r for r in requests if not is_subagent(r)]
    assert _reminders(sub[-1]) == [(3, _reminder(3))]
    # The parent's third ls is its third in a row: the subagent's calls (and the task it
    # started with) neither added to the parent's chain nor reset it.
    assert _outputs(main[-1], whole=True) == 5
    assert _reminders(main[-1], whole=True) == [(5, _reminder(3))]
    assert sandbox.errors() == []


def test_a_resumed_session_starts_the_chain_over(tmp_path: Path, codex: Host) -> None:
    with ResponsesStandIn(looping(LS, 2, _outputs)) as model:
        sandbox = _setup(tmp_path, model)
        run_codex(codex, sandbox, "list files")
        run_codex(codex, sandbox, "resume", "--last", "again, please")
    requests = model.model_requests()
    assert [_outputs(r) for r in requests] == [0, 1, 2, 0, 1, 2]
    # Four identical calls in one session, two per prompt: no reminder.
    assert [_reminders(r) for r in requests] == [[]] * 6
    assert sandbox.errors() == []


def test_deny_at_refuses_the_call_and_the_model_reads_why(tmp_path: Path, codex: Host) -> None:
    with ResponsesStandIn(looping(LS, 5, _outputs)) as model:
        sandbox = _setup(tmp_path, model, "denyAt = 4\n")
        run_codex(codex, sandbox, "list files")
    final = model.model_requests()[-1]
    outputs = [
        str(i["output"]) for i in _since_prompt(final) if i["type"] == "function_call_output"
    ]
    assert len(outputs) == 5
    assert not any("blocked" in output for output in outputs[:3])
    # Codex wraps the reason: "Command blocked by PreToolUse hook: <reason>. Command: ls".
    for count, output in ((4, outputs[3]), (5, outputs[4])):
        assert output.startswith(
            f"Command blocked by PreToolUse hook: refused: this would be the {count}th identical "
            "call to `Bash` in a row"
        )
        assert output.endswith(". Command: ls")
    # The refused fourth counted: the fifth, refused too, carries the detailed reminder.
    assert _reminders(final) == [(3, _reminder(3)), (5, _reminder(5))]
    assert sandbox.errors() == []


def test_a_poll_whose_output_changes_is_progress_with_results(tmp_path: Path, codex: Host) -> None:
    outputs = ["10%", "60%", "done", "done", "done", "done"]
    project: list[Path] = []

    def script(request: Mapping[str, Any]) -> Step:
        done = _outputs(request)
        if done == len(outputs):
            return Say("done")
        # What the next call will read: the build moving on, then finished.
        (project[0] / "progress.txt").write_text(outputs[done] + "\n")
        # Exits 3 until the build is done: Codex reports those calls with PostToolUse too.
        return (
            Call("exec_command", {"cmd": "cat progress.txt; grep -qx done progress.txt || exit 3"}),
        )

    with ResponsesStandIn(script) as model:
        sandbox = Sandbox.create(tmp_path)
        project.append(sandbox.project)
        configure_codex(sandbox, model.url)
        sandbox.install("codex", "--results")
        sandbox.configure('progress = "result"\n')
        run_codex(codex, sandbox, "wait for the build")
    final = model.model_requests()[-1]
    read = [str(i["output"]) for i in _since_prompt(final) if i["type"] == "function_call_output"]
    assert [output.strip().splitlines()[-1] for output in read] == outputs
    # The output changed twice: only the fifth call (the third since it last changed) loops.
    assert _reminders(final) == [(5, _reminder(3))]
    assert sandbox.errors() == []


# A process that prints the files step1, step2... each once it appears, until a file ``stop`` does.
_FEED = (
    "n=1; while [ ! -f stop ]; do if [ -f step$n ]; then cat step$n; n=$((n+1)); fi; "
    "sleep 0.05; done"
)


def test_codex_runs_no_hook_for_a_write_stdin_poll(tmp_path: Path, codex: Host) -> None:
    # Codex's preset names write_stdin, and a plain install sends its results to the hook (a
    # PostToolUse matcher), but Codex 0.171.0 runs no hook for write_stdin at all: four
    # identical polls under --preset seed draw no reminder, and a hook of the test's own beside
    # ours, matching every tool, hears the exec_command that started the process (as Bash) and
    # nothing of the polls. So the
    # preset cannot act on Codex's polls through its hooks (the hooks README says so).
    project: list[Path] = []
    polls = 4

    def script(request: Mapping[str, Any]) -> Step:
        done = _outputs(request)
        if done == 0:
            return (Call("exec_command", {"cmd": _FEED, "yield_time_ms": 500}),)
        if done > polls:
            (project[0] / "stop").write_text("")
            return Say("done")
        first = next(i for i in _since_prompt(request) if i["type"] == "function_call_output")
        session = re.search(r"session ID (\d+)", str(first["output"]))
        assert session is not None, first
        (project[0] / f"step{done}").write_text(f"step {done}\n")
        chars = {"session_id": int(session[1]), "chars": "", "yield_time_ms": 1500}
        return (Call("write_stdin", chars),)

    heard = tmp_path / "heard.jsonl"
    with ResponsesStandIn(script) as model:
        sandbox = Sandbox.create(tmp_path)
        project.append(sandbox.project)
        configure_codex(sandbox, model.url)
        sandbox.install("codex", "--preset", "seed", "--results")
        hooks_json = sandbox.home / ".codex" / "hooks.json"
        settings = json.loads(hooks_json.read_text())
        listen = {"type": "command", "command": f"cat >> {heard}; echo >> {heard}"}
        for event in ("PreToolUse", "PostToolUse"):
            settings["hooks"][event].append({"matcher": "*", "hooks": [listen]})
        hooks_json.write_text(json.dumps(settings))
        run_codex(codex, sandbox, "watch the build")
    final = model.model_requests()[-1]
    read = [str(i["output"]) for i in _since_prompt(final) if i["type"] == "function_call_output"]
    assert [f"step {n}" in output for n, output in enumerate(read)] == [False] + [True] * polls
    assert _reminders(final) == []
    events = [json.loads(line) for line in heard.read_text().splitlines() if line.strip()]
    # The start, as Bash; no PostToolUse for it either, since it was still running.
    assert [(e["hook_event_name"], e["tool_name"]) for e in events] == [("PreToolUse", "Bash")]
    assert sandbox.errors() == []


def test_a_plain_install_hears_a_shell_polls_result(tmp_path: Path, codex: Host) -> None:
    # Codex reports exec_command to its hooks as Bash, which the codex preset names: a plain
    # install's PostToolUse matcher (write_stdin|exec_command|Bash) hears each poll's output,
    # so a poll whose output changed is progress, and only the third identical output loops.
    project: list[Path] = []
    outputs = ["step 1", "step 2", "step 3", "step 3", "step 3"]

    def script(request: Mapping[str, Any]) -> Step:
        done = _outputs(request)
        if done == len(outputs):
            return Say("done")
        (project[0] / "progress.txt").write_text(outputs[done] + "\n")
        return (Call("exec_command", {"cmd": "cat progress.txt"}),)

    with ResponsesStandIn(script) as model:
        sandbox = Sandbox.create(tmp_path)
        project.append(sandbox.project)
        configure_codex(sandbox, model.url)
        sandbox.install("codex")
        run_codex(codex, sandbox, "wait for the build")
    settings = json.loads((sandbox.home / ".codex" / "hooks.json").read_text())
    assert [g["matcher"] for g in settings["hooks"]["PostToolUse"]] == [
        "write_stdin|exec_command|Bash"
    ]
    final = model.model_requests()[-1]
    read = [str(i["output"]) for i in _since_prompt(final) if i["type"] == "function_call_output"]
    assert [output.strip().splitlines()[-1] for output in read] == outputs
    poll = Repeated("Bash", {"command": "cat progress.txt"})
    assert _reminders(final) == [(5, poll.reminder(3).text)]
    assert sandbox.errors() == []
