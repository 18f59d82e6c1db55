"""The ``replay`` and ``demo`` commands: transcripts of any known format through one replay.

Each input is opened safely (``open_input``, as the audit opens its files: no devices, no
hanging on a FIFO), its format is sniffed from its first bytes unless ``--from`` names it,
and its lines are read with a bound on their length, so memory stays flat however large the
transcript. Only the current
file's reminders and unfinished calls are kept, for the text report.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import BinaryIO, Literal, assert_never

from repeat_guard import GuardConfig
from repeat_guard_files import TargetError, write_atomically
from repeat_guard_transcripts import (
    READERS,
    Annotating,
    Diagnostic,
    FileSummary,
    Fired,
    Input,
    Item,
    LineFault,
    Outcome,
    PassedOver,
    Reader,
    Recorded,
    Refused,
    Unfinished,
    Unlisted,
    annotate,
    bounded_lines,
    compressing,
    compression_for,
    counted,
    open_input,
    read_items,
    replay,
    walk,
)

from ._errors import (
    EXIT_CHECK_MISMATCH,
    EXIT_DIAGNOSTICS,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    worst,
)
from ._progress import input_size, track_progress
from ._report import (
    check_lines,
    diagnostic_line,
    noted_line,
    reminder_record,
    safe,
    summary_record,
    text_report,
    unfinished_record,
)
from ._streams import Streams
from ._targets import check_output

__all__ = ["Streams", "annotate_file", "check_files", "replay_demo", "replay_files"]

Format = Literal["text", "json"]
DEMO_NAME = "demo.jsonl"


@dataclass(slots=True)
class _Input:
    """One transcript ready to read: its label, its reader, its lines (counted) and its
    path."""

    label: str
    reader: Reader
    source: Iterable[bytes]
    path: str = "-"
    count: int = 0
    faults: list[int] = field(default_factory=list)

    def items(self) -> Iterator[Item]:
        """Its items, read by its reader (``read_items``)."""
        return read_items(self.reader, self.lines(), self.label, path=self.path)

    def lines(self) -> Iterator[bytes]:
        for line in self.source:
            self.count += 1
            if isinstance(line, LineFault):
                self.faults.append(self.count)
            yield line


def _label(name: str) -> str:
    return "<stdin>" if name == "-" else name


def _tell(line: str, streams: Streams) -> None:
    """Write ``line`` on ``err``, above the progress bar when one is drawn there."""
    streams.bar.clear()
    print(line, file=streams.err)
    streams.err.flush()
    streams.bar.show()


def _emit(line: str, streams: Streams) -> None:
    """Write a report's ``line`` on ``out``, above the progress bar when one is drawn on the
    same terminal."""
    if streams.bar.bar is None or not streams.out.isatty():
        print(line, file=streams.out)
        return
    streams.bar.clear()
    print(line, file=streams.out)
    streams.out.flush()
    streams.bar.show()


def _print_diagnostic(diagnostic: Diagnostic, streams: Streams) -> int:
    streams.out.flush()
    _tell(diagnostic_line(diagnostic), streams)
    return EXIT_DIAGNOSTICS if diagnostic.severity == "error" else EXIT_OK


def _complain(message: str, streams: Streams) -> int:
    _tell(safe(f"repeat-guard: {message}"), streams)
    return EXIT_USAGE


@contextlib.contextmanager
def _input(
    name: str, forced: str | None, streams: Streams, walked: bool = False
) -> Iterator[_Input | int | None]:
    """Open ``name`` (``open_input``) and pick its reader (``forced``, else sniffed); yields
    the input, the status after reporting why it cannot be replayed, or ``None`` for a file a
    walk found that is not read (named on stderr: a folder holds other files too). Raises
    ``UsageError`` when it cannot be opened."""
    label = _label(name)
    # A walked file is always sniffed: only what some reader recognises is replayed.
    named = None if walked else forced
    with open_input(name, walked=walked, format=named, pipes=True) as opened:
        match opened:
            case Input():
                yield _chosen(opened, label, forced, streams)
            case PassedOver():
                _tell(safe(f"repeat-guard: {label}: skipped, {PASSED_OVER[opened.why]}"), streams)
                yield None
            case Refused(stage="head"):
                yield _print_diagnostic(Diagnostic(label, 1, opened.why), streams)
            case _:
                raise UsageError(f"cannot read {label}: {opened.why}")


PASSED_OVER = {
    "not a transcript": "no reader recognises it",
    "not a regular file": "not a regular file",
    "gone": "gone before its turn",
}
"""How the replay names each kind of walked file it does not read."""


def _chosen(opened: Input, label: str, forced: str | None, streams: Streams) -> _Input | int:
    chosen = forced or opened.format
    if chosen is None:
        formats = ", ".join(READERS)
        return _complain(
            f"{label}: cannot tell the transcript format; name it with --from ({formats})",
            streams,
        )
    # A compressed input's bar follows how much of the file has been read, not the lines.
    position = opened.file.tell if opened.compression else None
    lines = track_progress(
        bounded_lines(opened.stream),
        streams.err,
        label,
        input_size(opened.file),
        position=position,
        current=streams.bar,
    )
    return _Input(label, READERS[chosen], lines, opened.path)


def _each_input(
    names: Iterable[str], forced: str | None, streams: Streams
) -> Iterator[_Input | int]:
    """Each input of ``names`` (directories walked), opened once."""
    for found in walk(names):
        if isinstance(found, Unlisted):
            yield _complain(f"cannot list {found.path}: {found.reason}", streams)
            continue
        name, walked = found
        try:
            with _input(name, forced, streams, walked) as opened:
                if opened is not None:
                    yield opened
        except UsageError as error:
            yield _complain(str(error), streams)


class _Noted(dict[str, list[str]]):
    """The text report's firing points and unfinished calls, grouped by session as they come
    (each its ``noted_line``), for the report at the file's end."""

    def add(self, item: Fired | Unfinished) -> None:
        self.setdefault(item.where.session, []).append(noted_line(item))

    def lines(self, session: str) -> list[str]:
        """The lines of ``session``, in input order."""
        return self.get(session, [])


def _report_file(outcomes: Iterable[Outcome], source: _Input, fmt: Format, streams: Streams) -> int:
    noted = _Noted()
    status = EXIT_OK
    for item in outcomes:
        match item:
            case Fired() | Unfinished() if fmt == "text":
                noted.add(item)  # text groups them by session at the file's end
            case Fired():
                _emit(reminder_record(item), streams)
            case Unfinished():
                _emit(unfinished_record(item), streams)
            case Diagnostic():
                status = worst(status, _print_diagnostic(item, streams))
            case Recorded():
                pass
            case FileSummary():
                _print_summary(item, source.count, noted if fmt == "text" else None, streams)
            case _:
                assert_never(item)
    return status


def _print_summary(
    summary: FileSummary, lines: int, noted: _Noted | None, streams: Streams
) -> None:
    if noted is None:
        print(summary_record(summary, lines), file=streams.out)
    else:
        for line in text_report(summary, lines, noted.lines):  # one by one: it may be long
            print(line, file=streams.out)


def replay_files(
    names: Iterable[str],
    config: GuardConfig,
    fmt: Format,
    streams: Streams,
    forced: str | None = None,
) -> int:
    """Replay each named transcript (``-`` is stdin, a directory is walked) and write its
    report; ``forced`` names the format instead of sniffing it.

    Returns the exit status: 0, 3 when any input line got an error diagnostic, 2 when a file
    could not be read or its format not told (the other files are still replayed).
    """
    status = EXIT_OK
    for source in _each_input(names, forced, streams):
        if isinstance(source, int):
            status = worst(status, source)
            continue
        outcomes = replay(source.items(), config, file=source.label)
        status = worst(status, _report_file(outcomes, source, fmt, streams))
    return status


def replay_demo(config: GuardConfig, fmt: Format, streams: Streams) -> int:
    """Replay the looping transcript shipped with the package and write its report."""
    data = resources.files(__package__).joinpath("data", DEMO_NAME)
    with data.open("rb") as stream:
        source = _Input(DEMO_NAME, READERS["acp"], stream)
        return _report_file(replay(source.items(), config, file=DEMO_NAME), source, fmt, streams)


def _check_file(outcomes: Iterable[Outcome], streams: Streams) -> int:
    status = EXIT_OK
    computed: list[Fired] = []
    for item in outcomes:
        if isinstance(item, Fired):
            computed.append(item)
        elif isinstance(item, Diagnostic):
            status = worst(status, _print_diagnostic(item, streams))
        elif isinstance(item, FileSummary):
            differences = check_lines(item, computed)
            if differences:
                print(
                    safe(f"{item.file}: reminders differ from the recorded ones"), file=streams.out
                )
                print("\n".join(differences), file=streams.out)
                status = worst(status, EXIT_CHECK_MISMATCH)
            else:
                count = counted(len(computed), "reminder")
                print(safe(f"{item.file}: ok, {count} as recorded"), file=streams.out)
    return status


def check_files(
    names: Iterable[str], config: GuardConfig, streams: Streams, forced: str | None = None
) -> int:
    """Compare the reminders recorded in each annotated transcript with those ``config``
    computes, printing the differences.

    Returns 1 when any file differs, 3 when an input line got an error diagnostic, 2 when a
    file could not be read, otherwise 0 (the most severe applies).
    """
    status = EXIT_OK
    for source in _each_input(names, forced, streams):
        if isinstance(source, int):
            status = worst(status, source)
            continue
        outcomes = replay(source.items(), config, file=source.label)
        status = worst(status, _check_file(outcomes, streams))
    return status


# -- annotate ------------------------------------------------------------------------------


def _write_outcomes(outcomes: Iterable[Outcome], label: str, streams: Streams) -> int:
    status = EXIT_OK
    written = 0
    for item in outcomes:
        if isinstance(item, Diagnostic):
            status = worst(status, _print_diagnostic(item, streams))
        elif isinstance(item, Fired):
            written += 1
    print(
        safe(f"{label}: {counted(written, 'reminder')} written into the transcript"),
        file=streams.err,
    )
    return status


def annotate_file(
    source: str,
    target: str,
    config: GuardConfig,
    streams: Streams,
    forced: str | None = None,
    config_file: str | None = None,
) -> int:
    """Write the transcript ``source`` to ``target`` with every reminder injected at its point.

    ``target`` ``-`` is stdout; any other target must be a regular file or a new path, and is
    replaced atomically (a temporary file in its directory, renamed over it once complete), so
    a failed or interrupted run leaves it untouched. Returns 0, or 3 when an input line got an
    error diagnostic. Raises ``UsageError`` when ``source`` cannot be read or its format cannot
    carry reminders, ``target`` cannot be written, or names ``source`` or the configuration
    file ``config_file``.
    """
    if target != "-":
        check_output("--annotate", target, [source], config_file)
    with _input(source, forced, streams) as opened:
        if not isinstance(opened, _Input):
            return opened or EXIT_OK  # a status (None is for a file a walk found)
        if not isinstance(opened.reader, Annotating):
            raise UsageError(
                f"{opened.label} is a {opened.reader.name} transcript, which cannot carry "
                "reminders; --annotate reads acp transcripts"
            )
        if target == "-":
            out = sys.stdout.buffer
            status = _annotate_into(opened, config, out.write, streams)
            out.flush()
            return status
        return _annotate_atomically(opened, config, target, streams)


def _annotate_into(
    opened: _Input, config: GuardConfig, write: Callable[[bytes], object], streams: Streams
) -> int:
    outcomes = annotate(opened.lines(), opened.reader, config, file=opened.label, write=write)
    return _write_outcomes(outcomes, opened.label, streams)


def _annotate_atomically(opened: _Input, config: GuardConfig, target: str, streams: Streams) -> int:
    compression = compression_for(target)

    def into(stream: BinaryIO) -> int:
        if compression is None:
            status = _annotate_into(opened, config, stream.write, streams)
        else:
            with compressing(stream, compression) as packed:
                status = _annotate_into(opened, config, packed.write, streams)
        if opened.faults:
            raise UsageError(
                f"{target} not written: line {opened.faults[0]} of {opened.label} could "
                "not be read whole, and the annotated copy would lack it"
            )
        return status

    try:
        return write_atomically(target, into)
    except TargetError as error:
        raise UsageError(str(error)) from error
