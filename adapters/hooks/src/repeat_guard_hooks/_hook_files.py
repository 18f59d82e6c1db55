"""Writing a host's hook files, one per event, and taking them out again (``Dialect.hook_files``).

Cline runs every file of its hooks folders named by an event (``PreToolUse``, with or without
an extension), so ``install`` writes one small script per event the guard needs into the folder
of the scope (``settings_path``): ``#!/bin/sh``, a line marking it as ours, and ``exec`` of our
hook command. A file is ours when its second line is that mark; ``uninstall`` removes exactly
those, and the folder stays. A file of the same name that is not ours (a user's own hook) is
never replaced: ``install`` refuses, names it and says how to keep it. Each file is written
atomically (``repeat_guard_files.write_atomically``); a new one is executable (``0o777`` less
the umask), a rewritten one keeps its mode. A path that is not a regular file (a folder, a
symbolic link) is refused and left as it is.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import partial
from typing import BinaryIO

from ._dialects import Dialect
from ._install import InstallError, SettingsChange, installed_events

__all__ = [
    "HookFilesChange",
    "apply_files",
    "hook_script",
    "install_hook_files",
    "plan_files",
    "uninstall_hook_files",
]

# Ours is at most a few hundred bytes: reading more of a file tells nothing more.
_READ_LIMIT = 4096


def _mark(dialect: Dialect) -> str:
    name = dialect.name
    return f"# written by `repeat-guard install {name}`; `repeat-guard uninstall {name}` removes it"


def hook_script(dialect: Dialect, command: str) -> str:
    """Return the text of our hook file: ``command`` run by ``sh``, marked as ours."""
    return f"#!/bin/sh\n{_mark(dialect)}\nexec {command}\n"


@dataclass(frozen=True, slots=True)
class HookFilesChange:
    """A planned change of the hook files in the folder ``path`` (``after`` ``None``: removed)."""

    path: str
    files: tuple[SettingsChange, ...]

    @property
    def changed(self) -> bool:
        """Whether applying the change would alter any file."""
        return any(file.changed for file in self.files)

    def diff(self) -> str:
        """A unified diff of every file that changes."""
        return "".join(file.diff() for file in self.files)


def _read(path: str) -> str | None:
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise InstallError(f"{path} is not a regular file; refusing to change it")
        with open(path, "rb") as stream:
            data = stream.read(_READ_LIMIT)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InstallError(f"cannot read {path}: {error.strerror}") from error
    return data.decode("utf-8", "replace")


def _is_ours(text: str, dialect: Dialect) -> bool:
    lines = text.split("\n")
    return len(lines) > 1 and lines[1] == _mark(dialect)


def plan_files(folder: str, dialect: Dialect, command: str | None) -> HookFilesChange:
    """Return the change that gives ``folder`` our hook file for each event ``install`` adds,
    running ``command`` (``None``: the change that removes every hook file of ours).

    Raises ``InstallError`` naming each file of an event we need that is not ours."""
    events = installed_events(dialect) if command is not None else tuple(dialect.hook_files)
    files, theirs = [], []
    for event in events:
        path = os.path.join(folder, dialect.hook_files[event])
        before = _read(path)
        if before is not None and not _is_ours(before, dialect):
            theirs.append(path)
        elif command is not None:
            files.append(SettingsChange(path, before, hook_script(dialect, command)))
        else:
            files.append(SettingsChange(path, before, None))
    if theirs and command is not None:
        raise InstallError(_refusal(theirs))
    return HookFilesChange(folder, tuple(files))


def _refusal(paths: list[str]) -> str:
    named = ", ".join(paths)
    return (
        f"{named}: a hook file repeat-guard did not write; refusing to replace it. Cline runs "
        "every file named by the event, with or without an extension: keep yours as, say, "
        f"{os.path.basename(paths[0])}.sh (with its #! line), or remove it, then install again"
    )


def _write(text: bytes, stream: BinaryIO) -> int:
    return stream.write(text)


def apply_files(change: HookFilesChange) -> None:
    """Write or remove each changed file of ``change``, each write atomic; a new file is made
    executable. Raises ``TargetError`` when a file cannot be written."""
    from repeat_guard_files import write_atomically  # noqa: PLC0415  # not on the hook path

    for file in change.files:
        if not file.changed:
            continue
        if file.after is None:
            os.unlink(file.path)
            continue
        os.makedirs(change.path, exist_ok=True)
        write_atomically(file.path, partial(_write, file.after.encode("utf-8")))
        if file.before is None:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(file.path, 0o777 & ~umask)


def install_hook_files(
    folder: str, dialect: Dialect, command: str, *, dry_run: bool = False
) -> HookFilesChange:
    """Plan and (unless ``dry_run``) apply the install of our hook files into ``folder``."""
    change = plan_files(folder, dialect, command)
    if not dry_run:
        apply_files(change)
    return change


def uninstall_hook_files(
    folder: str, dialect: Dialect, *, dry_run: bool = False
) -> HookFilesChange:
    """Plan and (unless ``dry_run``) apply the removal of our hook files from ``folder``."""
    change = plan_files(folder, dialect, None)
    if not dry_run:
        apply_files(change)
    return change
