"""The ``audit`` command: every transcript under the given paths, one report of the waste.

Argument parsing and output only; the audit package lists, reads, folds and merges. Every
command builds the parser, so this module imports only what the parser needs; the rest (the
core, the audit package, the progress bar, ``tempfile``) is imported when the command runs, so
a hook process never pays for it, and Dask is imported only for ``--engine dask``.
"""

from __future__ import annotations

import argparse
import os
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, TextIO

from ._errors import EXIT_DIAGNOSTICS, EXIT_OK, UsageError

if TYPE_CHECKING:
    from repeat_guard import GuardConfig
    from repeat_guard_audit import AuditSettings, FileAudit, FileJob, SessionAudit, Waste
    from repeat_guard_transcripts import Diagnostic

    from ._progress import FilesProgress, TextSink

__all__ = ["AUDIT_EPILOG", "add_audit_arguments", "audit_command"]

AUDIT_EPILOG = """\
what it reports, across every file read:
  calls, tracked calls, wasted calls (repeats beyond the first of each run of identical
  calls) and their share of all calls; the reminders the guard would have given, by form;
  the longest runs with file, session, line and the repeated call; the tools, sessions and
  projects with the most waste; and, where transcripts record token usage (Claude Code,
  Codex), the tokens of the turns that made wasted calls, counted once per turn: their
  output tokens ("wasted_tokens" in JSON and CSV) and their input tokens, every token of
  the context read for the turn, cached or not ("wasted_input_tokens"), over
  "wasted_turns" turns.

output (stdout):
  text  a summary that fits 100 columns (default)
  json  one {"type": "session", "file", "format", "session", "project", "calls", "wasted",
        "reminders", "reminders_by_form", ...} line per session as files finish, in listing
        order, then one {"type": "totals", "files", "sessions", "calls", "wasted",
        "reminders", "reminders_by_form": {"gentle": N, "detailed": N} (and "cycle",
        "budget" when given), "days", "tools", "projects", "worst_runs", "worst_sessions",
        "not_transcripts", "not_transcript_files", "held_no_call", "held_no_call_files",
        "since", "written_before_since", "written_before_since_files", "files_found",
        "diagnostics", "first_diagnostics", ...} line; a run lists at most 50 of its lines,
        always its first and its last; "first_diagnostics" lists the first 100 diagnostics
        stderr has ({"file", "line", "message", "severity"}, notes left out), "diagnostics"
        counts every one
  csv   a header, one row per session, then one "totals" row; a column for every reminder
        form (gentle, detailed, cycle, budget), given or not
  --html FILE also writes a self-contained page (no network, no script): the totals, every
  file found accounted for as the JSON totals do (counts, and collapsed, the first 100 files
  that held no tool call, that are not transcripts and that --since left out, and the first
  100 diagnostics as stderr has them), charts of waste per day and per tool, the longest
  runs, each expandable to its repeated calls.
  FILE is replaced atomically; it must be a regular file or a new path, and must not be an
  input, the --config file or a transcript in a folder being audited (checked first).
  A file that held no tool call and no diagnostic is counted ("N held no tool call" on the
  summary's first line) and named (the summary's first 10, the JSON totals' first 100), not
  noted on stderr as the replay does. A file last written before --since DATE is not read,
  and counted and named too ("N files found, M last written before DATE (--since), left
  out:"; "written_before_since" in the JSON totals).
  Diagnostics go to stderr as FILE:LINE: message (the first 100 are listed in the JSON
  totals and on the page too); a progress bar (files, time left, bytes,
  rate, as many as the terminal's width holds) is drawn on stderr when it is a terminal, below
  the diagnostics.

engines: every engine gives the same output, line for line.
  processes  a pool of --jobs processes (default: the cores; --jobs 1 runs in this process)
  dask       the same work on Dask (pip install 'repeat-guard-cli[dask]'): --scheduler is a
             scheduler's address (tcp://HOST:8786), whose workers must see the same paths,
             or one of Dask's local schedulers: sync, threads, processes (the default)

exit status: 0 done; 2 usage error or invalid configuration (before any input is read), or
the Dask scheduler cannot be reached; 3 some file, line or folder (one that cannot be
listed) got a diagnostic (the rest was still audited); a walked file that is not a
transcript, or one that held no tool call, is counted and named, not a diagnostic; 130,
143 or 129 after SIGINT (Ctrl-C), SIGTERM or SIGHUP, the worker processes stopped first.
"""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text!r}")
    return value


# More processes than this would exhaust what a system lets one user start long before they
# paid off: the pool never starts more than it has batches for anyway.
MAX_JOBS = 1024


def _jobs(text: str) -> int:
    value = _positive(text)
    if value > MAX_JOBS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_JOBS} jobs, got {text!r}")
    return value


def _day(text: str) -> str:
    import datetime

    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def add_audit_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the audit command's own arguments to ``parser``."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="transcript file or directory (walked: files no format recognises, FIFOs, sockets "
        "and files gone before their turn are counted "
        "and named in the totals, not diagnosed; a named one gets a diagnostic); default: "
        "each of the places below that exists",
    )
    parser.add_argument(
        "--format", choices=("text", "json", "csv"), default="text", help="stdout report"
    )
    parser.add_argument("--html", metavar="FILE", help="also write the report as an HTML page")
    parser.add_argument(
        "--top", type=_positive, default=10, metavar="N", help="rows per ranking (default 10)"
    )
    parser.add_argument(
        "--since",
        type=_day,
        metavar="DATE",
        help="count only calls made on or after DATE (YYYY-MM-DD, UTC); files last written "
        "before it are not read (counted and named in every report), and calls without a date "
        "count when their file is read",
    )
    parser.add_argument(
        "--engine", choices=("processes", "dask"), default="processes", help="how to fan out"
    )
    parser.add_argument(
        "--jobs",
        type=_jobs,
        metavar="N",
        help=f"processes or Dask local workers, at most {MAX_JOBS} (never more than the batches "
        "of files to give them)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler address, or sync/threads/processes (needs --engine dask)",
    )


def _check_page_target(target: str, paths: list[str], config: str | None) -> None:
    """Refuse, before any work is done, a page that could not be written or would replace
    what the audit reads (``check_output``): an audit can run for long, and would be lost."""
    if target == "-":
        # stdout carries the report: a page there would be mixed with it.
        raise UsageError(
            "--html needs a file name: stdout carries the report (./- for a file named -)"
        )
    from ._targets import check_output

    check_output("--html", target, paths, config)


def write_atomically(target: str, text: str) -> None:
    """Replace ``target`` with ``text`` (UTF-8), atomically; ``UsageError`` when it cannot."""
    from repeat_guard_files import TargetError
    from repeat_guard_files import write_atomically as write

    data = text.encode("utf-8")
    try:
        write(target, lambda stream: stream.write(data))
    except TargetError as error:
        raise UsageError(str(error)) from error


def _paths(given: list[str]) -> list[str]:
    if given:
        return given
    from repeat_guard_audit import DEFAULT_PATHS

    found = [path for path in map(os.path.expanduser, DEFAULT_PATHS) if os.path.exists(path)]
    if not found:
        raise UsageError(f"no PATH given and none of {', '.join(DEFAULT_PATHS)} exists")
    return found


def _counted(jobs: Iterable[FileJob]) -> tuple[int, int]:
    files = size = 0
    for job in jobs:
        files += 1
        size += job.size
    return files, size


def _bar(err: TextIO, paths: list[str]) -> FilesProgress | None:
    """A bar on ``err`` when it is a terminal, else ``None``. The paths are walked up front: the
    bar needs the totals, which take in every file found, so a file that turns out not to be a
    transcript advances it too."""
    if not err.isatty():
        return None
    from repeat_guard_audit import list_files

    from ._progress import FilesProgress

    files, size = _counted(list_files(paths))
    return FilesProgress(err, "audit", files, size)


def _above(stream: TextIO, bar: FilesProgress | None) -> TextSink:
    """``stream``, or with a bar on the same terminal, ``stream`` writing above the bar."""
    if bar is None or not stream.isatty():
        return stream
    from ._progress import TextAboveBar

    return TextAboveBar(stream, bar)


def _tracked(
    jobs: Iterable[FileJob],
    run: Callable[[Iterable[FileJob]], Iterable[FileAudit]],
    bar: FilesProgress | None,
) -> Generator[FileAudit, None, None]:
    """Yield the results ``run`` gives for ``jobs``, advancing ``bar``; the bar is erased when
    they run out, before the totals are written."""
    if bar is None:
        yield from run(jobs)
        return
    # A result per job, in order: the sizes of the jobs in flight wait here for theirs.
    sizes: deque[int] = deque()

    def listed() -> Iterator[FileJob]:
        for job in jobs:
            sizes.append(job.size)
            yield job

    try:
        for result in run(listed()):
            bar.advance(1, sizes.popleft())
            yield result
    finally:
        bar.finish()


def audit_command(args: argparse.Namespace, config: GuardConfig, out: TextIO, err: TextIO) -> int:
    """Run the audit ``args`` describe and write its report; return the exit status."""
    from repeat_guard_audit import AuditSettings, EngineError, audit, list_files

    if args.scheduler is not None and args.engine != "dask":
        # Only Dask has schedulers: running on the pool instead would hide the mistake.
        raise UsageError("--scheduler needs --engine dask")
    paths = _paths(args.paths)
    if args.html is not None:
        _check_page_target(args.html, paths, args.config)
    settings = AuditSettings(config, args.since, args.top)

    def run(jobs: Iterable[FileJob]) -> Iterable[FileAudit]:
        return audit(jobs, settings, args.engine, args.jobs, args.scheduler)

    # SIGTERM and SIGHUP raise, as Ctrl-C does, and exit 128 + the signal: the engines stop
    # their workers on the way out (the signals' default would end this process alone and
    # leave them waiting forever). The one place this is decided is the atomic writer's.
    from repeat_guard_files import termination_raises

    with termination_raises():
        bar = _bar(err, paths)
        tracked = _tracked(list_files(paths), run, bar)
        problems: list[Diagnostic] = []  # the first diagnostics, for the JSON and the page
        try:
            streams = (_above(out, bar), _above(err, bar))
            total = _report(tracked, settings, args.format, *streams, problems)
        except EngineError as error:
            raise UsageError(str(error)) from error
        finally:
            # Erase the bar now, not when the failure's traceback lets the generator go:
            # whatever is told next (a usage error, a bug's traceback) starts a line of its own.
            tracked.close()
        if args.html is not None:
            from repeat_guard_audit import html_page

            from ._report import diagnostic_line

            listed = [diagnostic_line(problem) for problem in problems]
            page = html_page(total, args.top, problems=listed, since=args.since)
            write_atomically(args.html, page)
    return EXIT_DIAGNOSTICS if total.diagnostics else EXIT_OK


LISTED_DIAGNOSTICS = 100
"""Diagnostics the JSON totals and the page list, the first printed on stderr, notes left out
(as many as the JSON totals name files of each kind); the count covers the rest."""


def _print_problems(result: FileAudit, err: TextSink, kept: list[Diagnostic]) -> None:
    """Print ``result``'s diagnostics and notes on ``err``; keep the diagnostics in ``kept``
    until it holds ``LISTED_DIAGNOSTICS``."""
    from ._report import diagnostic_line, safe

    for problem in result.problems:
        print(diagnostic_line(problem), file=err)
        if problem.severity == "error" and len(kept) < LISTED_DIAGNOSTICS:
            kept.append(problem)
    shown = sum(problem.severity == "error" for problem in result.problems)
    hidden = result.diagnostics - shown
    if hidden > 0:
        print(safe(f"{result.file}: {hidden} more diagnostics not shown"), file=err)


def _written(
    results: Iterable[FileAudit],
    session_line: Callable[[SessionAudit, str], str] | None,
    out: TextSink,
    err: TextSink,
    kept: list[Diagnostic],
) -> Iterator[FileAudit]:
    """Yield ``results``, each once its diagnostics are on ``err`` (the first ones kept in
    ``kept``) and, with ``session_line``, its sessions' lines on ``out``."""
    for result in results:
        _print_problems(result, err, kept)
        if session_line is not None:
            for session in result.sessions:
                print(session_line(session, result.format or ""), file=out)
        yield result


def _report(
    results: Iterable[FileAudit],
    settings: AuditSettings,
    fmt: str,
    out: TextSink,
    err: TextSink,
    kept: list[Diagnostic],
) -> Waste:
    """Write each session as its file finishes (JSON, CSV), the diagnostics to ``err`` (the
    first ones kept in ``kept``), then the totals; return the totals."""
    from repeat_guard_audit import (
        csv_header,
        csv_session_row,
        csv_totals_row,
        json_session_line,
        json_totals_line,
        text_summary,
        total,
    )

    session_line = {"json": json_session_line, "csv": csv_session_row}.get(fmt)
    if fmt == "csv":
        print(csv_header(), file=out)
    # One pass in plain counters over every file's sessions: folding merge_waste over the
    # files' wastes, a persistent total a file, cost twice as much a file.
    totals = total(_written(results, session_line, out, err, kept), settings.keep)
    if fmt == "json":
        print(json_totals_line(totals, settings.since, kept), file=out)
    elif fmt == "csv":
        print(csv_totals_row(totals), file=out)
    else:
        for line in text_summary(totals, settings.keep, settings.since):
            print(line, file=out)
    return totals
