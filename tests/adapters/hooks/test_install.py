"""Installing and uninstalling the hook entries in Claude Code's and Codex's settings files."""

from __future__ import annotations

import difflib
import json
import os
import stat
from pathlib import Path

import pytest

import repeat_guard_hooks
from repeat_guard_files import TargetError
from repeat_guard_hooks import CLAUDE_CODE, CODEX, Dialect
from repeat_guard_hooks.installer import (
    InstallError,
    apply_change,
    hook_command,
    install,
    installed_events,
    installed_executable,
    plan_install,
    settings_path,
    uninstall,
)

COMMAND = hook_command(["/opt/rg env/bin/repeat-guard"], CLAUDE_CODE)
USER_HOOK = {"type": "command", "command": "echo mine"}
EXISTING = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [USER_HOOK]}],
        "Stop": [{"hooks": [USER_HOOK]}],
    },
}


def _write(path: Path, settings: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=4) + "\n")


def test_settings_paths() -> None:
    env = {"CODEX_HOME": "/ch"}
    assert settings_path(CLAUDE_CODE, "project", "/p", env, "/h") == "/p/.claude/settings.json"
    local = "/p/.claude/settings.local.json"
    assert settings_path(CLAUDE_CODE, "local", "/p", env, "/h") == local
    assert settings_path(CLAUDE_CODE, "user", "/p", env, "/h") == "/h/.claude/settings.json"
    assert settings_path(CODEX, "user", "/p", env, "/h") == "/ch/hooks.json"
    assert settings_path(CODEX, "user", "/p", {}, "/h") == "/h/.codex/hooks.json"
    assert settings_path(CODEX, "project", "/p", env, "/h") == "/p/.codex/hooks.json"
    with pytest.raises(InstallError, match="codex has no local scope"):
        settings_path(CODEX, "local", "/p", env, "/h")


def test_the_command_quotes_the_absolute_path() -> None:
    assert COMMAND == "'/opt/rg env/bin/repeat-guard' hook claude-code"


def test_installed_executable(tmp_path: Path) -> None:
    assert installed_executable("bin/repeat-guard", "/py") == [os.path.abspath("bin/repeat-guard")]
    python = tmp_path / "bin" / "python"
    assert installed_executable("pytest", str(python)) == [str(python), "-m", "repeat_guard_entry"]
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "repeat-guard").write_text("")
    assert installed_executable("pytest", str(python)) == [str(tmp_path / "bin" / "repeat-guard")]


def test_install_into_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    change = install(str(path), CLAUDE_CODE, COMMAND)
    assert change.before is None
    assert change.changed
    settings = json.loads(path.read_text())
    assert list(settings["hooks"]) == list(installed_events(CLAUDE_CODE))
    assert settings["hooks"]["PreToolUse"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": COMMAND, "timeout": 10}]}
    ]
    assert settings["hooks"]["SessionEnd"] == [
        {"hooks": [{"type": "command", "command": COMMAND, "timeout": 3}]}
    ]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert "/dev/null" in change.diff()


def test_install_keeps_everything_else_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    _write(path, EXISTING)
    path.chmod(0o600)
    install(str(path), CLAUDE_CODE, COMMAND)
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus"
    assert settings["permissions"] == EXISTING["permissions"]
    assert settings["hooks"]["PreToolUse"][0] == {"matcher": "Bash", "hooks": [USER_HOOK]}
    assert settings["hooks"]["Stop"] == [{"hooks": [USER_HOOK]}]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    text = path.read_text()
    again = install(str(path), CLAUDE_CODE, COMMAND)
    assert not again.changed
    assert again.diff() == ""
    assert path.read_text() == text


def test_install_updates_a_moved_executable_in_place(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install(str(path), CLAUDE_CODE, COMMAND)
    moved = hook_command(["/new/repeat-guard"], CLAUDE_CODE)
    install(str(path), CLAUDE_CODE, moved)
    commands = [
        hook["command"]
        for groups in json.loads(path.read_text())["hooks"].values()
        for group in groups
        for hook in group["hooks"]
    ]
    assert commands == [moved] * len(installed_events(CLAUDE_CODE))


@pytest.mark.parametrize("dialect", [CLAUDE_CODE, CODEX])
def test_results_add_post_tool_use_and_an_install_without_them_takes_it_out(
    tmp_path: Path, dialect: Dialect
) -> None:
    path = tmp_path / "settings.json"
    mine = {"matcher": "Bash", "hooks": [USER_HOOK]}
    _write(path, {"hooks": {"PostToolUse": [mine]}})
    command = hook_command(["/x/repeat-guard"], dialect)
    ours = {"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 10}]}
    install(str(path), dialect, command, results=True)
    hooks = json.loads(path.read_text())["hooks"]
    added = ["PostToolUse", "PostToolUseFailure"] if dialect is CLAUDE_CODE else ["PostToolUse"]
    assert [
        e for e in installed_events(dialect, results=True) if e not in installed_events(dialect)
    ] == added
    assert hooks["PostToolUse"] == [mine, ours]
    assert sorted(hooks) == sorted([*added, *installed_events(dialect)])
    assert not install(str(path), dialect, command, results=True).changed
    install(str(path), dialect, command)
    assert json.loads(path.read_text())["hooks"]["PostToolUse"] == [mine]
    install(str(path), dialect, command, results=True)
    uninstall(str(path), dialect)
    assert json.loads(path.read_text()) == {"hooks": {"PostToolUse": [mine]}}
    # Alone in its event, our entry takes the event with it.
    path.unlink()
    install(str(path), dialect, command, results=True)
    install(str(path), dialect, command)
    assert sorted(json.loads(path.read_text())["hooks"]) == sorted(installed_events(dialect))


def test_uninstall_removes_exactly_what_install_added(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    _write(path, EXISTING)
    install(str(path), CLAUDE_CODE, COMMAND)
    change = uninstall(str(path), CLAUDE_CODE)
    assert change.changed
    assert json.loads(path.read_text()) == EXISTING
    assert not uninstall(str(path), CLAUDE_CODE).changed


def test_uninstall_leaves_other_agents_and_mixed_groups(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    codex = hook_command(["/x/repeat-guard"], CODEX)
    module = hook_command(["/py", "-m", "repeat_guard_entry"], CLAUDE_CODE)
    # The line older installs wrote is ours too.
    older = hook_command(["/py", "-m", "repeat_guard_cli"], CLAUDE_CODE)
    mixed = {
        "hooks": [
            USER_HOOK,
            {"type": "command", "command": module},
            {"type": "command", "command": older},
        ]
    }
    odd = [
        "not a group",
        {"hooks": "not a list"},
        {
            "hooks": [
                {"command": 3},
                {"command": "'unbalanced"},
                {"command": "other hook claude-code"},
            ]
        },
    ]
    _write(
        path, {"hooks": {"PreToolUse": [mixed, *odd], "Stop": [{"hooks": [{"command": codex}]}]}}
    )
    uninstall(str(path), CLAUDE_CODE)
    hooks = json.loads(path.read_text())["hooks"]
    assert hooks["PreToolUse"] == [{"hooks": [USER_HOOK]}, *odd]
    assert hooks["Stop"] == [{"hooks": [{"command": codex}]}]


@pytest.mark.parametrize(
    ("original", "left"),
    [
        (None, {}),
        ("{}\n", {}),
        ('{"hooks": {}}', {}),  # the table our entries alone filled goes
        ('{"hooks": {"Stop": []}}', {"hooks": {"Stop": []}}),
    ],
)
def test_uninstall_never_removes_the_file(
    tmp_path: Path, original: str | None, left: dict[str, object]
) -> None:
    # A file holding only our entries after uninstall may have been the user's before install.
    path = tmp_path / "hooks.json"
    if original is not None:
        path.write_text(original)
        assert not uninstall(str(path), CODEX).changed  # nothing of ours: nothing changes
    install(str(path), CODEX, hook_command(["/x/repeat-guard"], CODEX))
    installed = path.read_text()
    change = uninstall(str(path), CODEX, dry_run=True)
    assert path.read_text() == installed
    assert change.after is not None
    assert json.loads(change.after) == left
    assert f"+++ {path}" in change.diff()
    uninstall(str(path), CODEX)
    assert json.loads(path.read_text()) == left
    assert not uninstall(str(path), CODEX).changed
    path.unlink()
    assert not uninstall(str(path), CODEX).changed  # an absent file stays absent


def test_an_empty_file_is_an_empty_object(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("\n")
    install(str(path), CLAUDE_CODE, COMMAND)
    assert "PreToolUse" in json.loads(path.read_text())["hooks"]
    path.write_text("{}")
    assert not uninstall(str(path), CLAUDE_CODE).changed


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    _write(path, EXISTING)
    text = path.read_text()
    change = install(str(path), CLAUDE_CODE, COMMAND, dry_run=True)
    assert path.read_text() == text
    # Written with the file's own indent, four spaces, and nothing of the file taken out.
    diff = change.diff()
    assert f'+{" " * 24}"command": "{COMMAND}",' in diff.replace("\\'", "'")
    assert [line for line in diff.splitlines()[2:] if line.startswith("-")] == []


def test_a_symlinked_settings_file_is_written_through(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "settings.json"
    _write(target, {"model": "opus"})
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(target)
    install(str(link), CLAUDE_CODE, COMMAND)
    assert link.is_symlink()
    assert "hooks" in json.loads(target.read_text())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ("[1]", "does not hold a JSON object"),
        ('{"hooks": []}', "key 'hooks' is not an object"),
        ('{"hooks": {"Stop": {}}}', "key 'hooks.Stop' is not a list"),
        ('{"hooks": {}, "hooks": {}}', "names the key 'hooks' twice in one object"),
        ('{"a": {"b": 1, "b": 2}}', "names the key 'b' twice in one object"),
        ("[" * 100_000 + "]" * 100_000, "is nested too deeply to read"),
        ('{"n": NaN}', r"is not valid JSON \(NaN is not a JSON value\)"),
        ('{"n": [Infinity]}', r"is not valid JSON \(Infinity is not a JSON value\)"),
        ('{"n": -Infinity}', r"is not valid JSON \(-Infinity is not a JSON value\)"),
        # Valid JSON that Python reads as inf and would write back as Infinity, not JSON.
        ('{"n": 1e999}', "holds the number 1e999, which would not be written back as it is"),
        ('{"n": -' + "9" * 4301 + "}", r"holds the number -99999999999\.\.\. \(4302 characters\)"),
    ],
    ids=[
        "not json",
        "array",
        "hooks array",
        "event object",
        "twice",
        "inner twice",
        "deep",
        "nan",
        "infinity",
        "-infinity",
        "overflow",
        "long int",
    ],
)
def test_a_file_it_does_not_understand_is_refused(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content)
    with pytest.raises(InstallError, match=message):
        install(str(path), CLAUDE_CODE, COMMAND)
    with pytest.raises(InstallError, match=message):
        uninstall(str(path), CLAUDE_CODE)
    assert path.read_text() == content


def test_numbers_that_round_trip_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    _write(path, {"big": -int("9" * 4300), "small": 1.5e300, "tiny": 5e-324})
    install(str(path), CLAUDE_CODE, COMMAND)
    settings = json.loads(path.read_text())
    assert (settings["big"], settings["small"], settings["tiny"]) == (
        -int("9" * 4300),
        1.5e300,
        5e-324,
    )


def test_a_file_that_is_not_utf8_is_refused_in_plain_words(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(InstallError) as refused:
        install(str(path), CLAUDE_CODE, COMMAND)
    assert str(refused.value) == (
        f"{path} is not UTF-8 text (at byte offset 7); refusing to change it"
    )
    assert path.read_bytes() == b'{"a": "\xff"}'


def test_a_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="is not a regular file"):
        plan_install(str(tmp_path), CLAUDE_CODE, COMMAND)
    unreadable = tmp_path / "settings.json"
    unreadable.symlink_to("/proc/self/mem")  # a regular file whose reading fails with EIO
    with pytest.raises(InstallError, match=r"^cannot read .*settings.json: Input/output error$"):
        plan_install(str(unreadable), CLAUDE_CODE, COMMAND)


def test_a_failed_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    _write(path, {"model": "opus"})
    change = plan_install(str(path), CLAUDE_CODE, COMMAND)

    def failing(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(TargetError, match=f"cannot write {path}: No space left on device"):
        apply_change(change)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    assert json.loads(path.read_text()) == {"model": "opus"}


def test_a_settings_file_that_became_a_directory_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    _write(path, {"model": "opus"})
    change = plan_install(str(path), CLAUDE_CODE, COMMAND)
    path.unlink()
    path.mkdir()
    with pytest.raises(TargetError, match="not a regular file"):
        apply_change(change)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    assert path.is_dir()


def test_an_unknown_name_is_an_attribute_error() -> None:
    unknown = "install_everything"
    with pytest.raises(AttributeError, match="has no attribute 'install_everything'"):
        getattr(repeat_guard_hooks, unknown)


# Settings files as people write them: install changes only what it adds, and uninstall after
# install gives back every byte.
_WRITTEN = {
    "two spaces": '{\n  "model": "opus",\n  "permissions": {"allow": ["Bash(ls)"]}\n}\n',
    "four spaces": '{\n    "model": "opus",\n    "cleanupPeriodDays": 30\n}\n',
    "tabs": '{\n\t"model": "opus",\n\t"env": {\n\t\t"A": "1"\n\t}\n}',
    "one line": '{"model":"opus","env":{"A":"1"}}',
    "one line, spaced": '{"model": "opus", "env": {"A": "1"}}\n',
    "CRLF": '{\r\n  "model": "opus",\r\n  "env": {\r\n    "A": "1"\r\n  }\r\n}\r\n',
    "escapes": (
        '{\n  "name": "caf\\u00e9",\n  "url": "https:\\/\\/x.test\\/a",\n  "q": "\\"\\t"\n}\n'
    ),
    "numbers": '{\n  "ratio": 1.50,\n  "big": 1E5,\n  "neg": -0.0,\n  "exp": 2.5e-3\n}\n',
    "raw UTF-8": '{\n  "name": "café ☕",\n  "n": 1\n}\n',
    "byte-order mark": '\ufeff{\n  "model": "opus"\n}\n',
    "empty object": "{}",
    "empty object and newline": "{}\n",
    "no final newline": '{\n  "model": "opus"\n}',
    "space before colon": '{\n  "model" : "opus"\n}\n',
    "blank lines around": '\n\n{\n  "model": "opus"\n}\n\n',
    "same events, multi-line": (
        '{\n  "hooks": {\n    "PreToolUse": [\n      {\n        "matcher": "Bash",\n'
        '        "hooks": [{"type": "command", "command": "echo mine"}]\n      }\n    ],\n'
        '    "Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]\n  },\n'
        '  "model": "opus"\n}\n'
    ),
    "same events, one line": (
        '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": '
        '[{"type": "command", "command": "echo mine"}]}], "Stop": []}}'
    ),
    "same events, CRLF and tabs": (
        '{\r\n\t"hooks": {\r\n\t\t"UserPromptSubmit": [\r\n\t\t\t{\r\n\t\t\t\t"hooks": [\r\n'
        '\t\t\t\t\t{"type": "command", "command": "echo mine"}\r\n\t\t\t\t]\r\n\t\t\t}\r\n'
        "\t\t]\r\n\t}\r\n}\r\n"
    ),
}


def _lost_lines(before: str, after: str) -> list[tuple[str, str]]:
    """The lines of ``before`` that ``after`` does not have as they were, each beside the line
    that replaced it."""
    matcher = difflib.SequenceMatcher(
        None, before.splitlines(keepends=True), after.splitlines(keepends=True), autojunk=False
    )
    lost = []
    for tag, old_start, old_end, new_start, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            for offset, line in enumerate(before.splitlines(keepends=True)[old_start:old_end]):
                lost.append((line, after.splitlines(keepends=True)[new_start + offset]))
    return lost


@pytest.mark.parametrize("text", list(_WRITTEN.values()), ids=list(_WRITTEN))
@pytest.mark.parametrize("dialect", [CLAUDE_CODE, CODEX], ids=["claude-code", "codex"])
def test_install_and_uninstall_keep_every_byte_as_written(
    tmp_path: Path, text: str, dialect: Dialect
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(text.encode("utf-8"))
    original = json.loads(text.removeprefix("\ufeff"))
    command = hook_command(["/opt/rg/bin/repeat-guard"], dialect)
    install(str(path), dialect, command, results=True)
    installed = path.read_bytes().decode("utf-8")
    assert installed.startswith("\ufeff") == text.startswith("\ufeff")  # a BOM is kept
    value = json.loads(installed.removeprefix("\ufeff"))
    assert {key: item for key, item in value.items() if key != "hooks"} == {
        key: item for key, item in original.items() if key != "hooks"
    }
    if "\n" in text.strip():
        # Every line stays as it was but one, which gains the comma before what follows it.
        lost = _lost_lines(text, installed)
        assert len(lost) <= 1
        for line, replaced in lost:
            assert replaced == line.rstrip("\r\n") + "," + line[len(line.rstrip("\r\n")) :]
        newline = "\r\n" if "\r\n" in text else "\n"
        assert installed.count("\n") == installed.count(newline)  # the file's line ending
    elif original:  # a file on one line stays on one line
        assert installed.strip().count("\n") == 0
    else:  # an empty object tells nothing: two spaces
        assert installed.startswith('{\n  "hooks": {\n    "PreToolUse": [\n      {\n')
    uninstall(str(path), dialect)
    assert path.read_bytes() == text.encode("utf-8")


def test_a_moved_executable_changes_only_the_commands(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    _write(path, EXISTING)
    install(str(path), CLAUDE_CODE, COMMAND)
    installed = path.read_text()
    moved = hook_command(["/new/repeat-guard"], CLAUDE_CODE)
    change = install(str(path), CLAUDE_CODE, moved)
    lost = _lost_lines(installed, change.after or "")
    assert len(lost) == len(installed_events(CLAUDE_CODE))
    assert all(line.replace(COMMAND, moved) == replaced for line, replaced in lost)


def test_uninstall_after_install_over_our_old_entries_is_uninstall(tmp_path: Path) -> None:
    # Our entry beside the user's in one group, and one of its own: install replaces them by
    # its groups at the end, and uninstall leaves what uninstalling them alone leaves.
    old = hook_command(["/old/repeat-guard"], CLAUDE_CODE)
    path = tmp_path / "settings.json"
    mine, ours = '{"type": "command", "command": "echo mine"}', f'{{"command": "{old}"}}'
    text = (
        '{\n    "hooks": {\n        "PreToolUse": [\n            {"matcher": "Bash", "hooks": '
        f"[{mine}, {ours}]}},\n"
        f'            {{"hooks": [{ours}]}}\n        ]\n    }}\n}}\n'
    )
    path.write_text(text)
    expected = uninstall(str(path), CLAUDE_CODE, dry_run=True).after
    assert expected == (
        '{\n    "hooks": {\n        "PreToolUse": [\n            {"matcher": "Bash", "hooks": '
        '[{"type": "command", "command": "echo mine"}]}\n        ]\n    }\n}\n'
    )
    install(str(path), CLAUDE_CODE, COMMAND)
    uninstall(str(path), CLAUDE_CODE)
    assert path.read_text() == expected


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ('{"model": "opus"}', "\"'/opt/caf\\u00e9/repeat-guard' hook claude-code\""),
        ('{"model": "café"}', "\"'/opt/café/repeat-guard' hook claude-code\""),
    ],
    ids=["ASCII file", "UTF-8 file"],
)
def test_a_file_in_ascii_stays_ascii(tmp_path: Path, text: str, written: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text, "utf-8")
    install(str(path), CLAUDE_CODE, hook_command(["/opt/café/repeat-guard"], CLAUDE_CODE))
    assert written in path.read_text("utf-8")
