"""The ``repeat-guard`` command line: argument parsing and the one place errors become statuses.

Every subcommand builds its configuration before touching its input, so a bad configuration
exits 2 without reading a byte of it.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from repeat_guard_hookcall import silence

from ._audit import AUDIT_EPILOG, add_audit_arguments
from ._config import CONFIG_HELP, add_override_arguments, build_config
from ._errors import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    UsageError,
    silence_stdout,
)
from ._hooks import HOOK_COMMANDS, HookHelpFormatter, add_hook_commands, run_hook_command
from ._resident import add_daemon_command, run_daemon_command
from ._streams import Streams
from ._subcommands import DeferredParser, add_command

if TYPE_CHECKING:
    from repeat_guard import GuardConfig

    from ._subcommands import Commands

__all__ = ["build_parser", "run_command_line"]

_REPLAY_EPILOG = f"""\
  A directory is walked for the files some format recognises; each other file (no reader
  recognises it, not a regular file, gone before its turn) is named on stderr as skipped,
  exit status unchanged; a folder in it that cannot be listed (unreadable) is reported, and
  the rest is still replayed. A gzip, bzip2 or xz
  file (told by its first bytes) is read decompressed.

exit status:
  0  every file replayed (or, with --check, matched its recorded reminders)
  1  --check: some file's recorded reminders differ from the computed ones (only then)
  2  usage error, invalid configuration (before any input is read), unreadable file or
     folder, a file whose format cannot be told, an output that cannot be written (a full
     disk, a closed stdout)
  3  some input line was malformed: each such line gets a diagnostic on stderr as
     FILE:LINE: message, and the rest of the input is still replayed; notes
     (FILE:LINE: note: message) do not change the status
  when several apply, the highest in the order 2, 1, 3 wins. A reader that closes stdout
  early (| head) ends the command quietly with 141, as SIGPIPE would; Ctrl-C with 130. 70
  means a bug in the command (a traceback is printed): never 1.

output:
  text  per file, per session and its agents, each line where the guard fires (tool ×
        count, form) and each call that never finished, then calls, tracked calls, wasted
        calls (repeats beyond the first of each run), denied calls, reminders, the longest
        run and unfinished calls; then the file's totals and its diagnostics and notes
  json  one {{"type": "reminder", ...}} object per reminder (file, line, session, agent,
        tool, count, form, summary, text), one {{"type": "unfinished", ...}} per call that
        never finished, then one {{"type": "summary", ...}} per file
  A progress bar is drawn on stderr for inputs of 8 MiB or more when stderr is a terminal.

{CONFIG_HELP}"""

_SERVE_EPILOG = f"""\
protocol: one JSON event per input line, exactly one JSON answer per line, in order, flushed.
  {{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {{...}}, "denied": false}}
      (agent may be null: a call outside any agent, never counted; denied is optional, and
      result, what the tool returned, for progress = "result")
  {{"type": "tool_result", "agent": "a", "tool": "grep", "arguments": {{...}}, "result": ...}}
      the result of the agent's last call, reported after it (progress = "result" only)
  {{"type": "prompt", "agent": "a"}}     a user's message: a's chain starts over
  {{"type": "dispose", "agent": "a"}}    a is gone: its chain is dropped
  {{"type": "admit", "agent": "a", "tool": "grep", "arguments": {{...}}}}
      before a call runs: would it pass the configured hard limits (denyAt, budgets)?
      Changes nothing; report the call afterwards ("denied": true if you refused it).
  {{"type": "attempt", "agent": "a", "tool": "grep", "arguments": {{...}}}}
      admit and report in one line: the call is counted at once (denied when refused)
answers:
  {{"reminders": [{{"agent", "tool", "count", "form", "summary", "text"}}, ...]}}
      (an empty list when nothing fires)
  {{"admit": true}}, or {{"admit": false, "reason": "..."}}   to an admit line
  {{"admit": ..., "reminders": [...]}} (and "reason" when refused)   to an attempt line
  {{"error": "line N: what was wrong"}}  for a line that is not an event (invalid JSON, not
      UTF-8, blank, unknown type, missing, unknown or ill-typed fields); serving goes on.

state: in memory, or with --state [PATH] in the hook's SQLite store (without PATH, where a
  hook keeps it: $REPEAT_GUARD_STATE, else $XDG_STATE_HOME/repeat-guard/state.sqlite3), one
  transaction per line, each agent stored as its own session, so a chain outlives the
  sidecar; without --config
  the configuration is then the nearest .repeat-guard.toml from the working directory, as a
  hook finds it. A store that cannot be used answers the line with an error; a corrupt one is
  set aside.

exit status: 0 at end of input; 2 for a usage error, an invalid configuration, a closed
stdin or an output that cannot be written; 141 when the reader of the answers goes away, as
SIGPIPE would; 130 after Ctrl-C.

{CONFIG_HELP}"""

_CHECK_CONFIG_EPILOG = f"""\
prints the normalized configuration as JSON (the keys below, every default filled in).
exit status: 0 valid; 2 unreadable file or invalid configuration (the reason is printed).

{CONFIG_HELP}"""


def _audit_places() -> str:
    """Where ``audit`` with no path looks, as the transcripts' registry lists the places."""
    from repeat_guard_transcripts import places  # noqa: PLC0415  # see _replay_epilog

    found = "".join(f"  {place}\n" for place in places())
    return f"\nplaces (with no PATH, each of these that exists is audited):\n{found}"


def _replay_epilog() -> str:
    """The replay's epilog: the formats, one line each, as the transcripts' registry lists
    them, then the rest."""
    from repeat_guard_transcripts import READERS  # noqa: PLC0415  # not for a hook process

    width = max(map(len, READERS)) + 2
    formats = "".join(
        f"  {name:<{width}}{reader.description}\n" for name, reader in READERS.items()
    )
    head = "formats (sniffed from the first bytes of each file unless --from names one):\n"
    return head + formats + _REPLAY_EPILOG


def _add_config_file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", metavar="FILE", help="JSON or TOML file with the configuration keys below"
    )


def _add_format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="report as text (default) or as JSON lines",
    )


def _fill_replay(replay: argparse.ArgumentParser) -> None:
    from repeat_guard_transcripts import READERS  # noqa: PLC0415  # see _replay_epilog

    replay.epilog = _replay_epilog()
    replay.add_argument(
        "files", nargs="+", metavar="FILE", help="transcript or directory; - reads stdin"
    )
    replay.add_argument(
        "--from",
        dest="source_format",
        choices=tuple(READERS),
        help="read every FILE as this format instead of sniffing it",
    )
    _add_format_argument(replay)
    mode = replay.add_mutually_exclusive_group()
    mode.add_argument(
        "--annotate",
        metavar="OUT",
        help="write the one FILE (acp) to OUT (- for stdout) with each reminder injected as a "
        "session/update user_message_chunk; OUT must be a regular file or a new path, is "
        "replaced atomically, must not be FILE or the --config file, and is compressed when "
        "its name ends in .gz, .bz2 or .xz",
    )
    mode.add_argument(
        "--check",
        action="store_true",
        help="compare the reminders recorded in annotated FILEs with those the current "
        "configuration computes; exit 1 and print the differences when they differ",
    )
    _add_config_file_argument(replay)
    add_override_arguments(replay)


def _fill_demo(demo: argparse.ArgumentParser) -> None:
    demo.epilog = _replay_epilog()
    _add_format_argument(demo)
    _add_config_file_argument(demo)
    add_override_arguments(demo)


def _fill_audit(audit: argparse.ArgumentParser) -> None:
    audit.epilog = f"{AUDIT_EPILOG}{_audit_places()}\n{CONFIG_HELP}"
    add_audit_arguments(audit)
    _add_config_file_argument(audit)
    add_override_arguments(audit)


def _fill_serve(served: argparse.ArgumentParser) -> None:
    served.epilog = _SERVE_EPILOG
    _add_config_file_argument(served)
    served.add_argument(
        "--state",
        metavar="PATH",
        nargs="?",
        const="",
        help="keep the agents' chains in this SQLite file (the hook's store; without PATH, "
        "the hook's default), not in memory",
    )
    add_override_arguments(served)


def _fill_check_config(check: argparse.ArgumentParser) -> None:
    check.epilog = _CHECK_CONFIG_EPILOG
    check.add_argument("file", metavar="FILE", help="JSON or TOML configuration file")
    add_override_arguments(check)


def _add_commands(commands: Commands) -> None:
    add_command(
        commands,
        "replay",
        "Replay recorded agent transcripts (in the formats below) and report where the guard "
        "fires.",
        _fill_replay,
    )
    add_command(
        commands,
        "demo",
        "Replay the looping transcript shipped with the package and print the report.",
        _fill_demo,
    )
    add_command(
        commands,
        "audit",
        "Read every transcript under the given paths and report where agents looped and what "
        "it cost.",
        _fill_audit,
    )
    add_command(
        commands, "serve", "Run the guard as a JSONL sidecar on stdin and stdout.", _fill_serve
    )
    add_command(
        commands,
        "check-config",
        "Validate a configuration file and print it normalized.",
        _fill_check_config,
    )


_MAIN_EPILOG = """\
examples:
  repeat-guard install claude-code          hook into this project's Claude Code settings
  repeat-guard audit                        where the agents on this machine looped, and the cost
  repeat-guard replay session.jsonl         where the guard fires in one transcript
  repeat-guard check-config guard.toml      validate a configuration

Run `repeat-guard COMMAND --help` for a command's flags, configuration keys and exit statuses.
"""


DISTRIBUTION = "repeat-guard-cli"
"""The distribution this command is installed from, whose version ``--version`` prints."""


class _Version(argparse.Action):
    # argparse's own version action takes the text when the parser is built; this one reads the
    # installed metadata only when asked, so no other command line pays for importlib.metadata.
    def __init__(self, option_strings: Sequence[str], dest: str, help: str) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from importlib import metadata  # noqa: PLC0415  # see above

        print(f"repeat-guard {metadata.version(DISTRIBUTION)}")
        parser.exit()


def build_parser(*, hooks_only: bool = False) -> argparse.ArgumentParser:
    """Return the parser for every subcommand (only ``hook``, ``install`` and ``uninstall``
    when ``hooks_only``: a hook process runs once per tool call and need not build the rest).
    Each subcommand's parser gets its arguments when it is used (``DeferredParser``).
    """
    parser = argparse.ArgumentParser(
        prog="repeat-guard",
        description="Notice an agent repeating the same tool call: guard Claude Code and Codex "
        "as their hook, replay or audit the transcripts agents leave, check a configuration, "
        "or run the guard as a JSONL sidecar.",
        epilog=_MAIN_EPILOG,
        formatter_class=HookHelpFormatter if hooks_only else argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=DeferredParser
    )
    if hooks_only:
        add_hook_commands(commands)
        return parser
    _add_commands(commands)
    add_hook_commands(commands)
    add_daemon_command(commands)
    return parser


def _run_audit(args: argparse.Namespace, streams: Streams) -> int:
    from ._audit import audit_command  # noqa: PLC0415

    return audit_command(args, build_config(args.config, args), streams.out, streams.err)


# Commands that load their own modules, none of the replay's.
_SEPARATE: dict[str, Callable[[argparse.Namespace, Streams], int]] = {
    **dict.fromkeys(HOOK_COMMANDS, run_hook_command),
    "audit": _run_audit,
    "daemon": run_daemon_command,
}


def _serve(args: argparse.Namespace) -> int:
    from ._serve import StoredState, serve  # noqa: PLC0415  # lazily: see _run

    path: str | None = args.config
    if args.state is None:
        config = build_config(path, args)
        state = None
    else:
        from repeat_guard_hookcall import resolve_state  # noqa: PLC0415  # with a store only
        from repeat_guard_hooks import find_config_file  # noqa: PLC0415  # with a store only

        if path is None:
            path = find_config_file(os.getcwd())
        config = build_config(path, args)
        home = os.path.expanduser("~")
        state = StoredState(resolve_state(args.state or None, os.environ, home), config)
    if sys.stdin is None:
        raise UsageError("cannot read <stdin>: it is closed")
    try:
        return serve(config, sys.stdin.buffer, sys.stdout.buffer, state)
    finally:
        if state is not None:
            state.close()


def _run(args: argparse.Namespace, streams: Streams) -> int:
    # Each command imports what it needs here: a hook process must not pay for the transcript
    # readers, nor serving for the replay.
    command: str = args.command
    separate = _SEPARATE.get(command)
    if separate is not None:
        return separate(args, streams)
    if command == "check-config":
        config = build_config(args.file, args)
        print(json.dumps(config.to_mapping(), indent=2), file=streams.out)
        return 0
    if command == "serve":
        return _serve(args)
    config = build_config(args.config, args)
    from repeat_guard_transcripts import collector_paused  # noqa: PLC0415  # lazily: see above

    # Each file is read to its end and nothing here makes reference cycles: see collector_paused.
    with collector_paused():
        return _replay_command(args, config, streams)


def _replay_command(args: argparse.Namespace, config: GuardConfig, streams: Streams) -> int:
    from ._replay import (  # noqa: PLC0415  # lazily: see _run
        annotate_file,
        check_files,
        replay_demo,
        replay_files,
    )

    command: str = args.command
    if command == "demo":
        return replay_demo(config, args.format, streams)
    forced: str | None = args.source_format
    if args.check:
        return check_files(args.files, config, streams, forced)
    if args.annotate is None:
        return replay_files(args.files, config, args.format, streams, forced)
    if len(args.files) != 1:
        raise UsageError("--annotate takes exactly one FILE")
    return annotate_file(args.files[0], args.annotate, config, streams, forced, args.config)


def run_command_line(arguments: Sequence[str]) -> int:
    """Parse ``arguments`` and run the command they name (``main`` sends every command line
    here but a plain ``hook``); return the exit status documented in each ``--help``."""
    hook = arguments[:1] == ["hook"]
    parser = build_parser(hooks_only=hook)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:
        # argparse exits 0 after --help and 2 after a usage error; return it instead.
        status = exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
        return _hook_usage_status(arguments) if hook and status == EXIT_USAGE else status
    return _run_to_status(args)


# The hook's options that take a value (argparse also reads a prefix of one, and ``--opt=value``).
_HOOK_VALUE_OPTIONS = ("--state", "--config", "--expire-days", "--preset")


def _hook_usage_status(arguments: Sequence[str]) -> int:
    # A hook's bad command line must not block the call (Claude Code takes 2 from a PreToolUse
    # hook for "block it"; Copilot, any status but 0): it gets the named host's status for a
    # bad configuration, an error the host shows without blocking. The host is the first word
    # after ``hook`` that is no option or option's value; where that names no host (missing,
    # misspelt), the status most hosts show without blocking, EXIT_BAD_CONFIG.
    from repeat_guard_hooks import DIALECTS, EXIT_BAD_CONFIG  # noqa: PLC0415  # only on this error

    words = iter(arguments[1:])
    for word in words:
        if word == "--":  # what follows is positional
            word = next(words, "")  # noqa: PLW2901
        elif word.startswith("-") and word != "-":
            if "=" not in word and any(o.startswith(word) for o in _HOOK_VALUE_OPTIONS):
                next(words, None)
            continue
        host = DIALECTS.get(word)
        return EXIT_BAD_CONFIG if host is None else host.error_status
    return EXIT_BAD_CONFIG


def _run_to_status(args: argparse.Namespace) -> int:
    """Run the parsed command; every way it can end becomes an exit status."""
    hook = args.command == "hook"  # install and uninstall report their output's failures
    streams = Streams(sys.stdout, sys.stderr) if hook else _output_streams()
    if streams is None:
        return EXIT_USAGE
    try:
        return _run(args, streams)
    except UsageError as error:
        _say(f"repeat-guard: error: {error}", sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (``repeat-guard replay ... | head``): stop quietly, as a filter
        # killed by SIGPIPE would.
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except (KeyboardInterrupt, OSError) as error:
        if hook:
            raise  # hooks keep their own fail-open rules
        return _stopped(error, streams)
    except Exception:
        if hook:
            raise  # hooks keep their own fail-open rules
        # A bug, not a verdict: it must never exit 1 (a --check mismatch) as Python would.
        import traceback  # noqa: PLC0415  # only now: a hook process must not pay for it

        traceback.print_exc()
        print(
            f"repeat-guard: internal error (exit {EXIT_INTERNAL}); please report it",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _output_streams() -> Streams | None:
    """stdout and stderr, set to write what their encoding cannot as backslash escapes (as
    ``safe`` does for UTF-8: PYTHONIOENCODING=ascii or a Latin-1 locale must not crash the
    report); ``None``, after saying why when it can, when either is closed."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    if sys.stdout is None or sys.stderr is None:
        if sys.stderr is not None:
            print("repeat-guard: error: cannot write the output: stdout is closed", file=sys.stderr)
        return None
    return Streams(sys.stdout, sys.stderr)


def _stopped(error: KeyboardInterrupt | OSError, streams: Streams) -> int:
    if isinstance(error, KeyboardInterrupt):
        # Ctrl-C: stop without a traceback, with the status a shell gives an interrupted job.
        return EXIT_INTERRUPTED
    # Readers turn read errors into diagnostics and opening errors into usage errors, so what
    # reaches here is the output failing (a full disk, /dev/full, an I/O error).
    _say(f"repeat-guard: error: cannot write the output: {error.strerror}", streams.err)
    silence_stdout()
    return EXIT_USAGE


def _say(message: str, err: TextIO) -> None:
    """Tell ``message`` on ``err``; when stderr itself cannot be written (a full disk), say
    nothing more there, so the status stays the command's own instead of Python's."""
    try:
        print(message, file=err, flush=True)
    except OSError:
        silence(err)
