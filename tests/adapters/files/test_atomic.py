"""The one atomic writer: what it leaves behind when it succeeds, fails or is interrupted."""

from __future__ import annotations

import os
import signal
import stat
import threading
from pathlib import Path
from typing import BinaryIO

import pytest

from repeat_guard_files import (
    TargetError,
    Terminated,
    check_target,
    termination_raises,
    write_atomically,
)
from repeat_guard_files import _atomic as _files


def test_a_new_file_gets_the_content_and_the_usual_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    umask = os.umask(0o027)
    try:
        assert write_atomically(str(target), lambda stream: stream.write(b"new")) == 3
    finally:
        os.umask(umask)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_an_existing_file_is_replaced_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"old")
    target.chmod(0o600)
    before = target.stat().st_ino
    write_atomically(str(target), lambda stream: stream.write(b"new"))
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.stat().st_ino != before  # renamed over, not written in place


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("symlink", "it is a symbolic link; name its target"),
        ("directory", "not a regular file"),
        ("fifo", "not a regular file"),
    ],
)
def test_what_is_not_a_regular_file_is_refused_and_left_alone(
    tmp_path: Path, kind: str, reason: str
) -> None:
    target = tmp_path / "target"
    if kind == "symlink":
        (tmp_path / "elsewhere").write_text("keep")
        target.symlink_to(tmp_path / "elsewhere")
    elif kind == "directory":
        target.mkdir()
    else:
        os.mkfifo(target)
    called: list[bool] = []
    with pytest.raises(TargetError) as raised:
        write_atomically(str(target), lambda stream: called.append(True))
    assert str(raised.value) == f"cannot write {target}: {reason}"
    assert called == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["target", "elsewhere"] if kind == "symlink" else ["target"]
    )
    if kind == "symlink":
        assert (tmp_path / "elsewhere").read_text() == "keep"


def test_a_target_that_becomes_a_directory_during_the_write_is_not_replaced(
    tmp_path: Path,
) -> None:
    target = tmp_path / "target"

    def write(stream: BinaryIO) -> None:
        stream.write(b"text")
        target.mkdir()

    with pytest.raises(TargetError, match="not a regular file"):
        write_atomically(str(target), write)
    assert target.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]


def test_an_error_in_the_writer_leaves_the_target_and_no_temporary_file(
    tmp_path: Path,
) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"old")

    def write(stream: BinaryIO) -> None:
        stream.write(b"half")
        raise ValueError("the writer's own error")

    with pytest.raises(ValueError, match="the writer's own error"):
        write_atomically(str(target), write)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_failed_rename_is_a_target_error_and_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing)
    target = tmp_path / "out.txt"
    with pytest.raises(TargetError) as raised:
        write_atomically(str(target), lambda stream: stream.write(b"text"))
    assert str(raised.value) == f"cannot write {target}: No space left on device"
    assert os.listdir(tmp_path) == []


def test_a_folder_that_cannot_hold_the_temporary_file_is_a_target_error(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.txt"
    with pytest.raises(TargetError) as raised:
        write_atomically(str(target), lambda stream: stream.write(b"text"))
    assert str(raised.value) == f"cannot write {target}: No such file or directory"


def test_a_path_through_a_file_cannot_be_checked(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "out.txt"
    with pytest.raises(TargetError) as raised:
        check_target(str(target))
    assert str(raised.value) == f"cannot write {target}: Not a directory"
    check_target(str(tmp_path / "new.txt"))  # a new path is fine


def test_the_folder_is_checked_only_when_asked(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "out.txt"
    check_target(str(missing))  # the writer will say it, when it writes
    with pytest.raises(TargetError) as raised:
        check_target(str(missing), folder=True)
    assert str(raised.value) == f"cannot write {missing}: No such file or directory"
    check_target(str(tmp_path / "new.txt"), folder=True)
    (tmp_path / "old.txt").write_text("")
    check_target(str(tmp_path / "old.txt"), folder=True)


def test_a_folder_that_refuses_new_files_is_refused_up_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root may write anywhere: the refusal (its modes, a read-only mount) is os.access's answer.
    asked: list[tuple[str, int]] = []

    def refusing(path: str, mode: int) -> bool:
        asked.append((path, mode))
        return False

    monkeypatch.setattr(os, "access", refusing)
    target = tmp_path / "out.txt"
    with pytest.raises(TargetError) as raised:
        check_target(str(target), folder=True)
    assert str(raised.value) == f"cannot write {target}: cannot create files in {tmp_path}"
    assert asked == [(str(tmp_path), os.W_OK | os.X_OK)]


def test_termination_during_the_write_removes_the_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"

    def write(stream: BinaryIO) -> None:
        stream.write(b"half")
        os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(Terminated) as raised:
        write_atomically(str(target), write)
    assert raised.value.code == 128 + signal.SIGTERM
    assert os.listdir(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_termination_while_the_temporary_file_is_created_removes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A signal sent while the file is being created waits (this thread blocks it) and lands
    # as soon as it is let through: where the cleanup is already in place. It is sent to this
    # thread: sent to the process, the kernel may hand it to another thread (earlier tests leave
    # some), which does not block it, and its handler would then run here at once.
    create = _files._temporary_beside

    def created_then_signalled(target: str) -> tuple[int, str]:
        made = create(target)
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
        return made

    monkeypatch.setattr(_files, "_temporary_beside", created_then_signalled)
    with pytest.raises(Terminated) as raised:
        write_atomically(str(tmp_path / "out.txt"), lambda stream: stream.write(b"new"))
    assert raised.value.code == 128 + signal.SIGTERM
    assert os.listdir(tmp_path) == []


def test_termination_raises_only_in_the_main_thread() -> None:

    before = signal.getsignal(signal.SIGTERM)
    for sent in (signal.SIGTERM, signal.SIGHUP):
        with pytest.raises(SystemExit) as exit_, termination_raises():
            os.kill(os.getpid(), sent)
        assert exit_.value.code == 128 + sent
    assert signal.getsignal(signal.SIGTERM) is before
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL
    seen: list[object] = []

    def in_a_thread() -> None:
        with termination_raises():
            seen.append(signal.getsignal(signal.SIGTERM))

    worker = threading.Thread(target=in_a_thread)
    worker.start()
    worker.join()
    assert seen == [before]


def test_an_ignored_hangup_stays_ignored() -> None:

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        with termination_raises():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)  # ignored: nothing happens
    finally:
        signal.signal(signal.SIGHUP, previous)
