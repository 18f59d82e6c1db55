"""``install claude-code --http``: http hooks to the guard's listener, the guard's start at the
session's start, and the secret in a settings file that is not committed."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest

from repeat_guard_hooks import CLAUDE_CODE, CODEX, SECRET_HEADER, SECRET_VARIABLE
from repeat_guard_hooks.installer import (
    HttpInstall,
    InstallError,
    Place,
    SettingsChange,
    apply_change,
    hook_command,
    listener_settings,
    plan_install,
    plan_scope,
    plan_secret,
    start_command,
)
from repeat_guard_hooks.resident import read_http_settings

EXECUTABLE = ["/opt/rg env/bin/repeat-guard"]
COMMAND = hook_command(EXECUTABLE, CLAUDE_CODE)
SECRET = "f" * 64
HTTP = HttpInstall(8123, SECRET, start_command(EXECUTABLE))
URL = "http://127.0.0.1:8123/hook/claude-code"


def _place(tmp_path: Path) -> Place:
    return Place(str(tmp_path / "project"), {}, str(tmp_path / "home"))


def _files(tmp_path: Path) -> dict[str, Path]:
    project, home = tmp_path / "project" / ".claude", tmp_path / "home" / ".claude"
    return {
        "project": project / "settings.json",
        "local": project / "settings.local.json",
        "user": home / "settings.json",
    }


def _http_hook(timeout: int) -> dict[str, object]:
    return {
        "type": "http",
        "url": URL,
        "headers": {SECRET_HEADER: f"${SECRET_VARIABLE}"},
        "allowedEnvVars": [SECRET_VARIABLE],
        "timeout": timeout,
    }


START = {
    "hooks": [{"type": "command", "command": f"'{EXECUTABLE[0]}' daemon start", "timeout": 10}]
}
OURS = {
    "SessionStart": [START],
    "PreToolUse": [{"matcher": "*", "hooks": [_http_hook(10)]}],
    "UserPromptSubmit": [{"hooks": [_http_hook(10)]}],
    "SubagentStop": [{"hooks": [_http_hook(10)]}],
    "SessionEnd": [{"hooks": [_http_hook(3)]}],
}


def _apply(changes: tuple[SettingsChange, ...]) -> None:
    for change in changes:
        apply_change(change)


def _install(tmp_path: Path, scope: str, http: HttpInstall | None = HTTP) -> list[str]:
    changes = plan_scope(CLAUDE_CODE, scope, _place(tmp_path), COMMAND, http=http)
    _apply(changes)
    return [change.path for change in changes if change.changed]


def _uninstall(tmp_path: Path, scope: str) -> list[str]:
    changes = plan_scope(CLAUDE_CODE, scope, _place(tmp_path), None)
    _apply(changes)
    return [change.path for change in changes if change.changed]


def test_project_scope_puts_the_hooks_in_the_project_and_the_secret_in_the_local_file(
    tmp_path: Path,
) -> None:
    files = _files(tmp_path)
    files["project"].parent.mkdir(parents=True)
    files["project"].write_text('{\n  "model": "opus"\n}\n')
    files["local"].write_text('{"env": {"FOO": "1"}}')
    assert _install(tmp_path, "project") == [str(files["project"]), str(files["local"])]
    hooks = {"model": "opus", "hooks": OURS}
    assert files["project"].read_text() == json.dumps(hooks, indent=2) + "\n"
    assert (
        files["local"].read_text() == f'{{"env": {{"FOO": "1", "{SECRET_VARIABLE}": "{SECRET}"}}}}'
    )
    assert SECRET not in files["project"].read_text()
    assert _install(tmp_path, "project") == []  # idempotent
    assert _uninstall(tmp_path, "project") == [str(files["project"]), str(files["local"])]
    assert files["project"].read_text() == '{\n  "model": "opus"\n}\n'
    assert files["local"].read_text() == '{"env": {"FOO": "1"}}'


LAYOUT = (
    '\ufeff{\r\n    "env": {\r\n        "A": "\\u00e9"\r\n    },\r\n'
    '    "hooks": {\r\n        "Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]'
    '\r\n    },\r\n    "n": 1.50\r\n}'
)


@pytest.mark.parametrize("scope", ["local", "user"])
def test_a_scope_holding_its_own_secret_is_one_change_and_uninstall_is_the_identity(
    tmp_path: Path, scope: str
) -> None:
    path = _files(tmp_path)[scope]
    path.parent.mkdir(parents=True)
    path.write_bytes(LAYOUT.encode())
    assert _install(tmp_path, scope) == [str(path)]
    written = json.loads(path.read_text(encoding="utf-8-sig"))
    assert written["env"] == {"A": "é", SECRET_VARIABLE: SECRET}
    assert written["hooks"] == {
        "Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}],
        **OURS,
    }
    assert path.read_bytes().startswith(b'\xef\xbb\xbf{\r\n    "env": {\r\n        "A": "\\u00e9",')
    assert _install(tmp_path, scope) == []
    assert _uninstall(tmp_path, scope) == [str(path)]
    assert path.read_bytes() == LAYOUT.encode()
    assert not _files(tmp_path)["project"].exists()


def test_the_secret_never_goes_into_the_project_file(tmp_path: Path) -> None:
    files = _files(tmp_path)
    for scope in ("project", "local", "user"):
        _install(tmp_path, scope)
    assert SECRET not in files["project"].read_text()
    for scope in ("local", "user"):
        assert json.loads(files[scope].read_text())["env"] == {SECRET_VARIABLE: SECRET}


def test_the_secret_stays_while_another_scope_sharing_it_has_http_hooks(tmp_path: Path) -> None:
    files = _files(tmp_path)
    _install(tmp_path, "project")
    _install(tmp_path, "local")
    assert _uninstall(tmp_path, "local") == [str(files["local"])]  # the hooks only
    assert json.loads(files["local"].read_text()) == {"env": {SECRET_VARIABLE: SECRET}}
    _install(tmp_path, "local")
    assert _uninstall(tmp_path, "project") == [str(files["project"])]
    assert SECRET_VARIABLE in json.loads(files["local"].read_text())["env"]
    assert _uninstall(tmp_path, "local") == [str(files["local"])]
    assert json.loads(files["local"].read_text()) == {}


def test_an_install_without_http_takes_the_http_entries_and_the_secret_out(tmp_path: Path) -> None:
    files = _files(tmp_path)
    _install(tmp_path, "project")
    assert _install(tmp_path, "project", http=None) == [str(files["project"]), str(files["local"])]
    hooks = json.loads(files["project"].read_text())["hooks"]
    assert "SessionStart" not in hooks
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == COMMAND
    assert json.loads(files["local"].read_text()) == {}
    # Nothing to take out: the local file is not listed.
    assert plan_scope(CLAUDE_CODE, "project", _place(tmp_path), COMMAND)[1:] == ()


def test_a_new_port_replaces_the_old_urls_in_place(tmp_path: Path) -> None:
    files = _files(tmp_path)
    _install(tmp_path, "local")
    _install(tmp_path, "local", HTTP._replace(port=9000, secret="e" * 64))
    text = files["local"].read_text()
    assert "8123" not in text
    assert text.count("http://127.0.0.1:9000/hook/claude-code") == 4
    assert json.loads(text)["env"] == {SECRET_VARIABLE: "e" * 64}


def test_uninstall_with_nothing_there_changes_nothing(tmp_path: Path) -> None:
    for scope in ("project", "local", "user"):
        changes = plan_scope(CLAUDE_CODE, scope, _place(tmp_path), None)
        assert [change.changed for change in changes] == [False]
    assert not (tmp_path / "project").exists()


def test_a_host_without_http_hooks_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="codex takes no http hooks"):
        plan_install(str(tmp_path / "hooks.json"), CODEX, COMMAND, http=HTTP)
    changes = plan_scope(CODEX, "user", _place(tmp_path), COMMAND)
    assert len(changes) == 1  # no secret for a host without http hooks


def test_only_our_http_and_start_entries_are_ours(tmp_path: Path) -> None:
    theirs = [
        {"type": "http", "url": "http://localhost:8123/hook/claude-code"},
        {"type": "http", "url": "http://127.0.0.1:x/hook/claude-code"},
        {"type": "http", "url": "http://127.0.0.1:8123/hook/codex"},
        {"type": "http", "url": 8123},
        {"type": "command", "command": "other daemon start"},
        {"type": "command", "command": "repeat-guard daemon stop"},
    ]
    path = _files(tmp_path)["local"]
    path.parent.mkdir(parents=True)
    settings = {
        "hooks": {
            "SessionStart": [{"hooks": theirs}],
            "Stop": ["odd", {"hooks": 1}, {"hooks": ["odd"]}],
        }
    }
    path.write_text(json.dumps(settings))
    _install(tmp_path, "local")
    assert json.loads(path.read_text())["hooks"]["SessionStart"] == [{"hooks": theirs}, START]
    _uninstall(tmp_path, "local")
    assert json.loads(path.read_text()) == settings


def test_an_env_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    path = _files(tmp_path)["local"]
    path.parent.mkdir(parents=True)
    path.write_text('{"env": []}')
    with pytest.raises(InstallError, match="key 'env' is not an object"):
        plan_scope(CLAUDE_CODE, "project", _place(tmp_path), COMMAND, http=HTTP)
    assert path.read_text() == '{"env": []}'


def test_plan_secret_leaves_other_variables_and_an_absent_one(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"env": {"A": "1"}}')
    assert not plan_secret(str(path), None).changed
    path.write_text(f'{{"env": {{"A": "1", "{SECRET_VARIABLE}": "x"}}}}')
    assert plan_secret(str(path), None).after == '{"env": {"A": "1"}}'


def test_writes_keep_a_settings_files_mode(tmp_path: Path) -> None:
    path = _files(tmp_path)["local"]
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    path.chmod(0o600)
    _install(tmp_path, "local")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_listener_settings_are_made_private_once(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "state.sqlite3.http"
    port, secret = listener_settings(str(path), create=False)
    assert not path.parent.exists()
    assert 0 < port < 65536
    assert len(secret) == 64
    port, secret = listener_settings(str(path), create=True)
    assert read_http_settings(str(path)) == (port, secret)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (path.parent, path.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert listener_settings(str(path), create=True) == (port, secret)  # kept
    assert os.listdir(path.parent) == [path.name]  # no temporary file left


def test_settings_another_install_made_meanwhile_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.sqlite3.http"
    theirs = {"port": 4242, "secret": "s" * 32}
    link = os.link

    def racing(source: str, target: str) -> None:
        path.write_text(json.dumps(theirs))
        link(source, target)

    monkeypatch.setattr(os, "link", racing)
    assert listener_settings(str(path), create=True) == (4242, "s" * 32)
    assert json.loads(path.read_text()) == theirs
    assert os.listdir(tmp_path) == [path.name]


def test_unusable_listener_settings_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.sqlite3.http"
    path.write_text('{"port": 1, "secret": "short"}')
    with pytest.raises(InstallError, match=r"too short to be one; fix or remove it"):
        listener_settings(str(path), create=True)
    (tmp_path / "file").write_text("")
    with pytest.raises(InstallError, match=r"cannot read .*/file/state\.sqlite3\.http"):
        listener_settings(str(tmp_path / "file" / "state.sqlite3.http"), create=True)

    def refused(source: str, target: str) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", target)

    monkeypatch.setattr(os, "link", refused)
    fresh = tmp_path / "fresh" / "state.sqlite3.http"
    with pytest.raises(InstallError, match=r"cannot write .*fresh.*: Permission denied"):
        listener_settings(str(fresh), create=True)
    assert os.listdir(fresh.parent) == []  # nothing left behind
