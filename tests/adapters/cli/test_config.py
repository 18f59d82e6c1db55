"""Configuration from files and flags, and the check-config command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repeat_guard import GuardConfig
from repeat_guard_cli import main
from repeat_guard_hooks import CONFIG_LIMIT


def write(path: Path, text: str | bytes) -> str:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def check_config(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object, str]:
    status = main(["check-config", *argv])
    captured = capsys.readouterr()
    printed = json.loads(captured.out) if captured.out else None
    return status, printed, captured.err


def test_check_config_prints_the_normalized_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "guard.json", '{"thresholds": [8, 3], "exclude": ["todo_*"]}')
    status, printed, err = check_config(capsys, path)
    assert (status, err) == (0, "")
    assert printed == {
        "thresholds": [3, 8],
        "include": [],
        "exclude": ["todo_*"],
        "argumentsPreviewChars": 500,
    }


def test_check_config_reads_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = 'thresholds = [2, 4]\ninclude = ["grep", "read_*"]\nargumentsPreviewChars = 40\n'
    status, printed, _ = check_config(capsys, write(tmp_path / "guard.toml", text))
    assert status == 0
    assert printed == {
        "thresholds": [2, 4],
        "include": ["grep", "read_*"],
        "exclude": [],
        "argumentsPreviewChars": 40,
    }


@pytest.mark.parametrize(
    ("text", "thresholds"),
    [('  {"thresholds": [4, 6]}', [4, 6]), ("thresholds = [4, 7]", [4, 7])],
)
def test_a_name_without_a_known_suffix_is_sniffed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, thresholds: list[int]
) -> None:
    status, printed, _ = check_config(capsys, write(tmp_path / "guard.conf", text))
    assert status == 0
    assert isinstance(printed, dict)
    assert printed["thresholds"] == thresholds


def test_flags_override_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        '{"thresholds": [3, 5], "include": ["a"], "exclude": ["b"], "arguments_preview_chars": 9}'
    )
    path = write(tmp_path / "guard.json", text)
    argv = ["--thresholds", "2, 6", "--include", "x*", "--include", "y", "--exclude", "z"]
    status, printed, _ = check_config(capsys, path, *argv, "--preview-chars", "12")
    assert status == 0
    assert printed == {
        "thresholds": [2, 6],
        "include": ["x*", "y"],
        "exclude": ["z"],
        "argumentsPreviewChars": 12,
    }


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("guard.json", '{"thresholds": [1]}', "thresholds must be 2 or more, got 1 in [1]"),
        ("guard.json", '{"threshold": [3]}', "unknown config key 'threshold'"),
        ("guard.toml", "exclude = 'todo'", "exclude must be a list of tool-name patterns"),
        ("guard.json", "[3, 5]", "config must be a mapping, got [3, 5]"),
        ("guard.json", '{"thresholds": ', "is not valid JSON: Expecting value"),
        ("guard.toml", "thresholds = [", "is not valid TOML"),
        ("guard.json", b'{"include": ["\xff"]}', "is not UTF-8"),
    ],
)
def test_a_bad_config_file_exits_2_with_the_reason(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    text: str | bytes,
    message: str,
) -> None:
    path = write(tmp_path / name, text)
    status, printed, err = check_config(capsys, path)
    assert (status, printed) == (2, None)
    assert err.startswith("repeat-guard: error: ")
    assert message in err
    assert path in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--thresholds", "3,x"], "thresholds must be integers, got 'x' in [3, 'x']"),
        (["--thresholds", ","], "thresholds must not be empty"),
        (["--thresholds", "3,,5"], "thresholds must be integers, got '' in [3, '', 5]"),
        (["--thresholds", ",3"], "thresholds must be integers, got '' in ['', 3]"),
        (["--thresholds", "3_0"], "thresholds must be integers, got '3_0' in ['3_0']"),
        (["--thresholds", "\u0663"], "thresholds must be integers, got '\u0663' in ['\u0663']"),
        (["--thresholds", "9" * 5000], "thresholds must be integers, got '9999"),
        (["--preview-chars", "1_0"], "argumentsPreviewChars must be an integer, got '1_0'"),
        (["--thresholds", "3,3"], "thresholds must not repeat"),
        (["--preview-chars", "many"], "argumentsPreviewChars must be an integer, got 'many'"),
        (["--preview-chars", "0"], "argumentsPreviewChars must be 1 or more"),
    ],
)
def test_bad_flags_get_parse_configs_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    path = write(tmp_path / "guard.json", "{}")
    status, _, err = check_config(capsys, path, *flags)
    assert status == 2
    assert message in err


def test_a_missing_config_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "absent.toml")
    status, printed, err = check_config(capsys, missing)
    assert (status, printed) == (2, None)
    assert (
        err
        == f"repeat-guard: error: cannot read config file {missing}: No such file or directory\n"
    )


def test_check_config_help_documents_keys_and_statuses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check-config", "--help"]) == 0
    out = capsys.readouterr().out
    assert "exit status" in out
    # Every key the core's loader accepts, the opt-in ones too, each at the start of its line.
    every = GuardConfig(
        cycle_period=2, cycle_thresholds=(2,), progress="result", budgets=(("a", 1),), deny_at=3
    )
    documented = {line.split()[0] for line in out.splitlines() if line.startswith("  ")}
    assert set(every.to_mapping()) <= documented


def test_the_top_level_help_names_every_command_with_examples(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("replay", "demo", "audit", "serve", "check-config", "hook", "install"):
        assert f"\n    {command}" in out
    assert "repeat-guard install claude-code" in out
    assert "repeat-guard COMMAND --help" in out


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_config_that_is_not_a_regular_file_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # A FIFO with no writer would be waited on forever, /dev/zero read until memory runs out.
    path = str(tmp_path / "guard.toml")
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = os.devnull  # reads as an empty, valid configuration
    status, printed, err = check_config(capsys, path)
    assert (status, printed) == (2, None)
    assert err == f"repeat-guard: error: cannot read config file {path}: not a regular file\n"


def test_a_config_past_the_limit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "guard.toml", "\n" * CONFIG_LIMIT)
    assert check_config(capsys, path)[0] == 0
    write(tmp_path / "guard.toml", "\n" * (CONFIG_LIMIT + 1))
    status, printed, err = check_config(capsys, path)
    assert (status, printed) == (2, None)
    assert err == f"repeat-guard: error: cannot read config file {path}: larger than 1 MiB\n"
