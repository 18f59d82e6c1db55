"""Replacing a file atomically: the one writer every command that writes a file uses.

The new content goes to a temporary file in the target's directory, is flushed to disk, and is
renamed over the target once complete, so a reader sees the old file or the new one, never
half of one; a failed or interrupted write leaves the target as it was and no temporary file
behind. One exception: signals are held back while the temporary file is created only in the
calling thread, so in a process with other threads a SIGINT, SIGTERM or SIGHUP that one of
them receives in that moment can still leave the file (the commands are single-threaded).

An existing target must be a regular file: a symbolic link, a device, a FIFO or a directory is
refused, never replaced (checked before the work and again just before the rename). The target
keeps its permission bits; a new one gets the process's usual ones.

Not imported by a hook process: only the installer and the commands that write files use it.
``tempfile`` (and ``random`` with it) is imported when a file is written: an audit to the
terminal imports this module and writes none.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import BinaryIO, TypeVar

__all__ = ["TargetError", "Terminated", "check_target", "termination_raises", "write_atomically"]

_T = TypeVar("_T")


class TargetError(Exception):
    """The target cannot be written, or must not be replaced; the message names it and why."""


class Terminated(SystemExit):
    """SIGTERM or SIGHUP arrived while a temporary file existed: exit as a process killed by
    it would be reported (128 + the signal's number), after the temporary file is removed."""


def check_target(target: str, *, folder: bool = False) -> None:
    """Raise ``TargetError`` unless ``target`` is a new path or an existing regular file; with
    ``folder``, also unless the folder it would be written in exists and lets this process
    create files there (the temporary file): for a caller with long work to do before writing.
    """
    try:
        status = os.lstat(target)
    except FileNotFoundError:
        pass  # a new path
    except OSError as error:
        raise TargetError(f"cannot write {target}: {error.strerror}") from error
    else:
        if stat.S_ISLNK(status.st_mode):
            raise TargetError(f"cannot write {target}: it is a symbolic link; name its target")
        if not stat.S_ISREG(status.st_mode):
            raise TargetError(f"cannot write {target}: not a regular file")
    if folder:
        _check_folder(target)


def _folder_of(target: str) -> str:
    return os.path.dirname(os.path.abspath(target))


def _check_folder(target: str) -> None:
    # A path through a file got ENOTDIR from lstat already: what is left is a folder that is
    # missing, or one this process may not create files in (its modes, a read-only mount).
    where = _folder_of(target)
    try:
        os.stat(where)
    except OSError as error:
        raise TargetError(f"cannot write {target}: {error.strerror}") from error
    if not os.access(where, os.W_OK | os.X_OK):
        raise TargetError(f"cannot write {target}: cannot create files in {where}")


def write_atomically(target: str, write: Callable[[BinaryIO], _T]) -> _T:
    """Replace (or create) the regular file ``target`` with what ``write`` writes to the
    binary stream it is given, and return what ``write`` returns.

    Raises ``TargetError`` when ``target`` is not a regular file or a new path, or when the
    file cannot be written (the message carries the system's reason); anything ``write``
    raises is raised as it is. In every failure the target is untouched.
    """
    check_target(target)
    with termination_raises():
        # A signal that lands while the temporary file is being created would leave it
        # behind: signals wait until the cleanup below is in place and the file is open as a
        # stream, and are let through inside it (a signal that waited runs its handler as soon
        # as it is let through, so it must find the cleanup there).
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTING)
        try:
            handle, temporary = _temporary_beside(target)
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            raise
        try:
            with os.fdopen(handle, "wb") as stream:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                result = write(stream)
                stream.flush()
                os.fsync(stream.fileno())
            check_target(target)  # it may have changed into what must not be replaced
            os.chmod(temporary, _new_file_mode(target))
            os.replace(temporary, target)
        except OSError as error:
            _remove(temporary)
            raise TargetError(f"cannot write {target}: {error.strerror}") from error
        except BaseException:
            _remove(temporary)
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # if opening the stream failed
    return result


def _temporary_beside(target: str) -> tuple[int, str]:
    import tempfile  # noqa: PLC0415  # the module's docstring says why here

    try:
        return tempfile.mkstemp(
            dir=_folder_of(target),
            prefix=f".{os.path.basename(target)}.",
            suffix=".tmp",
        )
    except OSError as error:
        raise TargetError(f"cannot write {target}: {error.strerror}") from error


def _new_file_mode(target: str) -> int:
    """The target's permission bits, or for a new file what ``open`` would give it."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove(temporary: str) -> None:
    # Gone already when a signal lands just after the rename.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)


def _on_termination(signum: int, frame: FrameType | None) -> None:
    raise Terminated(128 + signum)


_TERMINATING = (signal.SIGTERM, signal.SIGHUP)
_INTERRUPTING = (signal.SIGINT, *_TERMINATING)


@contextlib.contextmanager
def termination_raises() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise ``Terminated`` (exit 128 + the signal)."""
    # SIGTERM's and SIGHUP's (the terminal closed) default ends the process at once, leaving
    # the temporary file behind; while it exists, they raise instead, so the cleanup runs
    # (SIGINT already raises). A signal the caller ignores (nohup) stays ignored. Handlers can
    # only be set from the main thread; elsewhere the defaults stay.
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        number: signal.signal(number, _on_termination)
        for number in _TERMINATING
        if signal.getsignal(number) is signal.SIG_DFL
    }
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
