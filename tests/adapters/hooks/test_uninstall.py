"""``repeat-guard uninstall HOST`` takes out everything ``repeat-guard install HOST`` wrote, with
any options, and leaves the user's own entries byte for byte, for every host whose result
entries take a tool matcher (``Dialect.tool_matcher``).

A plain install adds result entries matched to the host's preset's polling tools, ``--preset
NAME`` to that preset's (and none for a preset without any), ``--results`` unmatched ones: each
is ours by its command, whatever its matcher, so ``uninstall`` takes no ``--preset``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repeat_guard import PRESETS
from repeat_guard_cli import main
from repeat_guard_hooks import DIALECTS, Dialect
from repeat_guard_hooks.installer import installed_events, preset_polls, settings_path

MATCHED = [dialect for dialect in DIALECTS.values() if dialect.tool_matcher is not None]
PLACES = [(dialect, scope.scope) for dialect in MATCHED for scope in dialect.settings]

# The user's own file: their entries in the events ours go in too (a result entry matched to
# the same tools as ours among them), other keys, and a layout of their own (tabs, CRLF, escapes,
# no final newline).
USERS = (
    '{\r\n\t"model" : "opus",\r\n\t"hooks": {\r\n'
    '\t\t"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": '
    '"echo \\u00e9 mine"}]}],\r\n'
    '\t\t"PostToolUse": [\r\n\t\t\t{"matcher": "Bash|Read", "hooks": [{"type": "command", '
    '"command": "mine-after \\"$1\\"", "timeout": 30}]},\r\n'
    '\t\t\t{"hooks": [{"type": "command", "command": "/usr/bin/notify-send done"}]}\r\n\t\t],\r\n'
    '\t\t"Stop": []\r\n\t},\r\n\t"env": {"A": "1"}\r\n}'
)

# Every way ``install`` is run: plain, under each preset, with every result, and both.
INSTALLS = [
    [],
    ["--results"],
    *(["--preset", name] for name in PRESETS),
    *(["--results", "--preset", name] for name in PRESETS),
]


def _file(dialect: Dialect, scope: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    for file in dialect.settings:
        if file.env is not None:
            monkeypatch.delenv(file.env, raising=False)
    path = Path(settings_path(dialect, scope, str(project), {}, str(home)))
    path.parent.mkdir(parents=True)
    path.write_bytes(USERS.encode())
    return path


def _ours(path: Path, dialect: Dialect) -> dict[str, list[str | None]]:
    # Each event's entries of ours: their matcher (None: every tool).
    table = json.loads(path.read_text())["hooks"]
    found: dict[str, list[str | None]] = {}
    for event, groups in table.items():
        for group in groups:
            commands = [hook["command"] for hook in group["hooks"]]
            if any(f"hook {dialect.name}" in command for command in commands):
                found.setdefault(event, []).append(group.get("matcher"))
    return found


def _results(dialect: Dialect) -> list[str]:
    return [event for event, role in dialect.events.items() if role in ("result", "failure")]


def _expected(dialect: Dialect, flags: list[str]) -> dict[str, list[str | None]]:
    # What each install writes, as the dialect's row says: a result event's entry matched to
    # the preset's polls, unmatched with --results, absent for a preset with none.
    preset = flags[flags.index("--preset") + 1] if "--preset" in flags else None
    results = "--results" in flags
    polls = preset_polls(dialect, preset)
    assert dialect.tool_matcher is not None
    matcher = None if results else dialect.tool_matcher(polls)
    return {
        event: [matcher if event in _results(dialect) and matcher else _own(dialect, event)]
        for event in installed_events(dialect, results=results, polls=polls)
    }


def _own(dialect: Dialect, event: str) -> str | None:
    # The matcher the host's entry carries by itself (Claude Code's "*"), if any.
    matcher = dialect.entry(event, dialect.events[event], "command").get("matcher")
    assert matcher is None or isinstance(matcher, str)
    return matcher


@pytest.mark.parametrize("flags", INSTALLS, ids=[" ".join(f) or "plain" for f in INSTALLS])
@pytest.mark.parametrize(("dialect", "scope"), PLACES, ids=[f"{d.name}-{s}" for d, s in PLACES])
def test_uninstall_after_any_install_gives_back_the_users_bytes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    dialect: Dialect,
    scope: str,
    flags: list[str],
) -> None:
    path = _file(dialect, scope, tmp_path, monkeypatch)
    assert main(["install", dialect.name, "--scope", scope, *flags]) == 0
    assert _ours(path, dialect) == _expected(dialect, flags)
    assert main(["uninstall", dialect.name, "--scope", scope]) == 0
    assert path.read_bytes() == USERS.encode()
    assert main(["uninstall", dialect.name, "--scope", scope]) == 0
    assert capsys.readouterr().out.endswith(f"{path}: already as wanted; nothing changed\n")


@pytest.mark.parametrize("dialect", MATCHED, ids=[d.name for d in MATCHED])
def test_uninstall_after_installs_under_every_preset_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dialect: Dialect
) -> None:
    # Each install replaces the last one's entries (another matcher each time): one uninstall
    # takes out what is left, whichever preset wrote it.
    path = _file(dialect, dialect.settings[0].scope, tmp_path, monkeypatch)
    matchers: set[str | None] = set()
    for flags in INSTALLS:
        assert main(["install", dialect.name, *flags]) == 0
        written = _ours(path, dialect)
        assert written == _expected(dialect, flags)
        matchers.update(m for event in _results(dialect) for m in written.get(event, []))
    # Presets with polls of their own, and --results' every tool; Qwen Code's PostToolUse ends
    # each call (role after-result), so it goes to every tool whatever the install.
    assert len(matchers) > 2 or not _results(dialect)
    assert main(["uninstall", dialect.name]) == 0
    assert path.read_bytes() == USERS.encode()


def test_uninstall_takes_no_preset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing for it to choose: every entry of ours goes, whatever its matcher.
    path = _file(MATCHED[0], MATCHED[0].settings[0].scope, tmp_path, monkeypatch)
    assert main(["uninstall", MATCHED[0].name, "--preset", "seed"]) == 2
    assert "unrecognized arguments: --preset seed" in capsys.readouterr().err
    assert path.read_bytes() == USERS.encode()
    assert os.listdir(path.parent) == [path.name]
