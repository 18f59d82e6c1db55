"""Crush's hook inputs as guard events, the answers it reads, and its flat settings entries.

Crush is not run here: ``fixtures/crush/`` holds inputs in the shape its docs and source
document (``fixtures/crush/README.md`` names the files and the commit).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import GuardState, Reminder, ToolCallFinished, reduce
from repeat_guard_hooks import (
    CLAUDE_CODE,
    CRUSH,
    DIALECTS,
    AgentEvent,
    HookOptions,
    Unused,
    context_answer,
    hook_input_or_reason,
    run_hook,
)
from repeat_guard_hooks.installer import (
    hook_command,
    install,
    installed_events,
    settings_path,
    uninstall,
)

FIXTURES = Path(__file__).parent / "fixtures" / "crush"
LS = {"command": "ls", "description": "list"}
COMMAND = hook_command(["/opt/rg/bin/repeat-guard"], CRUSH)


def _inputs() -> list[dict[str, Any]]:
    lines = (FIXTURES / "loop.hooks.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _reminder(count: int) -> Reminder:
    state = GuardState.initial()
    fired: list[Reminder] = []
    for _ in range(count):
        state, reminders = reduce(state, ToolCallFinished("a", "bash", LS))
        fired.extend(reminders)
    return fired[-1]


def _answers(tmp_path: Path, config: str = "") -> list[object]:
    (tmp_path / "guard.toml").write_text(config)
    options = HookOptions(CRUSH, str(tmp_path / "state.sqlite3"), str(tmp_path / "guard.toml"))
    said: list[object] = []
    for now, payload in enumerate(_inputs()):
        outcome = run_hook(options, json.dumps(payload).encode(), float(now))
        assert (outcome.status, outcome.stderr) == (0, "")
        said.append(json.loads(outcome.stdout) if outcome.stdout else None)
    return said


def test_crush_is_a_host() -> None:
    assert DIALECTS["crush"] is CRUSH
    assert installed_events(CRUSH, results=True) == ("PreToolUse",)


def test_a_pre_tool_use_is_a_call_of_the_session() -> None:
    payload = _inputs()[0]
    read = hook_input_or_reason(CRUSH, json.dumps(payload).encode())
    assert not isinstance(read, str)
    session = payload["session_id"]
    assert read.hook_event == "PreToolUse"
    assert read.cwd == "/tmp/project"
    assert read.action == AgentEvent(session, ToolCallFinished(session, "bash", LS))


def test_the_event_name_is_read_from_event_and_claude_codes_name_is_not() -> None:
    payload = {**_inputs()[0]}
    payload["hook_event_name"] = payload.pop("event")
    assert hook_input_or_reason(CRUSH, json.dumps(payload).encode()) == (
        "event is missing or not a string"
    )
    other = {**_inputs()[0], "event": "PostToolUse"}
    read = hook_input_or_reason(CRUSH, json.dumps(other).encode())
    assert not isinstance(read, str)
    assert read.action == Unused()


def test_the_loop_gets_the_reminders_as_context_without_a_decision(tmp_path: Path) -> None:
    said = _answers(tmp_path)
    # No "decision": "allow" would skip Crush's permission prompt. The context is appended to
    # the call's result as it is, so it carries the core's envelope (the reminder's full text).
    assert said == [
        None,
        None,
        {"context": _reminder(3).text},
        None,
        {"context": _reminder(5).text},
        None,
    ]
    assert _reminder(3).text.startswith("<system-reminder>")


def test_a_refusal_is_a_deny_with_the_reminder_in_its_reason(tmp_path: Path) -> None:
    said = _answers(tmp_path, "denyAt = 4\n")
    deny = said[3]
    assert isinstance(deny, dict)
    assert deny["decision"] == "deny"
    assert set(deny) == {"decision", "reason"}  # a refused call's context is dropped
    denied = said[4]
    assert isinstance(denied, dict)
    assert denied["reason"].endswith(f"\n\n{_reminder(5).text}")


def test_context_answer() -> None:
    assert context_answer("PreToolUse", "r", None) == {"context": "r"}
    assert context_answer("PreToolUse", None, "no") == {"decision": "deny", "reason": "no"}
    assert context_answer("PreToolUse", "r", "no") == {"decision": "deny", "reason": "no\n\nr"}


def test_a_bad_configuration_is_a_non_blocking_error(tmp_path: Path) -> None:
    # Crush: exit 2 blocks, 49 halts the turn, any other status is logged and the call runs.
    (tmp_path / "guard.toml").write_text("thresholds = 3\n")
    options = HookOptions(CRUSH, str(tmp_path / "state.sqlite3"), str(tmp_path / "guard.toml"))
    outcome = run_hook(options, json.dumps(_inputs()[0]).encode(), 0.0)
    assert outcome.status == CRUSH.error_status == 1
    assert outcome.stdout == b""


def test_settings_paths() -> None:
    home, cwd = "/home/u", "/w"
    assert settings_path(CRUSH, "project", cwd, {}, home) == "/w/crush.json"
    assert settings_path(CRUSH, "user", cwd, {}, home) == "/home/u/.config/crush/crush.json"
    env = {"CRUSH_GLOBAL_CONFIG": "/etc/c"}
    assert settings_path(CRUSH, "user", cwd, env, home) == "/etc/c/crush.json"


def test_install_writes_one_flat_entry_beside_the_users(tmp_path: Path) -> None:
    path = tmp_path / "crush.json"
    original = (FIXTURES / "crush.json").read_text()
    path.write_text(original)
    install(str(path), CRUSH, COMMAND)
    written = json.loads(path.read_text())
    users = json.loads(original)["hooks"]["PreToolUse"]
    assert written["hooks"] == {
        "PreToolUse": [*users, {"command": COMMAND, "timeout": 10}],
    }
    assert written["$schema"] == "https://charm.land/crush.json"
    assert not install(str(path), CRUSH, COMMAND).changed  # idempotent
    uninstall(str(path), CRUSH)
    assert path.read_text() == original


def test_a_moved_executable_replaces_our_flat_entry(tmp_path: Path) -> None:
    path = tmp_path / "crush.json"
    install(str(path), CRUSH, COMMAND)
    moved = hook_command(["/new/bin/repeat-guard"], CRUSH)
    install(str(path), CRUSH, moved)
    assert json.loads(path.read_text())["hooks"]["PreToolUse"] == [
        {"command": moved, "timeout": 10}
    ]
    uninstall(str(path), CRUSH)
    assert json.loads(path.read_text()) == {}


@pytest.mark.parametrize(
    "entry",
    [
        {"command": hook_command(["/x/repeat-guard"], CLAUDE_CODE)},  # another host's
        {"command": "repeat-guard hook crush 'unclosed"},  # not a command line
        {"command": 7},
        "a string",
    ],
)
def test_uninstall_leaves_flat_entries_not_ours(tmp_path: Path, entry: object) -> None:
    path = tmp_path / "crush.json"
    settings = {"hooks": {"PreToolUse": [entry, {"command": COMMAND}]}}
    path.write_text(json.dumps(settings))
    uninstall(str(path), CRUSH)
    assert json.loads(path.read_text()) == {"hooks": {"PreToolUse": [entry]}}
