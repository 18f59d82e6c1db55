"""The ``hook``, ``install`` and ``uninstall`` commands: repeat-guard inside an agent host.

Only argument parsing lives here; ``repeat_guard_hooks`` does the work and is imported when one
of these commands runs (its table of hosts, ``DIALECTS``, when the command's parser is filled
in, ``DeferredParser``).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from repeat_guard_hookcall import HookArguments, run_hook_process

from ._errors import UsageError
from ._streams import Streams
from ._subcommands import add_command

__all__ = ["HOOK_COMMANDS", "HookHelpFormatter", "add_hook_commands", "run_hook_command"]

if TYPE_CHECKING:
    from repeat_guard import GuardConfig
    from repeat_guard_hooks import Dialect, SettingsFile
    from repeat_guard_hooks.installer import HookFilesChange, HttpInstall, Place, SettingsChange

    from ._subcommands import Commands

HOOK_COMMANDS = frozenset({"hook", "install", "uninstall"})

_HOOK_EPILOG = """\
reads one hook event (a JSON object) on stdin and writes the hook's answer on stdout; an
event over 16 MiB is read through unparsed and the hook stands aside (logged).
events used: PreToolUse (a call attempt: the one hook that also sees calls a permission rule
refuses), UserPromptSubmit (the main agent's chain starts over), SubagentStop (the subagent's
chain is dropped), SessionEnd (every chain of the session is dropped), PostToolUse and
PostToolUseFailure (the call's result, or its error; read only under progress = "result" or
retryWindow: installed for every tool with install --results, else for the preset's polling
tools alone); every other event is answered with nothing. A reminder becomes
hookSpecificOutput.additionalContext of the PreToolUse answer, which both agents put after the
call's result in the next model request.
With a hard limit configured (denyAt, or a spent budget) a call past it is refused before it
runs: the answer adds permissionDecision "deny" and the reason as permissionDecisionReason,
which both agents give the model as the call's result; the refused attempt still counts.

state: --state PATH, else $REPEAT_GUARD_STATE, else $XDG_STATE_HOME/repeat-guard/state.sqlite3
  (~/.local/state when XDG_STATE_HOME is unset): a SQLite file, created 0600, every directory
  made for it 0700, one row per agent (its chain, and what the opt-in policies remember about it);
  agents unseen for --expire-days are dropped.
config: --config FILE, else the nearest .repeat-guard.toml from the event's cwd upwards
  (stopping at the directory holding .git), else the defaults; keys as in check-config.
preset: the file's own preset key when it has one, else --preset NAME, else the host's own
  preset (its polling tools, whose results are compared: a poll whose output changed is
  progress); "seed" is none, the core's defaults alone.

exit status: 0, also when anything goes wrong inside (the agent proceeds; one line saying why
  goes to <state>.log, never the call's arguments); the host's non-blocking error status for
  an invalid configuration, whose message on stderr names the file and the key, or an invalid
  command line: 1 (never 2, which Claude Code takes for "block the call"), 0 for copilot (which
  denies a call on any other); 2 for a call refused under a hard limit by kiro, which reads a
  refusal from the exit status (the reason on stderr).
"""

_INSTALL_EPILOG = """\
the entries run this repeat-guard by its absolute path; every other byte of the file is kept
as written (indent, line endings, escapes, numbers, a byte-order mark). Running
install twice changes nothing; uninstall removes exactly the entries install adds, and the
event lists and hooks table they alone filled; the file itself stays, even as an empty object.
cline runs hook files instead: install writes one per event (PreToolUse, UserPromptSubmit,
TaskComplete, SessionShutdown), each marked as written by repeat-guard, and refuses to replace
a file of that name it did not write; uninstall removes only the files it wrote.
kiro writes Kiro CLI 3's hooks file, whose "hooks" is a list of hooks each naming its
trigger: ours go last in it (PreToolUse, UserPromptSubmit), every other hook stays where it
was. Kiro CLI 2 reads hooks from an agent's configuration only: see the hooks README.
pi, opencode and OpenClaw load in-process plugins instead: install lists the plugin module
(shipped in repeat_guard_hooks/plugins) under pi's "extensions", opencode's "plugin" or
OpenClaw's "plugins.load.paths" key (and enables it there, with conversation access); it starts
`repeat-guard serve --state` from PATH.
http hooks (install claude-code --http): each event gets an http hook that POSTs it to the
resident guard's listener on 127.0.0.1 (see daemon --help) instead of a command hook: no
process per tool call. install makes <state>.http (0600) with a free port and a random secret
unless it exists; the entries send the secret from $REPEAT_GUARD_HTTP_SECRET (allowedEnvVars),
which install sets in the "env" of .claude/settings.local.json (--scope project or local) or of
~/.claude/settings.json (--scope user), never in the committed .claude/settings.json; and a
SessionStart hook runs `repeat-guard daemon start`, since an http hook with no guard listening
lets the call through uncounted. uninstall (or install without --http) takes all of these out
again, and the secret with them unless an http hook of another scope still reads it;
<state>.http stays (remove it to get a new port and secret on the next install --http). A
guard already running serves HTTP only once restarted (repeat-guard daemon stop).
exit status: 0 done (or nothing to do); 2 the settings file cannot be changed safely, or the
  output cannot be written (a closed stdout is found before anything changes; a full disk
  only once the change is made).
"""


class HookHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter without its ``shutil`` import (several ms in every hook process):
    the width comes from ``$COLUMNS`` as ``shutil.get_terminal_size`` would take it first."""

    def __init__(self, prog: str) -> None:
        try:
            columns = int(os.environ.get("COLUMNS", ""))
        except ValueError:
            columns = 80
        super().__init__(prog, width=max(columns, 40) - 2)


def _default_expire_days() -> float:
    from repeat_guard_hooks import DEFAULT_EXPIRE_AFTER  # noqa: PLC0415  # the store's own

    return DEFAULT_EXPIRE_AFTER / 86400.0


def _where(file: SettingsFile) -> str:
    # A settings file as a user would find it: "$CODEX_HOME/hooks.json, default ~/.codex";
    # one at the top of the project is its name alone ("crush.json", not "/crush.json").
    root = "" if file.root == "cwd" else "~/"
    if file.env is None:
        where = f"{root}{file.folder}/{file.name}" if file.folder else f"{root}{file.name}"
    else:
        where = f"${file.env}/{file.name}, default {root}{file.folder}"
    return where if not file.note else f"{where}, {file.note}"


def _scopes_help(dialects: Mapping[str, Dialect]) -> str:
    """Each host's scopes and the file each edits, the default first, for ``install --help``."""
    import textwrap  # noqa: PLC0415  # only when the parser is built

    lines = []
    for name, dialect in dialects.items():
        default, *others = dialect.settings
        files = [f"{default.scope} ({_where(default)}; the default)"]
        files += [f"{file.scope} ({_where(file)})" for file in others]
        text = f"{name} scopes: {', '.join(files)}."
        lines.append(textwrap.fill(text, width=92, subsequent_indent="  "))
    return "\n".join(lines) + "\n"


def add_hook_commands(commands: Commands) -> None:
    """Add ``hook``, ``install`` and ``uninstall`` to the command's subparsers."""
    add_command(
        commands,
        "hook",
        "Run as an agent host's hook (one event on stdin, the answer on stdout).",
        _fill_hook,
        HookHelpFormatter,
        "Run as an agent host's hook: one event on stdin, the answer on stdout.",
    )
    for name, verb in (("install", "Add"), ("uninstall", "Remove")):
        add_command(
            commands,
            name,
            f"{verb} the repeat-guard hook entries or plugin in a host's settings.",
            functools.partial(_fill_settings, install=name == "install"),
            HookHelpFormatter,
            f"{verb} the repeat-guard hook entries in an agent's settings file.",
        )


def _fill_hook(hook: argparse.ArgumentParser) -> None:
    from repeat_guard_hooks import DIALECTS  # noqa: PLC0415  # see the module's docstring

    hook.epilog = _HOOK_EPILOG
    hook.add_argument("agent", choices=tuple(DIALECTS), help="which host's hook dialect")
    hook.add_argument("--state", metavar="PATH", help="the SQLite state file")
    hook.add_argument("--config", metavar="FILE", help="JSON or TOML configuration file")
    hook.add_argument(
        "--expire-days",
        type=float,
        metavar="DAYS",
        help=f"drop chains of agents not seen for this long (default {_default_expire_days():g})",
    )
    _add_preset(
        hook, "the preset to use where the configuration file names none (default: the host's own)"
    )


def _fill_settings(parser: argparse.ArgumentParser, *, install: bool) -> None:
    from repeat_guard_hooks import (  # noqa: PLC0415  # see the module's docstring
        DIALECTS,
        PLUGIN_HOSTS,
    )

    # Cline's hook files are written into the folder its ``settings`` name (``hook_files``).
    installable = {name: d for name, d in {**DIALECTS, **PLUGIN_HOSTS}.items() if d.settings}
    scope_names = sorted({file.scope for d in installable.values() for file in d.settings})
    parser.epilog = _scopes_help(installable) + _INSTALL_EPILOG
    parser.add_argument("agent", choices=tuple(installable), help="which host")
    parser.add_argument("--scope", choices=scope_names, help="which settings file")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the change instead of making it"
    )
    if install:
        parser.add_argument(
            "--results",
            action="store_true",
            help="also run on PostToolUse (and Claude Code's PostToolUseFailure) for every "
            'tool, so that progress = "result" and retryWindow see each call\'s result (one '
            "more hook process per tool call); without it, those entries match the preset's "
            "polling tools alone (see --preset), or are taken out",
        )
        _add_preset(
            parser,
            "the preset the hooks use where the configuration file names none (default: the "
            "host's own; seed: none); the installed command carries it, and without "
            "--results the hooks see the results of its polling tools alone, where the "
            "host's hook entries take a tool matcher",
        )
        parser.add_argument(
            "--http",
            action="store_true",
            help="claude-code only: http hooks to the resident guard's listener instead of "
            "command hooks (no process per call; see http hooks below)",
        )


def _add_preset(parser: argparse.ArgumentParser, text: str) -> None:
    from repeat_guard import PRESETS  # noqa: PLC0415  # the core's data, when the parser is built

    parser.add_argument(
        "--preset", choices=PRESETS, metavar="NAME", help=f"{text}: {', '.join(PRESETS)}"
    )


def run_hook_command(args: argparse.Namespace, streams: Streams) -> int:
    """Run ``hook``, ``install`` or ``uninstall`` as ``args`` say; return the exit status."""
    if args.command == "hook":
        return _hook(args)
    return _settings(args, streams)


def _hook(args: argparse.Namespace) -> int:
    # The command line argparse read, when the short way in (repeat_guard_hookcall) left it to
    # argparse.
    arguments = HookArguments(args.agent, args.state, args.config, args.expire_days, args.preset)
    return run_hook_process(arguments)


def _settings(args: argparse.Namespace, streams: Streams) -> int:
    from repeat_guard_files import TargetError  # noqa: PLC0415  # lazily, as in _hook
    from repeat_guard_hooks import DIALECTS, PLUGIN_HOSTS  # noqa: PLC0415  # lazily, as in _hook
    from repeat_guard_hooks.installer import (  # noqa: PLC0415  # lazily, as in _hook
        InstallError,
        Place,
    )

    agent = {**DIALECTS, **PLUGIN_HOSTS}[args.agent]
    scope = args.scope or agent.settings[0].scope
    place = Place(os.getcwd(), os.environ, os.path.expanduser("~"))
    try:
        results = args.command == "install" and args.results
        command, http = _install_plan(agent, args) if args.command == "install" else (None, None)
        changes = _changes(agent, scope, place, command, args, results=results, http=http)
    except (InstallError, TargetError) as error:
        raise UsageError(str(error)) from error
    except OSError as error:
        raise UsageError(f"cannot write {error.filename}: {error.strerror}") from error
    for change, what in zip(changes, ("hooks", "http secret"), strict=False):
        _report(args, agent, change, what, streams)
    if args.command == "install":
        _install_notes(agent, args.results, args.preset, streams)
    return 0


def _changes(
    agent: Dialect,
    scope: str,
    place: Place,
    command: str | None,
    args: argparse.Namespace,
    *,
    results: bool,
    http: HttpInstall | None,
) -> tuple[SettingsChange | HookFilesChange, ...]:
    # Made unless --dry-run; for a host of hook files (Cline), the files in the scope's folder.
    from repeat_guard_hooks.installer import (  # noqa: PLC0415  # lazily, as in _hook
        apply_change,
        install_hook_files,
        plan_scope,
        preset_polls,
        settings_path,
        uninstall_hook_files,
    )

    if agent.hook_files:
        folder = settings_path(agent, scope, *place)
        if command is None:
            return (uninstall_hook_files(folder, agent, dry_run=args.dry_run),)
        return (install_hook_files(folder, agent, command, dry_run=args.dry_run),)
    polls = preset_polls(agent, args.preset) if command is not None else ()
    changes = plan_scope(agent, scope, place, command, results=results, http=http, polls=polls)
    if not args.dry_run:
        for change in changes:
            apply_change(change)
    return changes


def _install_plan(agent: Dialect, args: argparse.Namespace) -> tuple[str, HttpInstall | None]:
    # The hook command install writes, and with --http the listener's settings (made now
    # unless --dry-run) and the guard's start.
    from repeat_guard_hookcall import (  # noqa: PLC0415  # lazily, as in _hook
        daemon_paths,
        resolve_state,
    )
    from repeat_guard_hooks.installer import (  # noqa: PLC0415  # lazily, as in _hook
        HttpInstall,
        hook_command,
        installed_executable,
        listener_settings,
        start_command,
    )

    executable = installed_executable(sys.argv[0], sys.executable)
    command = hook_command(executable, agent, args.preset)
    if not args.http:
        return command, None
    if agent.http is None:
        raise UsageError(f"{agent.name} takes no http hooks; install it without --http")
    state = resolve_state(None, os.environ, os.path.expanduser("~"))
    port, secret = listener_settings(daemon_paths(state).http, create=not args.dry_run)
    return command, HttpInstall(port, secret, start_command(executable), args.preset)


def _report(
    args: argparse.Namespace,
    agent: Dialect,
    change: SettingsChange | HookFilesChange,
    what: str,
    out: Streams,
) -> None:
    if not change.changed:
        print(f"{change.path}: already as wanted; nothing changed", file=out.out)
    elif args.dry_run:
        print(change.diff(), end="", file=out.out)
    else:
        done = "added to" if args.command == "install" else "removed from"
        what = "plugin" if agent.plugin else "hook files" if agent.hook_files else what
        print(f"repeat-guard {agent.name} {what} {done} {change.path}", file=out.out)


def _install_notes(agent: Dialect, results: bool, preset: str | None, streams: Streams) -> None:
    """What a user must still do or know once the entries are in, on stderr."""
    print(agent.install_note, end="", file=streams.err)
    note = _results_note(os.getcwd(), results, agent, preset)
    if note is not None:
        print(note, file=streams.err)


def _results_note(cwd: str, results: bool, host: Dialect, preset: str | None) -> str | None:
    """What to tell a user whose ``--results`` (and ``--preset``) and the configuration a hook
    for ``host`` run from ``cwd`` would use disagree on reading results, or ``None``.

    A configuration that cannot be used gets no note: ``check-config`` and the hook itself
    say what is wrong with it."""
    from repeat_guard import NO_PRESET  # noqa: PLC0415  # as in _hook
    from repeat_guard_hooks import (  # noqa: PLC0415  # as in _hook
        find_config_file,
        hears_every_result,
        hook_config,
    )

    installed = preset or host.name
    config = hook_config(None, cwd, installed)
    if isinstance(config, str) or hears_every_result(host):
        return None
    if results:
        if config.needs_results:
            return None
        return (
            'note: no configuration a hook run here would read sets progress = "result" or '
            "retryWindow; until one does, the result hooks change nothing (each answers without "
            "opening the store)"
        )
    where = find_config_file(cwd)
    if config.retry_window:
        return (
            f"note: {where} sets retryWindow, but the hooks see a call's failure only when "
            "installed with --results"
        )
    if replace(config, preset=NO_PRESET).reads_results:
        return (
            f'note: {where} sets progress = "result", but the hooks see each call\'s result only '
            "when installed with --results"
        )
    return _preset_note(config, host, installed, where)


def _preset_note(
    config: GuardConfig, host: Dialect, installed: str, where: str | None
) -> str | None:
    # The preset in force reads results the install does not send: the host's hooks hear no
    # result, or its entries take no tool matcher, or the file names another preset than the
    # one installed.
    if not config.reads_results:
        return None
    from repeat_guard_hooks.installer import installed_events  # noqa: PLC0415  # as in _hook

    polls = ", ".join(pattern for pattern, _ in config.tool_policies)
    preset = f"the {config.preset} preset counts a poll ({polls}) whose output changed as progress"
    if installed_events(host, results=True) == installed_events(host):
        return f"note: {preset}, but {host.name}'s hooks hear no call's result: it changes nothing"
    if host.tool_matcher is None:
        return (
            f"note: {preset} only when the hooks see each call's result, and {host.name}'s "
            "hook entries take no tool matcher: install with --results for it, or --preset seed "
            "to turn it off"
        )
    if config.preset == installed:
        return None
    return (
        f'note: {where} sets preset = "{config.preset}", but the hooks see the results of its '
        f"polls ({polls}) only when installed with --preset {config.preset} or --results"
    )
