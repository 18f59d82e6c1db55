"""The ``replay`` and ``demo`` commands: stream transcripts through the ACP replay library.

Input files are opened in binary and read line by line, so memory stays flat however large the
transcript; only the (few) reminders of the current file are kept, for the per-session report.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import BinaryIO, Literal, TextIO, assert_never

from repeat_guard import GuardConfig
from repeat_guard_acp import (
    Diagnostic,
    FileSummary,
    ReplayReminder,
    annotate_transcript,
    replay_transcript,
)

from ._errors import EXIT_BROKEN_PIPE, EXIT_USAGE, UsageError
from ._progress import input_size, track_progress
from ._report import check_lines, diagnostic_line, reminder_record, summary_record, text_report
from ._streams import Streams

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_CHECK_MISMATCH",
    "EXIT_DIAGNOSTICS",
    "EXIT_OK",
    "EXIT_USAGE",
    "annotate_file",
    "check_files",
    "replay_demo",
    "replay_files",
]

EXIT_OK = 0
EXIT_CHECK_MISMATCH = 1
EXIT_DIAGNOSTICS = 3
# When several outcomes apply, the command exits with the most severe one.
_SEVERITY = {EXIT_OK: 0, EXIT_DIAGNOSTICS: 1, EXIT_CHECK_MISMATCH: 2, EXIT_USAGE: 3}

Format = Literal["text", "json"]
DEMO_NAME = "demo.jsonl"


def worst(*statuses: int) -> int:
    """Return the most severe of ``statuses``."""
    return max(statuses, key=_SEVERITY.__getitem__)


@contextlib.contextmanager
def _opened(name: str) -> Iterator[BinaryIO]:
    if name == "-":
        yield sys.stdin.buffer
        return
    try:
        stream = open(name, "rb")  # noqa: SIM115  # closed by the with below
    except OSError as error:
        raise UsageError(f"cannot read {name}: {error.strerror}") from error
    with stream:
        yield stream


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _label(name: str) -> str:
    return "<stdin>" if name == "-" else name


def _lines(stream: BinaryIO, label: str, err: TextIO) -> Iterator[bytes]:
    return track_progress(stream, err, label, input_size(stream))


def _print_diagnostic(diagnostic: Diagnostic, streams: Streams) -> int:
    streams.out.flush()
    print(diagnostic_line(diagnostic), file=streams.err)
    return EXIT_DIAGNOSTICS


def _report_file(
    items: Iterable[ReplayReminder | Diagnostic | FileSummary], fmt: Format, streams: Streams
) -> int:
    status = EXIT_OK
    reminders: list[ReplayReminder] = []
    for item in items:
        match item:
            case ReplayReminder():
                # JSON streams each reminder; text groups them by session at the file's end.
                if fmt == "json":
                    print(reminder_record(item), file=streams.out)
                else:
                    reminders.append(item)
            case Diagnostic():
                status = _print_diagnostic(item, streams)
            case FileSummary():
                if fmt == "json":
                    print(summary_record(item), file=streams.out)
                else:
                    print("\n".join(text_report(item, reminders)), file=streams.out)
            case _:
                assert_never(item)
    return status


def _each_file(
    names: Iterable[str], streams: Streams
) -> Iterator[tuple[str, Iterator[bytes] | None]]:
    # Yields each file's label and lines, or None after reporting a file that cannot be read.
    for name in names:
        label = _label(name)
        try:
            with _opened(name) as stream:
                yield label, _lines(stream, label, streams.err)
        except UsageError as error:
            print(f"repeat-guard: {error}", file=streams.err)
            yield label, None


def replay_files(names: Iterable[str], config: GuardConfig, fmt: Format, streams: Streams) -> int:
    """Replay each named transcript (``-`` is stdin) and write its report.

    Returns the exit status: 0, 3 when any input line got a diagnostic, 2 when a file could not
    be read (the other files are still replayed).
    """
    status = EXIT_OK
    for label, lines in _each_file(names, streams):
        if lines is None:
            status = worst(status, EXIT_USAGE)
            continue
        items = replay_transcript(lines, config, file=label)
        status = worst(status, _report_file(items, fmt, streams))
    return status


def replay_demo(config: GuardConfig, fmt: Format, streams: Streams) -> int:
    """Replay the looping transcript shipped with the package and write its report."""
    source = resources.files(__package__).joinpath("data", DEMO_NAME)
    with source.open("rb") as stream:
        items = replay_transcript(stream, config, file=DEMO_NAME)
        return _report_file(items, fmt, streams)


def _check_file(
    items: Iterable[ReplayReminder | Diagnostic | FileSummary], streams: Streams
) -> int:
    status = EXIT_OK
    computed: list[ReplayReminder] = []
    for item in items:
        match item:
            case ReplayReminder():
                computed.append(item)
            case Diagnostic():
                status = _print_diagnostic(item, streams)
            case FileSummary():
                differences = check_lines(item, computed)
                if differences:
                    print(f"{item.file}: reminders differ from the recorded ones", file=streams.out)
                    print("\n".join(differences), file=streams.out)
                    status = worst(status, EXIT_CHECK_MISMATCH)
                else:
                    count = _plural(len(computed), "reminder")
                    print(f"{item.file}: ok, {count} as recorded", file=streams.out)
            case _:
                assert_never(item)
    return status


def check_files(names: Iterable[str], config: GuardConfig, streams: Streams) -> int:
    """Compare the reminders recorded in each annotated transcript with those ``config``
    computes, printing the differences.

    Returns 1 when any file differs, 3 when an input line got a diagnostic, 2 when a file could
    not be read, otherwise 0 (the most severe applies).
    """
    status = EXIT_OK
    for label, lines in _each_file(names, streams):
        if lines is None:
            status = worst(status, EXIT_USAGE)
            continue
        status = worst(status, _check_file(replay_transcript(lines, config, file=label), streams))
    return status


def _same_file(source: str, target: str) -> bool:
    try:
        return os.path.samefile(source, target)
    except OSError:
        return False


def _write_annotated(
    items: Iterable[bytes | Diagnostic | FileSummary], target: BinaryIO, streams: Streams
) -> int:
    status = EXIT_OK
    for item in items:
        match item:
            case bytes():
                target.write(item)
            case Diagnostic():
                status = _print_diagnostic(item, streams)
            case FileSummary():
                written = _plural(item.reminders, "reminder")
                print(f"{item.file}: {written} written into the transcript", file=streams.err)
            case _:
                assert_never(item)
    return status


def _new_file_mode(target: str) -> int:
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def annotate_file(source: str, target: str, config: GuardConfig, streams: Streams) -> int:
    """Write the transcript ``source`` to ``target`` with every reminder injected at its point.

    ``target`` ``-`` is stdout; any other target is replaced atomically (a temporary file in
    its directory, renamed over it once complete), so a failed run leaves it untouched. Returns
    0, or 3 when an input line got a diagnostic. Raises ``UsageError`` when ``source`` cannot
    be read, ``target`` cannot be written, or both name the same file.
    """
    if source != "-" and target != "-" and _same_file(source, target):
        raise UsageError(f"--annotate {target} would overwrite its own input; choose another file")
    label = _label(source)
    with _opened(source) as stream:
        items = annotate_transcript(_lines(stream, label, streams.err), config, file=label)
        if target == "-":
            status = _write_annotated(items, sys.stdout.buffer, streams)
            sys.stdout.buffer.flush()
            return status
        return _annotate_atomically(items, target, streams)


def _annotate_atomically(
    items: Iterable[bytes | Diagnostic | FileSummary], target: str, streams: Streams
) -> int:
    directory = os.path.dirname(os.path.abspath(target))
    try:
        handle, temporary = tempfile.mkstemp(
            dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp"
        )
    except OSError as error:
        raise UsageError(f"cannot write {target}: {error.strerror}") from error
    try:
        with os.fdopen(handle, "wb") as stream:
            status = _write_annotated(items, stream, streams)
        os.chmod(temporary, _new_file_mode(target))
        os.replace(temporary, target)
    except OSError as error:
        os.unlink(temporary)
        raise UsageError(f"cannot write {target}: {error.strerror}") from error
    except BaseException:
        os.unlink(temporary)
        raise
    return status
