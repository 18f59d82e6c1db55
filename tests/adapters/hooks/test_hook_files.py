"""Installing and uninstalling Cline's hook files (one file per event, ``Dialect.hook_files``)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from repeat_guard_hooks import CLINE
from repeat_guard_hooks._hook_files import hook_script
from repeat_guard_hooks.installer import HookFilesChange, InstallError, hook_command, settings_path
from repeat_guard_hooks.installer import install_hook_files as install
from repeat_guard_hooks.installer import uninstall_hook_files as uninstall

COMMAND = hook_command(["/opt/rg env/bin/repeat-guard"], CLINE)
NAMES = ["PreToolUse", "SessionShutdown", "TaskComplete", "UserPromptSubmit"]


def _folder(tmp_path: Path) -> Path:
    return tmp_path / ".clinerules" / "hooks"


def test_cline_hook_folders_by_scope(tmp_path: Path) -> None:
    project = settings_path(CLINE, "project", "/w", {}, "/home/u")
    assert project == "/w/.clinerules/hooks"
    assert settings_path(CLINE, "user", "/w", {}, "/home/u") == "/home/u/.cline/hooks"
    assert settings_path(CLINE, "user", "/w", {"CLINE_DIR": "/c"}, "/home/u") == "/c/hooks"


def test_install_writes_one_executable_script_per_event(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    change = install(str(folder), CLINE, COMMAND)
    assert isinstance(change, HookFilesChange)
    assert change.changed
    assert sorted(os.listdir(folder)) == NAMES
    umask = os.umask(0)
    os.umask(umask)
    for name in NAMES:
        script = folder / name
        assert script.read_text() == hook_script(CLINE, COMMAND)
        assert stat.S_IMODE(script.stat().st_mode) == 0o777 & ~umask
    text = (folder / "PreToolUse").read_text()
    assert text.startswith("#!/bin/sh\n# written by `repeat-guard install cline`")
    assert text.endswith("\nexec '/opt/rg env/bin/repeat-guard' hook cline\n")


def test_the_script_runs_the_command_with_the_event_on_stdin(tmp_path: Path) -> None:
    command = hook_command([str(tmp_path / "echo-args")], CLINE)
    (tmp_path / "echo-args").write_text('#!/bin/sh\necho "$@"; cat\n')
    (tmp_path / "echo-args").chmod(0o755)
    install(str(tmp_path), CLINE, command)
    ran = subprocess.run(
        [str(tmp_path / "PreToolUse")], input="{}", capture_output=True, text=True, check=True
    )
    assert ran.stdout == "hook cline\n{}"


def test_install_twice_changes_nothing_and_a_moved_executable_is_updated(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    install(str(folder), CLINE, COMMAND)
    (folder / "PreToolUse").chmod(0o700)
    again = install(str(folder), CLINE, COMMAND)
    assert not again.changed
    assert again.diff() == ""
    moved = hook_command(["/new/repeat-guard"], CLINE)
    change = install(str(folder), CLINE, moved)
    assert "-exec '/opt/rg env/bin/repeat-guard' hook cline\n+exec /new/repeat-guard" in (
        change.diff()
    )
    assert (folder / "TaskComplete").read_text().endswith("exec /new/repeat-guard hook cline\n")
    assert stat.S_IMODE((folder / "PreToolUse").stat().st_mode) == 0o700  # kept


def test_dry_run_shows_the_files_and_writes_nothing(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    change = install(str(folder), CLINE, COMMAND, dry_run=True)
    assert change.diff().count("--- /dev/null\n") == 4
    assert f"+++ {folder}/PreToolUse\n" in change.diff()
    assert not folder.exists()
    install(str(folder), CLINE, COMMAND)
    removal = uninstall(str(folder), CLINE, dry_run=True)
    assert removal.diff().count("+++ /dev/null\n") == 4
    assert sorted(os.listdir(folder)) == NAMES


def test_a_users_own_hook_file_is_never_replaced(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    folder.mkdir(parents=True)
    mine = "#!/bin/sh\necho mine\n"
    (folder / "PreToolUse").write_text(mine)
    with pytest.raises(InstallError, match="did not write; refusing to replace it") as raised:
        install(str(folder), CLINE, COMMAND)
    assert "PreToolUse.sh" in str(raised.value)
    assert os.listdir(folder) == ["PreToolUse"]  # nothing written, not even the other events
    assert (folder / "PreToolUse").read_text() == mine
    # Kept under another name Cline runs for the event, it stays beside ours.
    (folder / "PreToolUse").rename(folder / "PreToolUse.sh")
    install(str(folder), CLINE, COMMAND)
    uninstall(str(folder), CLINE)
    assert os.listdir(folder) == ["PreToolUse.sh"]
    assert (folder / "PreToolUse.sh").read_text() == mine


def test_uninstall_removes_only_our_files(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    install(str(folder), CLINE, COMMAND)
    (folder / "TaskComplete").write_text("#!/bin/sh\nexec repeat-guard hook cline\n")  # by hand
    (folder / "TaskStart").write_text("#!/bin/sh\necho start\n")
    change = uninstall(str(folder), CLINE)
    assert change.changed
    assert sorted(os.listdir(folder)) == ["TaskComplete", "TaskStart"]
    assert not uninstall(str(folder), CLINE).changed


def test_uninstall_of_a_missing_folder_changes_nothing(tmp_path: Path) -> None:
    assert not uninstall(str(_folder(tmp_path)), CLINE).changed
    assert not _folder(tmp_path).exists()


def test_a_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "PreToolUse").mkdir()
    with pytest.raises(InstallError, match="PreToolUse is not a regular file"):
        install(str(tmp_path), CLINE, COMMAND)
    (tmp_path / "PreToolUse").rmdir()
    (tmp_path / "elsewhere").write_text(hook_script(CLINE, COMMAND))
    (tmp_path / "PreToolUse").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InstallError, match="not a regular file"):
        uninstall(str(tmp_path), CLINE)
    assert (tmp_path / "PreToolUse").is_symlink()


def test_a_file_where_the_folder_goes_is_refused(tmp_path: Path) -> None:
    (tmp_path / "hooks").write_text("a file where the folder goes")
    with pytest.raises(InstallError, match=r"cannot read .*hooks/PreToolUse: Not a directory"):
        install(str(tmp_path / "hooks"), CLINE, COMMAND)
    assert (tmp_path / "hooks").read_text() == "a file where the folder goes"
