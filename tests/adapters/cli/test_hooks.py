"""``repeat-guard hook``, ``install`` and ``uninstall`` through ``main``, in process."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repeat_guard_cli import main
from repeat_guard_hookcall import INPUT_LIMIT

PRE = {
    "session_id": "s",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "ls"},
}


class _Stdin:
    def __init__(self, data: bytes | None) -> None:
        self.data = data

    @property
    def buffer(self) -> io.BytesIO:
        if self.data is None:
            raise OSError("stdin is closed")
        return io.BytesIO(self.data)


def _hook(
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    argv: list[str],
    data: bytes | None,
) -> tuple[int, bytes, bytes]:
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    status = main(argv)
    captured = capsysbinary.readouterr()
    return status, captured.out, captured.err


def test_hook_answers_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setenv("REPEAT_GUARD_STATE", str(tmp_path / "env.db"))
    argv = ["hook", "claude-code", "--state", str(tmp_path / "st.db"), "--expire-days", "1"]
    data = json.dumps(PRE).encode()
    outs = [_hook(monkeypatch, capsysbinary, argv, data) for _ in range(3)]
    assert [status for status, _, _ in outs] == [0, 0, 0]
    assert [out for _, out, _ in outs][:2] == [b"", b""]
    answer = json.loads(outs[2][1])
    assert answer["hookSpecificOutput"]["additionalContext"].startswith("You are repeating")
    assert (tmp_path / "st.db").exists()
    assert not (tmp_path / "env.db").exists()


def test_hook_state_from_the_environment_and_a_closed_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setenv("REPEAT_GUARD_STATE", str(tmp_path / "env.db"))
    assert _hook(monkeypatch, capsysbinary, ["hook", "codex"], None) == (0, b"", b"")
    assert "cannot read stdin: OSError" in (tmp_path / "env.db.log").read_text()


def test_hook_bad_config_exits_1_with_the_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    config = tmp_path / "guard.toml"
    config.write_text('exclude = "Bash"\n')
    argv = ["hook", "claude-code", "--state", str(tmp_path / "st.db"), "--config", str(config)]
    status, out, err = _hook(monkeypatch, capsysbinary, argv, json.dumps(PRE).encode())
    assert (status, out) == (1, b"")
    assert err.decode().startswith(
        f"repeat-guard: invalid configuration in {config}: key 'exclude'"
    )


def test_install_and_uninstall_claude_code_in_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".claude" / "settings.json"
    assert main(["install", "claude-code", "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith(f"--- /dev/null\n+++ {settings}\n")
    assert not settings.exists()
    assert main(["install", "claude-code"]) == 0
    assert capsys.readouterr().out == f"repeat-guard claude-code hooks added to {settings}\n"
    command = json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command.endswith("repeat-guard hook claude-code")
    assert command.startswith("/")
    assert main(["install", "claude-code"]) == 0
    assert capsys.readouterr().out == f"{settings}: already as wanted; nothing changed\n"
    assert main(["uninstall", "claude-code"]) == 0
    assert capsys.readouterr().out == f"repeat-guard claude-code hooks removed from {settings}\n"
    assert settings.read_text() == "{}\n"  # the file stays: it may have been the user's


def test_install_codex_explains_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert main(["install", "codex", "--scope", "user"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"repeat-guard codex hooks added to {tmp_path}/codex/hooks.json\n"
    assert "open /hooks" in captured.err
    assert "--dangerously-bypass-hook-trust" in captured.err
    assert main(["uninstall", "codex"]) == 0
    assert "/hooks" not in capsys.readouterr().err


def test_install_notes_when_results_and_the_configuration_disagree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    project = tmp_path / "sub"
    project.mkdir()
    monkeypatch.chdir(project)
    config = tmp_path / ".repeat-guard.toml"  # found upwards, up to the repository's root
    config.write_text('preset = "seed"\n')
    assert main(["install", "claude-code", "--results"]) == 0
    assert 'no configuration a hook run here would read sets progress = "result"' in (
        capsys.readouterr().err
    )
    config.write_text("retryWindow = 12\n")
    assert main(["install", "claude-code"]) == 0
    assert capsys.readouterr().err == (
        f"note: {config} sets retryWindow, but the hooks see a call's failure only when "
        "installed with --results\n"
    )
    assert main(["install", "claude-code", "--results"]) == 0
    assert capsys.readouterr().err == ""
    config.write_text('progress = "result"\n')
    assert main(["install", "claude-code"]) == 0
    assert capsys.readouterr().err == (
        f'note: {config} sets progress = "result", but the hooks see each call\'s result only '
        "when installed with --results\n"
    )
    for argv in (["install", "claude-code", "--results"], ["uninstall", "claude-code"]):
        assert main(argv) == 0
        assert capsys.readouterr().err == ""
    config.write_text("thresholds = [3]\n")
    assert main(["install", "claude-code"]) == 0  # the preset's polls' results are sent
    assert capsys.readouterr().err == ""
    config.write_text('preset = "codex"\n')
    assert main(["install", "claude-code"]) == 0
    assert capsys.readouterr().err == (
        f'note: {config} sets preset = "codex", but the hooks see the results of its polls '
        "(write_stdin, exec_command, Bash) only when installed with --preset codex or --results\n"
    )
    for argv in (["--preset", "codex"], ["--results"]):
        assert main(["install", "claude-code", *argv]) == 0
        assert capsys.readouterr().err == ""
    config.write_text("thresholds = [3]\n")
    assert main(["install", "cline", "--preset", "gemini"]) == 0
    assert capsys.readouterr().err == (
        "note: the gemini preset counts a poll (read_background_output, run_shell_command) whose "
        "output changed as progress, but cline's hooks hear no call's result: it changes "
        "nothing\n"
    )
    # Gemini CLI's AfterTool and Qwen Code's PostToolUse (and PostToolUseFailure), installed for
    # every call, carry its result: nothing to say, whatever reads results.
    for text in ("thresholds = [3]\n", 'progress = "result"\n', "retryWindow = 8\n"):
        config.write_text(text)
        for host in ("gemini", "qwen-code"):
            for argv in ([], ["--preset", "seed"], ["--results"]):
                assert main(["install", host, *argv]) == 0
                assert capsys.readouterr().err == ""
    config.write_text("thresholds = [3]\n")
    assert main(["install", "claude-code", "--results"]) == 0
    assert capsys.readouterr().err == ""
    for broken in ('progress = "sometimes"\n', "= ["):
        config.write_text(broken)  # check-config and the hook's log name what is wrong
        assert main(["install", "claude-code", "--results"]) == 0
        assert capsys.readouterr().err == ""
    config.unlink()
    config.mkdir()  # a folder by that name is no configuration: the defaults, and the preset
    assert main(["install", "claude-code", "--results"]) == 0
    assert capsys.readouterr().err == ""  # the preset's polling tools read the results


def test_a_host_whose_entries_take_no_matcher_needs_results_for_its_preset(
    tmp_path: Path,
) -> None:
    from repeat_guard_cli._hooks import _results_note
    from repeat_guard_hooks import CLAUDE_CODE

    unmatched = CLAUDE_CODE._replace(tool_matcher=None)
    assert _results_note(str(tmp_path), False, unmatched, None) == (
        "note: the claude-code preset counts a poll (BashOutput, TaskOutput, BashOutputTool, "
        "AgentOutputTool, AgentOutput, Bash, Read) whose output changed as progress only when the "
        "hooks see "
        "each call's result, and claude-code's hook entries take no tool matcher: install with "
        "--results for it, or --preset seed to turn it off"
    )
    assert _results_note(str(tmp_path), False, unmatched, "seed") is None


def test_install_writes_the_preset_and_its_polls_result_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".claude" / "settings.json"
    assert main(["install", "claude-code"]) == 0
    hooks = json.loads(settings.read_text())["hooks"]
    command = hooks["PreToolUse"][0]["hooks"][0]["command"]
    assert command.endswith(" hook claude-code")
    polls = "BashOutput|TaskOutput|BashOutputTool|AgentOutputTool|AgentOutput|Bash|Read"
    assert hooks["PostToolUse"][0]["matcher"] == polls
    assert hooks["PostToolUseFailure"][0]["matcher"] == polls
    assert main(["install", "claude-code", "--preset", "seed"]) == 0
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == f"{command} --preset seed"
    assert "PostToolUse" not in hooks
    assert main(["install", "claude-code", "--preset", "codex"]) == 0
    codex_polls = json.loads(settings.read_text())["hooks"]["PostToolUse"][0]["matcher"]
    assert codex_polls == "write_stdin|exec_command|Bash"
    assert main(["uninstall", "claude-code"]) == 0
    assert settings.read_text() == "{}\n"
    capsys.readouterr()
    assert main(["install", "claude-code", "--preset", "nope"]) == 2
    assert "argument --preset: invalid choice: 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize(("host", "status"), [("claude-code", 1), ("copilot", 0)])
def test_a_hook_given_a_preset_the_core_does_not_know_says_so_without_blocking(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    host: str,
    status: int,
) -> None:
    monkeypatch.setenv("REPEAT_GUARD_DAEMON", "off")
    argv = ["hook", host, "--state", str(tmp_path / "st.db"), "--preset", "nope"]
    result, out, err = _hook(monkeypatch, capsysbinary, argv, json.dumps(PRE).encode())
    assert (result, out) == (status, b"")
    assert b"argument --preset: invalid choice: 'nope'" in err
    assert not (tmp_path / "st.db").exists()


def test_a_hook_runs_under_the_preset_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setenv("REPEAT_GUARD_DAEMON", "off")
    poll = {**PRE, "tool_name": "write_stdin", "tool_input": {"session_id": 7}}
    for preset, expected in (("codex", [False] * 4), ("seed", [False, False, True, False])):
        # Through argparse (an abbreviated option) and the short way alike.
        for option in ("--pre", "--preset"):
            state = tmp_path / f"{preset}{option}.db"
            argv = ["hook", "codex", "--state", str(state), option, preset]
            reminded = []
            for output in "1234":
                _, pre, _ = _hook(monkeypatch, capsysbinary, argv, json.dumps(poll).encode())
                result = {**poll, "hook_event_name": "PostToolUse", "tool_response": output}
                _, post, _ = _hook(monkeypatch, capsysbinary, argv, json.dumps(result).encode())
                reminded.append(b"repeating" in pre + post)
            assert reminded == expected


def test_the_help_explains_the_preset(capsys: pytest.CaptureFixture[str]) -> None:
    texts = {}
    for command in ("hook", "install"):
        assert main([command, "--help"]) == 0
        texts[command] = " ".join(capsys.readouterr().out.split())
        assert "--preset NAME" in texts[command]
        assert "seed, claude-code, codex" in texts[command]
    assert "the file's own preset key when it has one, else --preset NAME" in texts["hook"]
    assert "the results of its polling tools alone" in texts["install"]


def test_install_refusals_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["install", "codex", "--scope", "local"]) == 2
    assert capsys.readouterr().err == (
        "repeat-guard: error: codex has no local scope (known: user, project)\n"
    )
    (tmp_path / ".claude").write_text("")  # a file where the directory should be
    assert main(["install", "claude-code"]) == 2
    assert capsys.readouterr().err.startswith("repeat-guard: error: cannot write ")


def test_hook_help_documents_the_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hook", "--help"]) == 0
    out = capsys.readouterr().out
    assert "PreToolUse" in out
    assert "exit status: 0" in out
    assert "REPEAT_GUARD_STATE" in out


def test_the_hook_path_imports_only_what_it_uses(tmp_path: Path) -> None:
    # A hook is a new process per tool call: it must not pay for the ACP SDK, pydantic or the
    # audit's tallies.
    probe = (
        "import sys\n"
        "from repeat_guard_entry import main\n"
        "status = main(['hook', 'claude-code', '--state', sys.argv[1]])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'pydantic', 'acp', "
        "'repeat_guard_acp', 'repeat_guard_transcripts', 'repeat_guard_agentloop', 'traceback'} "
        "or m == 'repeat_guard.tally')\n"
        "print(status, heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "st.db")],
        input=json.dumps(PRE).encode(),
        capture_output=True,
        check=True,
    )
    assert done.stderr.decode().strip() == "0 []"


@pytest.mark.parametrize(("columns", "widest"), [("abc", 78), ("60", 58), ("", 78)])
def test_hook_help_width_follows_columns(
    columns: str, widest: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["hook", "--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    usage = [line for line in lines if not line.startswith(" ") or "--" in line][:3]
    assert max(len(line) for line in usage) <= widest


@pytest.mark.parametrize(
    "argv",
    [
        ["hook", "claude-code", "extra"],
        ["hook", "claude-code", "--state"],
        ["hook", "foo"],
        ["hook"],
        ["hook", "codex", "--expire-days", "seven"],
    ],
)
def test_a_bad_hook_command_line_never_exits_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Claude Code takes 2 from a PreToolUse hook for "block the call".
    assert main(argv) == 1
    assert "error: " in capsys.readouterr().err
    assert main(["install", "foo"]) == 2  # the other commands keep argparse's status


@pytest.mark.parametrize(
    "argv", [["install", "--dry-run"], ["install"], ["uninstall", "--dry-run"]]
)
def test_install_output_that_cannot_be_written_exits_2_with_a_message(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    if argv[0] == "uninstall":
        assert main(["install", "claude-code"]) == 0
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with io.TextIOWrapper(io.FileIO("/dev/full", "w"), write_through=True) as full:
        monkeypatch.setattr(sys, "stdout", full)
        assert main([*argv, "claude-code"]) == 2
    assert (
        err.getvalue() == "repeat-guard: error: cannot write the output: No space left on device\n"
    )
    monkeypatch.setattr(sys, "stdout", None)
    err.truncate(0)
    err.seek(0)
    assert main([*argv, "claude-code"]) == 2  # refused before anything is changed
    assert err.getvalue() == "repeat-guard: error: cannot write the output: stdout is closed\n"


class _Reads(io.BytesIO):
    """Stdin that remembers the most it handed out in one read."""

    largest = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.largest = max(self.largest, len(data))
        return data


def test_an_event_over_the_input_limit_is_read_through_not_kept_and_stood_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    # A runaway tool input: never held whole, never parsed, the store never opened, and the
    # host's pipe read to its end; one log line says why.
    payload = {**PRE, "tool_input": {"content": "x" * (INPUT_LIMIT + (3 << 20))}}
    stdin = _Reads(json.dumps(payload).encode())
    monkeypatch.setattr(sys, "stdin", type("Stdin", (), {"buffer": stdin})())
    state = tmp_path / "st.db"
    assert main(["hook", "claude-code", "--state", str(state)]) == 0
    assert capsysbinary.readouterr() == (b"", b"")
    assert stdin.tell() == len(stdin.getvalue())
    assert stdin.largest == INPUT_LIMIT + 1
    assert not state.exists()
    (line,) = (tmp_path / "st.db.log").read_text().splitlines()
    assert line.endswith(
        f" claude-code ?: stdin holds more than {INPUT_LIMIT} bytes (INPUT_LIMIT); stood aside"
    )


def test_install_http_writes_the_listener_the_hooks_and_the_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    state = tmp_path / "state" / "state.sqlite3"
    monkeypatch.setenv("REPEAT_GUARD_STATE", str(state))
    listener = Path(f"{state}.http")
    project = tmp_path / ".claude" / "settings.json"
    local = tmp_path / ".claude" / "settings.local.json"
    assert main(["install", "claude-code", "--http", "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert f"+++ {project}\n" in shown
    assert f"+++ {local}\n" in shown
    assert not listener.exists()  # a dry run makes nothing
    assert not project.exists()
    assert main(["install", "claude-code", "--http"]) == 0
    assert capsys.readouterr().out == (
        f"repeat-guard claude-code hooks added to {project}\n"
        f"repeat-guard claude-code http secret added to {local}\n"
    )
    settings = json.loads(listener.read_text())
    assert oct(listener.stat().st_mode & 0o777) == "0o600"
    hooks = json.loads(project.read_text())["hooks"]
    url = f"http://127.0.0.1:{settings['port']}/hook/claude-code"
    assert hooks["PreToolUse"][0]["hooks"][0]["url"] == url
    start = hooks["SessionStart"][0]["hooks"][0]["command"]
    assert start.startswith("/")
    assert start.endswith("repeat-guard daemon start")
    assert settings["secret"] not in project.read_text()
    assert json.loads(local.read_text()) == {
        "env": {"REPEAT_GUARD_HTTP_SECRET": settings["secret"]}
    }
    assert main(["install", "claude-code", "--http"]) == 0
    assert capsys.readouterr().out == (
        f"{project}: already as wanted; nothing changed\n"
        f"{local}: already as wanted; nothing changed\n"
    )
    assert main(["uninstall", "claude-code"]) == 0
    assert capsys.readouterr().out == (
        f"repeat-guard claude-code hooks removed from {project}\n"
        f"repeat-guard claude-code http secret removed from {local}\n"
    )
    assert project.read_text() == "{}\n"
    assert local.read_text() == "{}\n"
    assert json.loads(listener.read_text()) == settings  # kept for the next install


def test_install_http_refusals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    state = tmp_path / "state.sqlite3"
    monkeypatch.setenv("REPEAT_GUARD_STATE", str(state))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert main(["install", "codex", "--http"]) == 2
    assert capsys.readouterr().err == (
        "repeat-guard: error: codex takes no http hooks; install it without --http\n"
    )
    Path(f"{state}.http").write_text("{}")
    assert main(["install", "claude-code", "--http"]) == 2
    assert capsys.readouterr().err == (
        f"repeat-guard: error: {state}.http holds no port and secret; fix or remove it, and "
        "install again\n"
    )
    assert not (tmp_path / ".claude").exists()


def test_install_help_explains_http(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--http" in out
    assert "allowedEnvVars" in out
    assert "never in the committed .claude/settings.json" in out
    assert "repeat-guard daemon start" in out


def test_install_help_names_a_file_at_the_projects_top_by_its_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Crush's and opencode's project files sit at the top of the project: no folder, no slash.
    assert main(["install", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "crush scopes: project (crush.json; the default)" in out
    assert "opencode scopes: project (opencode.json; the default)" in out
    assert "(/" not in out
    assert "project (.qwen/settings.json; the default)" in out


def test_install_and_uninstall_cline_hook_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / ".clinerules" / "hooks"
    assert main(["install", "cline"]) == 0
    assert capsys.readouterr().out == f"repeat-guard cline hook files added to {folder}\n"
    script = (folder / "PreToolUse").read_text()
    assert script.startswith("#!/bin/sh\n# written by `repeat-guard install cline`")
    assert script.endswith("repeat-guard hook cline\n")
    assert main(["uninstall", "cline"]) == 0
    assert capsys.readouterr().out == f"repeat-guard cline hook files removed from {folder}\n"
    assert os.listdir(folder) == []


def test_install_cline_refuses_a_users_hook_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CLINE_DIR", str(tmp_path))
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "UserPromptSubmit").write_text("#!/bin/sh\necho mine\n")
    assert main(["install", "cline", "--scope", "user"]) == 2
    assert "UserPromptSubmit.sh" in capsys.readouterr().err
    assert os.listdir(tmp_path / "hooks") == ["UserPromptSubmit"]
