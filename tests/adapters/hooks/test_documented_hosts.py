"""Cursor, goose and Kiro CLI: hook inputs as guard events, the refusals they read, their
settings entries.

None of the three is run here (no package this machine can install): ``fixtures/<host>/`` holds
inputs in the shape each documents (its README names the source). None of them has a channel
that carries text to the model on an allowed call, so the guard answers only a refusal
(``denyAt``), with the reminders due at it.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard_cli import main
from repeat_guard_hooks import (
    CURSOR,
    DIALECTS,
    GOOSE,
    KIRO,
    AgentEvent,
    Dialect,
    HookOptions,
    HookOutcome,
    SessionEnded,
    Unused,
    block_answer,
    hook_input_or_reason,
    permission_answer,
    run_hook,
)
from repeat_guard_hooks.installer import (
    InstallError,
    hook_command,
    install,
    installed_events,
    settings_path,
    uninstall,
)

from .agents import Repeated

FIXTURES = Path(__file__).parent / "fixtures"
HOME, CWD = "/home/u", "/w"


def _inputs(host: str, name: str = "loop") -> list[dict[str, Any]]:
    lines = (FIXTURES / host / f"{name}.hooks.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _run(
    dialect: Dialect, inputs: list[dict[str, Any]], tmp_path: Path, config: str = ""
) -> list[HookOutcome]:
    # Each run its own state and configuration.
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    (folder / "guard.toml").write_text(config)
    options = HookOptions(dialect, str(folder / "state.sqlite3"), str(folder / "guard.toml"))
    return [
        run_hook(options, json.dumps(payload).encode(), float(now))
        for now, payload in enumerate(inputs)
    ]


def _read(dialect: Dialect, payload: dict[str, Any]) -> object:
    read = hook_input_or_reason(dialect, json.dumps(payload).encode())
    assert not isinstance(read, str), read
    return read.action


def test_the_three_are_hosts_hook_takes() -> None:
    assert [DIALECTS[name] for name in ("cursor", "goose", "kiro")] == [CURSOR, GOOSE, KIRO]


# Cursor.

SHELL = Repeated("Shell", "ls")


def test_cursors_events_that_name_no_tool_are_the_rows_tool() -> None:
    prompt, shell, *_ = _inputs("cursor")
    mcp, read, edit = _inputs("cursor", "other")
    conversation = shell["conversation_id"]
    assert _read(CURSOR, prompt) == AgentEvent(conversation, PromptSubmitted(conversation))
    assert _read(CURSOR, shell) == AgentEvent(
        conversation, ToolCallFinished(conversation, "Shell", "ls")
    )
    assert _read(CURSOR, mcp) == AgentEvent(
        conversation, ToolCallFinished(conversation, "search_docs", {"query": "hooks"})
    )
    assert _read(CURSOR, read) == AgentEvent(
        conversation, ToolCallFinished(conversation, "Read", "/tmp/project/README.md")
    )
    assert _read(CURSOR, edit) == Unused()
    # An MCP call without its tool's name cannot be counted: it fails open.
    nameless = {key: value for key, value in mcp.items() if key != "tool_name"}
    assert hook_input_or_reason(CURSOR, json.dumps(nameless).encode()) == (
        "beforeMCPExecution: tool_name is missing or not a string"
    )


def test_cursor_says_nothing_to_an_allowed_call(tmp_path: Path) -> None:
    # No documented field of an allowed call's answer reaches the model; "allow" would skip
    # Cursor's own approval. The loop is counted all the same.
    outcomes = _run(CURSOR, _inputs("cursor"), tmp_path)
    assert outcomes == [HookOutcome(0)] * 7


def test_cursor_refuses_at_deny_at_and_the_agent_reads_the_reminders(tmp_path: Path) -> None:
    outcomes = _run(CURSOR, _inputs("cursor"), tmp_path, "denyAt = 4\n")
    assert [o.stdout for o in outcomes[:4]] == [b""] * 4
    fourth, fifth = (json.loads(o.stdout) for o in outcomes[4:6])
    reason = SHELL.refusal(4)
    assert fourth == {
        "permission": "deny",
        "agent_message": reason,
        "agentMessage": reason,
        "user_message": reason,
        "userMessage": reason,
    }
    # The refused fourth counted: the fifth's refusal carries the detailed reminder (its whole
    # text: Cursor adds no envelope of its own).
    assert fifth["agent_message"].endswith(f"\n\n{SHELL.reminder(5).text}")
    assert fifth["user_message"] == SHELL.refusal(5, 4)


def test_a_new_prompt_starts_cursors_chain_over(tmp_path: Path) -> None:
    prompt, shell, *_ = _inputs("cursor")
    inputs = [prompt, shell, shell, shell, prompt, shell, shell, shell]
    outcomes = _run(CURSOR, inputs, tmp_path, "denyAt = 4\n")
    assert all(outcome == HookOutcome(0) for outcome in outcomes)


def test_permission_answer() -> None:
    assert permission_answer("beforeShellExecution", "r", None) is None
    answer = permission_answer("beforeShellExecution", "r", "no")
    assert isinstance(answer, dict)
    assert (answer["agent_message"], answer["user_message"]) == ("no\n\nr", "no")


def test_install_cursor_keeps_the_users_hooks_and_version(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    original = (FIXTURES / "cursor" / "hooks.json").read_text()
    path.write_text(original)
    command = hook_command(["/opt/rg/bin/repeat-guard"], CURSOR)
    install(str(path), CURSOR, command)
    written = json.loads(path.read_text())
    ours = {"command": command, "timeout": 10}
    users = json.loads(original)["hooks"]
    assert written == {
        "version": 1,
        "hooks": {
            "afterFileEdit": users["afterFileEdit"],
            "beforeShellExecution": [*users["beforeShellExecution"], ours],
            "beforeMCPExecution": [ours],
            "beforeReadFile": [ours],
            "beforeSubmitPrompt": [ours],
        },
    }
    assert not install(str(path), CURSOR, command).changed
    uninstall(str(path), CURSOR)
    assert path.read_text() == original


def test_install_cursor_into_a_new_file_says_its_version(tmp_path: Path) -> None:
    path = tmp_path / ".cursor" / "hooks.json"
    command = hook_command(["/opt/rg/bin/repeat-guard"], CURSOR)
    install(str(path), CURSOR, command)
    written = json.loads(path.read_text())
    assert list(written) == ["version", "hooks"]
    assert written["version"] == 1
    uninstall(str(path), CURSOR)
    assert json.loads(path.read_text()) == {"version": 1}


# goose.

GOOSE_LS = Repeated("developer__shell", {"command": "ls"})


def test_gooses_inputs_are_guard_events() -> None:
    prompt, call, *_, end = _inputs("goose")
    session = call["session_id"]
    assert _read(GOOSE, prompt) == AgentEvent(session, PromptSubmitted(session))
    assert _read(GOOSE, call) == AgentEvent(
        session, ToolCallFinished(session, "developer__shell", {"command": "ls"})
    )
    assert _read(GOOSE, end) == SessionEnded(session)
    read = hook_input_or_reason(GOOSE, json.dumps(call).encode())
    assert not isinstance(read, str)
    assert read.cwd == "/tmp/project"


def test_goose_blocks_at_deny_at_and_says_nothing_otherwise(tmp_path: Path) -> None:
    assert _run(GOOSE, _inputs("goose"), tmp_path) == [HookOutcome(0)] * 8
    denied = _run(GOOSE, _inputs("goose"), tmp_path, "denyAt = 4\n")
    assert [o.stdout for o in denied[:4]] == [b""] * 4
    fourth, fifth = (json.loads(o.stdout) for o in denied[4:6])
    assert fourth == {"decision": "block", "reason": GOOSE_LS.refusal(4)}
    assert fifth["reason"].endswith(f"\n\n{GOOSE_LS.reminder(5).text}")


def test_block_answer() -> None:
    assert block_answer("PreToolUse", "r", None) is None
    assert block_answer("PreToolUse", "r", "no") == {"decision": "block", "reason": "no\n\nr"}


def test_install_goose_writes_its_own_plugins_hooks_without_a_matcher(tmp_path: Path) -> None:
    path = settings_path(GOOSE, "project", str(tmp_path), {}, HOME)
    assert path == f"{tmp_path}/.agents/plugins/repeat-guard/hooks/hooks.json"
    command = hook_command(["/opt/rg/bin/repeat-guard"], GOOSE)
    install(path, GOOSE, command)
    ours = [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}]
    assert json.loads(Path(path).read_text()) == {
        "hooks": {"PreToolUse": ours, "UserPromptSubmit": ours, "SessionEnd": ours}
    }
    uninstall(path, GOOSE)
    assert json.loads(Path(path).read_text()) == {}
    user = settings_path(GOOSE, "user", CWD, {}, HOME)
    assert user == "/home/u/.agents/plugins/repeat-guard/hooks/hooks.json"


# Kiro CLI.

KIRO_LS = Repeated("execute_bash", {"command": "ls"})


def test_kiros_folder_stands_for_its_session() -> None:
    prompt, call, *_ = _inputs("kiro")
    assert _read(KIRO, prompt) == AgentEvent("/tmp/project", PromptSubmitted("/tmp/project"))
    assert _read(KIRO, call) == AgentEvent(
        "/tmp/project", ToolCallFinished("/tmp/project", "execute_bash", {"command": "ls"})
    )
    # A session id, where Kiro sends one, is the session.
    assert _read(KIRO, {**call, "session_id": "s1"}) == AgentEvent(
        "s1", ToolCallFinished("s1", "execute_bash", {"command": "ls"})
    )


def test_kiro_refuses_by_exit_status_with_the_reason_on_stderr(tmp_path: Path) -> None:
    assert _run(KIRO, _inputs("kiro"), tmp_path) == [HookOutcome(0)] * 7
    outcomes = _run(KIRO, _inputs("kiro"), tmp_path, "denyAt = 4\n")
    assert outcomes[:4] == [HookOutcome(0)] * 4
    # Exit 2: Kiro refuses the call and hands stderr to the model.
    assert outcomes[4] == HookOutcome(2, b"", f"{KIRO_LS.refusal(4)}\n")
    fifth = outcomes[5]
    assert (fifth.status, fifth.stdout) == (2, b"")
    assert fifth.stderr.endswith(f"\n\n{KIRO_LS.reminder(5).text}\n")


def test_kiro_cli_3s_capitalised_events_are_read_alike(tmp_path: Path) -> None:
    prompt, call, *_ = _inputs("kiro")
    calls = [{**call, "hook_event_name": "PreToolUse"}] * 4
    again = {**prompt, "hook_event_name": "UserPromptSubmit"}
    outcomes = _run(KIRO, [*calls, again, calls[0]], tmp_path, "denyAt = 4\n")
    assert [o.status for o in outcomes] == [0, 0, 0, 2, 0, 0]


def test_kiro_sessions_in_two_folders_keep_two_chains(tmp_path: Path) -> None:
    _, call, *_ = _inputs("kiro")
    other = {**call, "cwd": "/tmp/other"}
    outcomes = _run(KIRO, [call, call, call, other, other, other, call], tmp_path, "denyAt = 4\n")
    assert [o.status for o in outcomes] == [0, 0, 0, 0, 0, 0, 2]


def _kiro_hooks(command: str) -> list[dict[str, object]]:
    return [
        {
            "name": "repeat-guard-PreToolUse",
            "trigger": "PreToolUse",
            "matcher": ".*",
            "action": {"type": "command", "command": command},
            "timeout": 10,
        },
        {
            "name": "repeat-guard-UserPromptSubmit",
            "trigger": "UserPromptSubmit",
            "action": {"type": "command", "command": command},
            "timeout": 10,
        },
    ]


def test_install_kiro_writes_its_own_hooks_file_in_kiro_cli_3s_shape(tmp_path: Path) -> None:
    path = settings_path(KIRO, "project", str(tmp_path), {}, HOME)
    assert path == f"{tmp_path}/.kiro/hooks/repeat-guard.json"
    assert settings_path(KIRO, "user", CWD, {}, HOME) == "/home/u/.kiro/hooks/repeat-guard.json"
    # Kiro CLI 2's names are read, never written: Kiro CLI 3 fires the capitalised ones.
    assert installed_events(KIRO) == installed_events(KIRO, results=True)
    assert installed_events(KIRO) == ("PreToolUse", "UserPromptSubmit")
    command = hook_command(["/opt/rg/bin/repeat-guard"], KIRO)
    install(path, KIRO, command)
    written = json.loads(Path(path).read_text())
    assert list(written) == ["version", "hooks"]
    assert written == {"version": "v1", "hooks": _kiro_hooks(command)}
    assert not install(path, KIRO, command).changed
    uninstall(path, KIRO)
    assert json.loads(Path(path).read_text()) == {"version": "v1"}
    assert not uninstall(path, KIRO).changed


def test_install_kiro_keeps_the_users_hooks_and_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "repeat-guard.json"
    original = (FIXTURES / "kiro" / "hooks.json").read_text()
    path.write_text(original)
    users = json.loads(original)["hooks"]
    command = hook_command(["/opt/rg/bin/repeat-guard"], KIRO)
    install(str(path), KIRO, command)
    # The entry an older install wrote goes; ours come last, every other hook where it was.
    written = json.loads(path.read_text())
    assert written == {"version": "v1", "hooks": [users[0], users[2], *_kiro_hooks(command)]}
    assert not install(str(path), KIRO, command).changed
    uninstall(str(path), KIRO)
    theirs = path.read_text()
    assert json.loads(theirs) == {"version": "v1", "hooks": [users[0], users[2]]}
    # The user's file alone: install, then uninstall, gives back every byte.
    install(str(path), KIRO, command)
    uninstall(str(path), KIRO)
    assert path.read_text() == theirs


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"hooks": {"PreToolUse": []}}', "key 'hooks' is not a list"),
        ('[{"trigger": "PreToolUse"}]', "does not hold a JSON object"),
    ],
)
def test_a_kiro_hooks_file_of_another_shape_is_refused_untouched(
    tmp_path: Path, text: str, why: str
) -> None:
    path = tmp_path / "repeat-guard.json"
    path.write_text(text)
    command = hook_command(["/opt/rg/bin/repeat-guard"], KIRO)
    with pytest.raises(InstallError, match=why):
        install(str(path), KIRO, command)
    with pytest.raises(InstallError, match=why):
        uninstall(str(path), KIRO)
    assert path.read_text() == text


def test_a_kiro_hooks_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "repeat-guard.json"
    os.mkfifo(path)
    command = hook_command(["/opt/rg/bin/repeat-guard"], KIRO)
    with pytest.raises(InstallError, match="not a regular file"):
        install(str(path), KIRO, command)
    assert stat.S_ISFIFO(path.lstat().st_mode)


def test_an_empty_list_of_hooks_stays_after_uninstall(tmp_path: Path) -> None:
    path = tmp_path / "repeat-guard.json"
    path.write_text('{"version": "v1", "hooks": []}')
    command = hook_command(["/opt/rg/bin/repeat-guard"], KIRO)
    install(str(path), KIRO, command)
    assert json.loads(path.read_text())["hooks"] == _kiro_hooks(command)
    uninstall(str(path), KIRO)
    # What install filled goes with our entries, as for the other hosts' event lists.
    assert path.read_text() == '{"version": "v1"}'
    path.write_text('{"version": "v1", "hooks": []}')
    assert not uninstall(str(path), KIRO).changed


def test_install_kiro_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["install", "--help"]) == 0
    out = capsys.readouterr().out
    assert "kiro" in out.split("positional arguments:")[0]
    assert "kiro scopes: project (.kiro/hooks/repeat-guard.json; the default)" in out
    assert main(["install", "kiro"]) == 0
    err = capsys.readouterr().err
    assert "Kiro CLI 3" in err
    written = json.loads((tmp_path / ".kiro" / "hooks" / "repeat-guard.json").read_text())
    assert [hook["trigger"] for hook in written["hooks"]] == ["PreToolUse", "UserPromptSubmit"]
    assert main(["uninstall", "kiro"]) == 0
    assert json.loads((tmp_path / ".kiro" / "hooks" / "repeat-guard.json").read_text()) == {
        "version": "v1"
    }
