"""``--preset NAME``: from the hook's command line (the short way in and argparse's), through the
resident guard's request and its http paths, to ``HookOptions`` and the configuration; and what
``install`` writes for it: the command carrying it, and result entries for its polling tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repeat_guard import HOST_PRESETS, NO_PRESET, PRESETS, GuardConfig
from repeat_guard_hookcall import HookArguments, encode_hook_request, hook_shape
from repeat_guard_hookcall import parse_hook_arguments as parse
from repeat_guard_hooks import (
    CLAUDE_CODE,
    CODEX,
    COPILOT,
    CRUSH,
    CURSOR,
    DIALECTS,
    GEMINI,
    Dialect,
    HookOptions,
    exact_matcher,
    full_matcher,
    hook_config,
    hook_path,
    run_hook,
)
from repeat_guard_hooks.installer import (
    HttpInstall,
    hook_command,
    hook_url,
    install,
    installed_events,
    plan_install,
    preset_polls,
    uninstall,
)


def test_the_short_way_in_reads_the_preset_and_leaves_a_bad_one_to_argparse() -> None:
    shape = hook_shape(["hook", "codex", "--preset", "seed", "--state", "s"])
    assert shape == HookArguments("codex", "s", None, None, "seed")
    assert shape != HookArguments("codex", "s")
    assert hash(shape) == hash(HookArguments("codex", "s", preset="seed"))
    assert parse(["hook", "codex", "--preset", "claude-code"]) == HookArguments(
        "codex", preset="claude-code"
    )
    assert parse(["hook", "codex"]) == HookArguments("codex")
    # A preset the core does not know, or none given, is argparse's to refuse.
    assert hook_shape(["hook", "codex", "--preset", "nope"]) is not None
    assert parse(["hook", "codex", "--preset", "nope"]) is None
    assert parse(["hook", "codex", "--preset"]) is None
    assert hook_shape(["hook", "codex", "--preset", ""]) is None
    assert parse(["hook", "codex", "--preset", "seed", "--preset", "seed"]) is None


def test_the_guards_request_carries_the_preset() -> None:
    assert encode_hook_request("codex", None, None, b"{}") == b"Hcodex\0\0\0\n{}"
    assert encode_hook_request("codex", "/c", 2.0, b"{}", "seed") == b"Hcodex\0/c\x002.0\0seed\n{}"


def _claude(cwd: Path, event: str, output: str | None = None) -> bytes:
    payload: dict[str, object] = {
        "session_id": "s",
        "cwd": str(cwd),
        "hook_event_name": event,
        "tool_name": "TaskOutput",
        "tool_input": {"task_id": "b1", "block": False},
    }
    if output is not None:
        payload["tool_response"] = {"output": output}
    return json.dumps(payload).encode()


def _reminded(options: HookOptions, cwd: Path) -> list[bool]:
    # A poll of a background task whose output grows: PreToolUse, then its PostToolUse.
    reminded = []
    for output in ["1 passed", "2 passed", "3 passed", "4 passed"]:
        pre = run_hook(options, _claude(cwd, "PreToolUse"), 100.0)
        post = run_hook(options, _claude(cwd, "PostToolUse", output), 100.0)
        reminded.append(b"repeating" in pre.stdout + post.stdout)
    return reminded


@pytest.mark.parametrize(
    ("preset", "file", "expected"),
    [
        (None, "", [False] * 4),  # the host's own preset: the poll made progress
        ("seed", "", [False, False, True, False]),  # none: the design note's rule
        ("codex", "", [False, False, True, False]),  # another host's polls, not TaskOutput
        ("seed", 'preset = "claude-code"\n', [False] * 4),  # the file has the last word
        (None, 'preset = "seed"\n', [False, False, True, False]),
    ],
)
def test_the_preset_stands_in_for_the_hosts_and_the_file_has_the_last_word(
    tmp_path: Path, preset: str | None, file: str, expected: list[bool]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".repeat-guard.toml").write_text(file)
    options = HookOptions(CLAUDE_CODE, str(tmp_path / "st.db"), preset=preset)
    assert _reminded(options, tmp_path) == expected


def test_hook_config_takes_the_preset_under_the_files_keys(tmp_path: Path) -> None:
    assert hook_config(None, str(tmp_path), "seed") == GuardConfig()
    assert hook_config(None, str(tmp_path), "gemini") == GuardConfig(preset="gemini")
    config = tmp_path / "c.toml"
    config.write_text('preset = "codex"\n')
    assert hook_config(str(config), None, "seed") == GuardConfig(preset="codex")


def test_the_listener_has_a_path_per_preset() -> None:
    assert hook_path("codex") == "/hook/codex"
    assert hook_path("codex", "seed") == "/hook/codex?preset=seed"
    assert hook_url(8, CODEX, "seed") == "http://127.0.0.1:8/hook/codex?preset=seed"
    assert hook_url(8, CODEX) == "http://127.0.0.1:8/hook/codex"


def test_the_preset_data_comes_from_the_core() -> None:
    assert preset_polls(CLAUDE_CODE) == HOST_PRESETS["claude-code"]
    assert preset_polls(CLAUDE_CODE, "codex") == HOST_PRESETS["codex"]
    assert preset_polls(CODEX, NO_PRESET) == ()
    assert preset_polls(CURSOR) == ()  # a host the core has no preset for
    assert all(
        preset_polls(dialect) == HOST_PRESETS.get(name, ()) for name, dialect in DIALECTS.items()
    )
    assert "seed" in PRESETS


def test_matchers_name_exactly_the_tools() -> None:
    assert exact_matcher(["BashOutput", "TaskOutput"]) == "BashOutput|TaskOutput"
    assert exact_matcher(["write_stdin"]) == "write_stdin"
    # A pattern of the core's (``*``: any run) or a name holding more than a plain name's
    # characters is a regular expression, anchored.
    assert exact_matcher(["mcp__x__*", "a.b"]) == r"^(?:mcp__x__.*|a\.b)$"
    assert full_matcher(["read_bash", "read_powershell"]) == "^(?:read_bash|read_powershell)$"
    assert full_matcher(["a(b)|c"]) == r"^(?:a\(b\)\|c)$"


COMMAND = hook_command(["/x/repeat-guard"], CLAUDE_CODE)


def test_the_command_carries_the_preset_and_is_still_ours(tmp_path: Path) -> None:
    seed = hook_command(["/x/repeat-guard"], CLAUDE_CODE, "seed")
    assert seed == "/x/repeat-guard hook claude-code --preset seed"
    path = tmp_path / "settings.json"
    install(str(path), CLAUDE_CODE, COMMAND)
    install(str(path), CLAUDE_CODE, seed)  # replaces ours, adds none beside it
    hooks = json.loads(path.read_text())["hooks"]
    assert [group["hooks"][0]["command"] for group in hooks["PreToolUse"]] == [seed]
    uninstall(str(path), CLAUDE_CODE)
    assert json.loads(path.read_text()) == {}


def _groups(path: Path) -> dict[str, list[dict[str, object]]]:
    hooks: dict[str, list[dict[str, object]]] = json.loads(path.read_text())["hooks"]
    return hooks


@pytest.mark.parametrize(
    ("dialect", "matcher"),
    [
        (CLAUDE_CODE, "BashOutput|TaskOutput|BashOutputTool|AgentOutputTool|AgentOutput|Bash|Read"),
        (CODEX, "write_stdin|exec_command|Bash"),
        (COPILOT, "^(?:read_bash|read_powershell|bash|Bash)$"),
    ],
)
def test_a_preset_adds_result_entries_for_its_polling_tools_alone(
    tmp_path: Path, dialect: Dialect, matcher: str
) -> None:
    path = tmp_path / "settings.json"
    command = hook_command(["/x/repeat-guard"], dialect)
    polls = preset_polls(dialect)
    assert matcher == dialect.tool_matcher(polls)  # type: ignore[misc]  # every row here has one
    install(str(path), dialect, command, polls=polls)
    groups = _groups(path)
    results = [e for e, role in dialect.events.items() if role in ("result", "failure")]
    assert installed_events(dialect, polls=polls) == installed_events(dialect, results=True)
    assert {event: groups[event][0]["matcher"] for event in results} == dict.fromkeys(
        results, matcher
    )
    assert groups["PreToolUse"][0]["matcher"] == "*"
    assert not install(str(path), dialect, command, polls=polls).changed
    # --results: every tool's result; none and no preset: no result entries.
    install(str(path), dialect, command, results=True, polls=polls)
    assert {event: _groups(path)[event][0]["matcher"] for event in results} == dict.fromkeys(
        results, "*"
    )
    install(str(path), dialect, command)
    assert not set(results) & set(_groups(path))


def test_a_host_whose_entries_take_no_matcher_gets_no_result_entries_for_a_preset(
    tmp_path: Path,
) -> None:
    unmatched = CLAUDE_CODE._replace(tool_matcher=None)
    polls = preset_polls(CLAUDE_CODE)
    assert installed_events(unmatched, polls=polls) == installed_events(unmatched)
    install(str(tmp_path / "s.json"), unmatched, COMMAND, polls=polls)
    assert "PostToolUse" not in _groups(tmp_path / "s.json")
    # Gemini CLI hears results only as its AfterTool, which the hook reads for no result.
    assert installed_events(GEMINI, polls=("read_background_output",)) == installed_events(GEMINI)
    assert installed_events(CRUSH, polls=("x",)) == ("PreToolUse",)


def test_http_hooks_name_the_preset_in_their_url(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    http = HttpInstall(8765, "s", "/x/repeat-guard daemon start", "seed")
    change = plan_install(str(path), CLAUDE_CODE, COMMAND, http=http, polls=())
    assert change.after is not None
    hooks = json.loads(change.after)["hooks"]
    url = "http://127.0.0.1:8765/hook/claude-code?preset=seed"
    assert hooks["PreToolUse"][0]["hooks"][0]["url"] == url
    assert "PostToolUse" not in hooks
    path.write_text(change.after)
    # An http hook of ours at any preset's path is ours: replaced, then removed.
    polls = preset_polls(CLAUDE_CODE)
    again = plan_install(
        str(path), CLAUDE_CODE, COMMAND, http=http._replace(preset=None), polls=polls
    )
    assert again.after is not None
    hooks = json.loads(again.after)["hooks"]
    assert [g["hooks"][0]["url"] for g in hooks["PreToolUse"]] == [
        "http://127.0.0.1:8765/hook/claude-code"
    ]
    assert hooks["PostToolUse"][0]["matcher"] == exact_matcher(polls)
    path.write_text(again.after)
    uninstall(str(path), CLAUDE_CODE)
    assert json.loads(path.read_text()) == {}
