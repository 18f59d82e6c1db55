"""``install pi|opencode|openclaw``: the hosts that load the npm package's plugin, not a hook."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repeat_guard_cli import main
from repeat_guard_hooks import PLUGIN_HOSTS
from repeat_guard_hooks.installer import (
    InstallError,
    install,
    plugin_path,
    settings_path,
    uninstall,
)

PI = PLUGIN_HOSTS["pi"]
OPENCODE = PLUGIN_HOSTS["opencode"]
OPENCLAW = PLUGIN_HOSTS["openclaw"]
MOVED = "/old/site-packages/repeat_guard_hooks/plugins/pi.js"


def test_each_host_looks_for_its_plugin_in_its_own_settings() -> None:
    assert settings_path(PI, "project", "/p", {}, "/h") == "/p/.pi/settings.json"
    assert settings_path(PI, "user", "/p", {}, "/h") == "/h/.pi/agent/settings.json"
    agent_dir = {"PI_CODING_AGENT_DIR": "/a"}
    assert settings_path(PI, "user", "/p", agent_dir, "/h") == "/a/settings.json"
    assert settings_path(OPENCODE, "project", "/p", {}, "/h") == "/p/opencode.json"
    user = "/h/.config/opencode/opencode.json"
    assert settings_path(OPENCODE, "user", "/p", {}, "/h") == user
    assert settings_path(OPENCLAW, "user", "/p", {}, "/h") == "/h/.openclaw/openclaw.json"
    state_dir = {"OPENCLAW_STATE_DIR": "/s"}
    assert settings_path(OPENCLAW, "user", "/p", state_dir, "/h") == "/s/openclaw.json"


def test_the_shipped_plugins_are_there() -> None:
    for host in PLUGIN_HOSTS.values():
        path = Path(plugin_path(host))
        assert path.is_file()
        assert path.parent.name == "plugins"
        assert 'from "./client.js"' in path.read_text(encoding="utf-8")
    # OpenClaw reads the plugin's manifest, beside it, before it loads the plugin.
    manifest = json.loads((Path(plugin_path(OPENCLAW)).parent / "openclaw.plugin.json").read_text())
    assert manifest["id"] == "repeat-guard"
    assert manifest["contracts"] == {"agentToolResultMiddleware": ["openclaw"]}


def test_install_lists_the_plugin_once_and_uninstall_gives_the_bytes_back(tmp_path: Path) -> None:
    path = tmp_path / "opencode.json"
    text = '{\n    "model": "a/b",\n    "plugin": ["other-plugin"]\n}\n'
    path.write_text(text)
    first = install(str(path), OPENCODE, "unused")
    assert first.changed
    settings = json.loads(path.read_text())
    assert settings == {"model": "a/b", "plugin": ["other-plugin", plugin_path(OPENCODE)]}
    assert not install(str(path), OPENCODE, "unused").changed
    assert uninstall(str(path), OPENCODE).changed
    assert path.read_text() == text
    assert not uninstall(str(path), OPENCODE).changed


def test_a_moved_install_replaces_the_old_path_and_others_stay(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"extensions": [MOVED, "./mine.ts", 3]}))
    install(str(path), PI, "unused")
    assert json.loads(path.read_text())["extensions"] == ["./mine.ts", 3, plugin_path(PI)]
    uninstall(str(path), PI)
    assert json.loads(path.read_text()) == {"extensions": ["./mine.ts", 3]}


def test_uninstall_takes_the_key_our_entry_alone_filled(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"theme": "dark"}))
    install(str(path), PI, "unused")
    uninstall(str(path), PI)
    assert json.loads(path.read_text()) == {"theme": "dark"}
    path.write_text(json.dumps({"extensions": []}))
    assert not uninstall(str(path), PI).changed  # an empty list of the user's stays


def test_a_missing_file_is_made_on_install_and_left_absent_on_uninstall(tmp_path: Path) -> None:
    path = tmp_path / ".pi" / "settings.json"
    change = uninstall(str(path), PI)
    assert (change.before, change.after) == (None, None)
    install(str(path), PI, "unused")
    assert json.loads(path.read_text()) == {"extensions": [plugin_path(PI)]}


def test_a_plugin_key_that_is_not_a_list_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "opencode.json"
    path.write_text('{"plugin": "one"}')
    with pytest.raises(InstallError, match="key 'plugin' is not a list"):
        install(str(path), OPENCODE, "unused")
    assert path.read_text() == '{"plugin": "one"}'


def test_the_command_installs_and_uninstalls_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["install", "pi"]) == 0
    out, err = capsys.readouterr()
    assert out == f"repeat-guard pi plugin added to {tmp_path / '.pi' / 'settings.json'}\n"
    assert "repeat-guard serve --state` from PATH" in err
    assert main(["uninstall", "opencode", "--scope", "user"]) == 0
    assert "nothing changed" in capsys.readouterr().out
    assert main(["uninstall", "pi"]) == 0
    assert capsys.readouterr().out.startswith("repeat-guard pi plugin removed from")
    assert not os.path.exists(tmp_path / "opencode.json")


def test_hook_takes_no_plugin_host(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hook", "pi"]) != 0
    assert "invalid choice: 'pi'" in capsys.readouterr().err


OPENCLAW_ENTRY = {"enabled": True, "hooks": {"allowConversationAccess": True}}


def test_openclaw_loads_the_plugin_by_path_enabled_with_conversation_access(
    tmp_path: Path,
) -> None:
    path = tmp_path / "openclaw.json"
    text = '{\n  "plugins": {"load": {"paths": ["/mine"]}, "entries": {"x": {}}},\n  "a": 1\n}\n'
    path.write_text(text)
    assert install(str(path), OPENCLAW, "unused").changed
    plugins = json.loads(path.read_text())["plugins"]
    assert plugins["load"] == {"paths": ["/mine", plugin_path(OPENCLAW)]}
    assert plugins["entries"] == {"x": {}, "repeat-guard": OPENCLAW_ENTRY}
    assert not install(str(path), OPENCLAW, "unused").changed
    assert uninstall(str(path), OPENCLAW).changed
    assert path.read_text() == text
    assert not uninstall(str(path), OPENCLAW).changed


def test_openclaw_uninstall_takes_every_object_our_settings_alone_filled(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    install(str(path), OPENCLAW, "unused")
    assert json.loads(path.read_text()) == {
        "plugins": {
            "load": {"paths": [plugin_path(OPENCLAW)]},
            "entries": {"repeat-guard": OPENCLAW_ENTRY},
        }
    }
    uninstall(str(path), OPENCLAW)
    assert json.loads(path.read_text()) == {}
    # A user's own setting of the entry stays, and so does what holds it.
    path.write_text(json.dumps({"plugins": {"entries": {"repeat-guard": {"config": {}}}}}))
    install(str(path), OPENCLAW, "unused")
    uninstall(str(path), OPENCLAW)
    assert json.loads(path.read_text()) == {
        "plugins": {"entries": {"repeat-guard": {"config": {}}}}
    }
    # Settings of another shape, or without ours, are left as they are.
    for other in (
        '{"plugins": {"entries": 3}}',
        '{"plugins": {"entries": {"repeat-guard": {"hooks": {}}}}}',
    ):
        path.write_text(other)
        assert not uninstall(str(path), OPENCLAW).changed


def test_openclaw_settings_that_are_not_objects_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    for text in ('{"plugins": []}', '{"plugins": {"load": {"paths": {}}}}'):
        path.write_text(text)
        with pytest.raises(InstallError, match="refusing to change it"):
            install(str(path), OPENCLAW, "unused")
        assert path.read_text() == text
