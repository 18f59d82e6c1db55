"""Adding the hook entries to a host's settings file, and taking them out again.

What to write where is the host's ``Dialect`` row: its settings files (``Dialect.settings``, by
scope), the events it must report (``Dialect.events``) and the group our command is written as
(``Dialect.entry``). Claude Code and Codex read the same shape: ``{"hooks": {Event: [{"matcher":
..., "hooks": [{"type": "command", "command": ...}]}]}}``; Crush lists each hook flat,
``{"hooks": {Event: [{"command": ...}]}}``, and an entry of ours is found and taken out in
either shape. Kiro CLI 3 lists its hooks, each naming its event (``Dialect.trigger_field``):
``{"hooks": [{"trigger": Event, "action": {"command": ...}}]}``, read as a table of that one
list, where ours go last whatever their event. ``install`` appends one entry of its own per
event (``Dialect.entry``), whose command runs the installed ``repeat-guard`` by its absolute
path; every other key, group and hook stays as it was. With ``results``, the events that carry
each call's result (roles ``result`` and ``failure``) are among them, so that ``progress =
"result"`` sees it; an install without it gives those events an entry only for the preset's
polling tools (``preset_polls``), where the host's entries take a tool matcher
(``Dialect.tool_matcher``), and takes them out otherwise. The hook command names the preset
when one was chosen (``--preset``). An entry is ours when its command (a flat entry's, or a
hook's in a group) runs ``repeat-guard hook <host>``, so a second install changes nothing (or
only updates our command when the executable moved), and ``uninstall`` removes exactly our
entries, then the lists and the ``hooks`` table it left empty; the file stays, even when it is
left an empty object.

The file keeps every byte but those of the entries we add or take out (``splice_json``, which
any installer of a JSON settings file uses the same way: read the value, change it, splice it
back): its indent, line endings, escapes, numbers, key order, a byte-order mark and whether it
ends in a newline; what we add is written in the file's own layout. So ``uninstall`` after
``install`` gives back the original bytes, but for an empty ``hooks`` table or event list the
install filled, which goes with our entries (it cannot be told from one install created), and
a file that was absent or empty, which stays as ``{}`` (with the keys a host needs of every
settings file, ``Dialect.settings_defaults``, which ``install`` writes into a file holding no
key: Cursor's ``{"version": 1}``).

Writes go through ``repeat_guard_files.write_atomically`` (a temporary file in the same
directory, flushed to disk, then renamed over the file), keep the file's mode, and go through a
symlink to its target. A path that exists and is not a regular file, or a file that is not a
JSON object, is refused and left untouched; so is one that names a key twice in an object
(rewriting it would keep only the last), nests too deeply to parse, or holds a constant JSON
does not have (``NaN``, ``Infinity``) or a number that would not be written back as it is
(``1e999``; an integer too long for Python to write): what is written is always JSON.
"""

from __future__ import annotations

import json
import math
import os
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from repeat_guard import PRESETS, GuardConfig

from ._dialects import SECRET_VARIABLE, Dialect, hook_path
from ._json_text import splice_json
from ._text import escape_lone_surrogates

__all__ = [
    "HttpInstall",
    "InstallError",
    "Place",
    "Scope",
    "SettingsChange",
    "apply_change",
    "hook_command",
    "hook_url",
    "install",
    "installed_events",
    "installed_executable",
    "listener_settings",
    "plan_install",
    "plan_scope",
    "plan_secret",
    "plan_uninstall",
    "plugin_path",
    "preset_polls",
    "scopes",
    "settings_path",
    "splice_json",
    "start_command",
    "uninstall",
]

Scope = str
"""A settings file's name on the command line (``SettingsFile.scope``): ``project``, ``user``…"""

# The roles whose events ``install --results`` adds: each call's result, one more hook per call.
_RESULT_ROLES = frozenset({"result", "failure"})


def scopes(dialect: Dialect) -> tuple[Scope, ...]:
    """Return the scopes ``dialect`` can be installed at, the default first."""
    return tuple(file.scope for file in dialect.settings)


def installed_events(
    dialect: Dialect, *, results: bool = False, polls: Sequence[str] = ()
) -> tuple[str, ...]:
    """Return the events ``install`` adds our entry to, in the order it writes them: every
    event of ``dialect`` but those carrying a call's result, which ``results`` adds (for every
    tool), and so do ``polls`` (a preset's polling tools) for a host whose entries take a tool
    matcher (``Dialect.tool_matcher``: for those tools alone); never an older name of an event
    (``Dialect.legacy_events``)."""
    limited = bool(polls) and dialect.tool_matcher is not None
    return tuple(
        event
        for event, role in dialect.events.items()
        if (results or limited or role not in _RESULT_ROLES) and event not in dialect.legacy_events
    )


def preset_polls(dialect: Dialect, preset: str | None = None) -> tuple[str, ...]:
    """Return the tool-name patterns of the polling tools of ``preset`` (``None``: the host's
    own), as the core's preset data gives them: those whose results the hook must see."""
    name = dialect.name if preset is None else preset
    if name not in PRESETS:  # a host the core has no preset for
        return ()
    return tuple(pattern for pattern, _ in GuardConfig(preset=name).tool_policies)


class InstallError(Exception):
    """The settings file cannot be changed safely; the message names it and why."""


@dataclass(frozen=True, slots=True)
class SettingsChange:
    """A planned change of one settings file: its text before (``None``: absent) and after."""

    path: str
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        """Whether applying the change would alter the file."""
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change (empty when nothing changes)."""
        import difflib  # noqa: PLC0415  # not on the hook path, which imports this module

        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=self.path if self.before is not None else "/dev/null",
            tofile=self.path if self.after is not None else "/dev/null",
        )
        return "".join(lines)


def settings_path(
    dialect: Dialect, scope: Scope, cwd: str, environ: Mapping[str, str], home: str
) -> str:
    """Return the settings file of ``dialect`` at ``scope`` (``Dialect.settings``).

    Claude Code: ``.claude/settings.json`` (project), ``.claude/settings.local.json`` (local)
    under ``cwd``, or ``~/.claude/settings.json`` (user). Codex: ``hooks.json`` in
    ``$CODEX_HOME`` (default ``~/.codex``) for user, or ``.codex/hooks.json`` under ``cwd``.
    """
    file = next((file for file in dialect.settings if file.scope == scope), None)
    if file is None:
        known = ", ".join(scopes(dialect))
        raise InstallError(f"{dialect.name} has no {scope} scope (known: {known})")
    folder = environ.get(file.env, "") if file.env is not None else ""
    if not folder:
        folder = os.path.join(cwd if file.root == "cwd" else home, file.folder)
    return os.path.join(folder, file.name)


def hook_command(executable: Sequence[str], dialect: Dialect, preset: str | None = None) -> str:
    """Return the shell command of our hook entry: ``executable`` then ``hook <host>``, and
    ``--preset <preset>`` unless ``preset`` is ``None`` (the host's own)."""
    chosen = [] if preset is None else ["--preset", preset]
    return shlex.join([*executable, "hook", dialect.name, *chosen])


def start_command(executable: Sequence[str]) -> str:
    """Return the shell command of the entry that makes sure the guard is up (``install
    --http``): ``executable`` then ``daemon start``."""
    return shlex.join([*executable, "daemon", "start"])


def hook_url(port: int, dialect: Dialect, preset: str | None = None) -> str:
    """Return the URL of the guard's listener at ``port`` for ``dialect``'s hook calls (with
    ``preset`` for the host's own, unless ``None``)."""
    return f"http://127.0.0.1:{port}{hook_path(dialect.name, preset)}"


def _is_ours(hook: object, dialect: Dialect) -> bool:
    # Our command hook, the guard's start or our http hook (at any port).
    if not isinstance(hook, Mapping):
        return False
    if hook.get("type") == "http":
        return _is_our_url(hook.get("url"), dialect)
    command = _command(hook, dialect.command_field)
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if words[-2:-1] == ["--preset"]:  # hook_command's preset
        words = words[:-2]
    return words[-2:] in (["hook", dialect.name], ["daemon", "start"]) and any(
        os.path.basename(word) == "repeat-guard" or word in _ENTRY_MODULES for word in words
    )


def _command(hook: Mapping[object, object], field: str) -> object:
    # The value at the dotted path ``field`` (``Dialect.command_field``), or None.
    value: object = hook
    for key in field.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


# The modules ``python -m`` runs the command from: ``installed_executable``'s, and the one older
# installs wrote (still run, and still ours to replace or remove).
_ENTRY_MODULES = ("repeat_guard_entry", "repeat_guard_cli")


def _is_our_url(url: object, dialect: Dialect) -> bool:
    if not isinstance(url, str) or not url.startswith(_LISTENER):
        return False
    port, _, rest = url.removeprefix(_LISTENER).partition("/")
    # Any preset's path for this host (``hook_path``): ours, to replace or remove.
    path = f"/{rest}".partition("?preset=")[0]
    return port.isdigit() and path == hook_path(dialect.name)


_LISTENER = "http://127.0.0.1:"


class HttpInstall(NamedTuple):
    """What ``install --http`` writes: the listener's ``port`` and ``secret`` (``<state>.http``),
    the command that starts the guard (``start_command``) and the preset the hooks name
    (``None``: the host's own)."""

    port: int
    secret: str
    start: str
    preset: str | None = None


def _read(path: str) -> tuple[str | None, dict[str, object]]:
    target = os.path.realpath(path)
    if not os.path.lexists(target):
        return None, {}
    if not os.path.isfile(target):
        raise InstallError(f"{path} is not a regular file; refusing to change it")
    try:
        with open(target, "rb") as stream:
            data = stream.read()
    except OSError as error:
        raise InstallError(f"cannot read {path}: {error.strerror}") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InstallError(
            f"{path} is not UTF-8 text (at byte offset {error.start}); refusing to change it"
        ) from None
    return text, _load(path, text)


def _load(path: str, text: str) -> dict[str, object]:
    # A byte-order mark is kept, as every byte outside our entries is (``splice_json``).
    body = text.removeprefix("\ufeff")
    if not body.strip(" \t\n\r"):  # JSON's whitespace, as ``splice_json`` skips it
        return {}
    settings = _parse(path, body)
    if not isinstance(settings, dict):
        raise InstallError(f"{path} does not hold a JSON object; refusing to change it")
    return settings


def _parse(path: str, text: str) -> object:
    try:
        return json.loads(
            text,
            object_pairs_hook=_object,
            parse_constant=_not_json,
            parse_float=_finite_float,
            parse_int=_writable_int,
        )
    except _RepeatedKey as repeated:
        raise InstallError(
            f"{path} names the key {repeated.args[0]!r} twice in one object; refusing to change it"
        ) from None
    except _NotJson as constant:
        raise InstallError(
            f"{path} is not valid JSON ({constant.args[0]} is not a JSON value); "
            "refusing to change it"
        ) from None
    except _Unwritable as number:
        raise InstallError(
            f"{path} holds the number {number.args[0]}, which would not be written back as it "
            "is; refusing to change it"
        ) from None
    except RecursionError:
        raise InstallError(f"{path} is nested too deeply to read; refusing to change it") from None
    except ValueError as error:
        raise InstallError(f"{path} is not valid JSON ({error}); refusing to change it") from error


class _RepeatedKey(ValueError):
    """An object of the settings file names this key twice."""


class _NotJson(ValueError):
    """The settings file holds this constant (``NaN``, ``Infinity``), which JSON does not have."""


class _Unwritable(ValueError):
    """The settings file holds this number (its start), which JSON text written back from
    Python would not hold as it is: beyond a float (``1e999``, written back as ``Infinity``)
    or an integer too long to write (Python's limit on integer digits)."""


def _not_json(constant: str) -> object:
    raise _NotJson(constant)


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Unwritable(text)
    return number


def _writable_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # longer than the interpreter's limit on integer digits
        raise _Unwritable(f"{text[:12]}... ({len(text)} characters)") from None


def _object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    settings: dict[str, object] = {}
    for key, value in pairs:
        if key in settings:
            raise _RepeatedKey(key)
        settings[key] = value
    return settings


# A hooks file that lists its hooks (``Dialect.trigger_field``) is read as a table of one list,
# under this key: our entries go in it, last, whatever event they name.
_LISTED = "hooks"


def _slot(dialect: Dialect, event: str) -> str:
    # The list of the table an entry for ``event`` goes in.
    return _LISTED if dialect.trigger_field else event


def _hooks_table(path: str, settings: dict[str, object], dialect: Dialect) -> dict[str, object]:
    # The entries by the list each is in: the ``hooks`` table itself, or for a host that lists
    # its hooks, a table holding that list (``_put_hooks`` puts it back).
    if dialect.trigger_field:
        listed = settings.get("hooks", [])
        if not isinstance(listed, list):
            raise InstallError(f"{path}: key 'hooks' is not a list; refusing to change it")
        return {_LISTED: listed} if "hooks" in settings else {}
    table = settings.get("hooks", {})
    if not isinstance(table, dict):
        raise InstallError(f"{path}: key 'hooks' is not an object; refusing to change it")
    for event, groups in table.items():
        if not isinstance(groups, list):
            raise InstallError(f"{path}: key 'hooks.{event}' is not a list; refusing to change it")
    return table


def _without_ours(groups: list[object], dialect: Dialect) -> list[object]:
    # An event's list holds matcher groups, each with a ``hooks`` list (Claude Code's shape),
    # or flat entries, each one hook (Crush's, ``flat_entry``): ours goes either way.
    kept: list[object] = []
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(group, dict) or not isinstance(hooks, list):
            if not _is_ours(group, dialect):
                kept.append(group)
            continue
        remaining = [hook for hook in hooks if not _is_ours(hook, dialect)]
        if len(remaining) == len(hooks):
            kept.append(group)
        elif remaining:
            kept.append({**group, "hooks": remaining})
    return kept


def _render(settings: Mapping[str, object]) -> str:
    # A string of the file may hold a lone surrogate: written back as the escape it was.
    return escape_lone_surrogates(
        json.dumps(settings, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    )


def plan_install(
    path: str,
    dialect: Dialect,
    command: str,
    *,
    results: bool = False,
    http: HttpInstall | None = None,
    polls: Sequence[str] = (),
) -> SettingsChange:
    """Return the change that makes ``path`` run ``command`` on each event ``dialect`` needs
    (``installed_events``, with ``results`` or without, for ``polls`` or none), and on no other.
    Without ``results``, the result events ``polls`` add match those tools alone
    (``Dialect.tool_matcher``).

    With ``http``, each of those events gets an http hook to the guard's listener instead
    (``Dialect.http``), and the session's start a command starting the guard; the secret is
    not written here (``plan_secret``). Idempotent: when our entries are already there as
    wanted, nothing changes. For a host given a plugin (``Dialect.plugin``), the change lists
    ``plugin_path(dialect)`` instead (``command`` and ``results`` do not apply: the plugin
    reports every event itself).
    """
    if dialect.plugin:
        return _plan_plugin(path, dialect, plugin_path(dialect))
    wanted = _wanted(dialect, command, results, http, polls)
    before, settings = _read(path)
    original = _render(settings)
    table = _hooks_table(path, settings, dialect)
    slots = {_slot(dialect, event): event for event in wanted}
    _take_ours_out(table, dialect, keep=slots)
    for slot in slots:
        groups = table.get(slot, [])
        assert isinstance(groups, list)  # checked by _hooks_table
        table[slot] = _without_ours(groups, dialect)
    for event, ours in wanted.items():
        listed = table[_slot(dialect, event)]
        assert isinstance(listed, list)  # made just above
        listed.append(ours)
    if not settings:  # a new file: what the host needs of every settings file (Cursor's version)
        settings.update(dialect.settings_defaults)
    _put_hooks(settings, dialect, table, held=False)
    return _change(path, before, original, settings)


def _put_hooks(
    settings: dict[str, object], dialect: Dialect, table: dict[str, object], *, held: bool
) -> None:
    # ``table`` back as the file's ``hooks`` (for a host that lists its hooks, its one list);
    # ``hooks`` goes when ``held`` (it held something) and our entries alone filled it.
    if held and not table:
        del settings["hooks"]
    elif table:
        settings["hooks"] = table[_LISTED] if dialect.trigger_field else table


def _wanted(
    dialect: Dialect,
    command: str,
    results: bool,
    http: HttpInstall | None,
    polls: Sequence[str],
) -> dict[str, dict[str, object]]:
    # Our group for each event we install, in the order written.
    events = installed_events(dialect, results=results, polls=polls)
    wanted: dict[str, dict[str, object]] = {}
    if http is None:
        entry, target = dialect.entry, command
    elif dialect.http is None:
        raise InstallError(f"{dialect.name} takes no http hooks; install it without --http")
    else:
        hooks = dialect.http
        wanted[hooks.start_event] = hooks.start_entry(http.start)
        entry, target = hooks.entry, hook_url(http.port, dialect, http.preset)
    wanted.update((event, entry(event, dialect.events[event], target)) for event in events)
    if not results and dialect.tool_matcher is not None and polls:
        matcher = dialect.tool_matcher(polls)
        for event in events:
            if dialect.events[event] in _RESULT_ROLES:
                wanted[event] = {**wanted[event], "matcher": matcher}
    return wanted


def _take_ours_out(table: dict[str, object], dialect: Dialect, keep: Collection[str] = ()) -> None:
    # Our entries out of every event but those in ``keep``; an event left with none goes.
    for event in list(table):
        groups = table[event]
        assert isinstance(groups, list)  # checked by _hooks_table
        if event in keep:
            continue
        kept = _without_ours(groups, dialect)
        if kept == groups:
            continue
        if kept:
            table[event] = kept
        else:
            del table[event]


def plan_uninstall(path: str, dialect: Dialect) -> SettingsChange:
    """Return the change that removes our entries (and what they alone filled) from ``path``.

    The file itself stays, even when that leaves it an empty object: it may have been the
    user's before install (``{}``, or an empty ``hooks`` table), which cannot be told from one
    install created.
    """
    if dialect.plugin:
        return _plan_plugin(path, dialect, None)
    before, settings = _read(path)
    if before is None:
        return SettingsChange(path, None, None)
    original = _render(settings)
    table = _hooks_table(path, settings, dialect)
    held = bool(table)
    _take_ours_out(table, dialect)
    _put_hooks(settings, dialect, table, held=held)
    return _change(path, before, original, settings)


def plan_secret(
    path: str, secret: str | None, *, after: SettingsChange | None = None
) -> SettingsChange:
    """Return the change that sets ``$SECRET_VARIABLE`` to ``secret`` in the ``env`` table of
    ``path``, or for ``None`` takes it out (and the table, when it alone filled it).

    With ``after``, a change of the same file, the change is planned on top of it and covers
    both: from ``after.before`` to the text with both changes made.
    """
    if after is not None:
        before, text = after.before, after.after
        settings = {} if text is None else _load(path, text)
    else:
        before, settings = _read(path)
        text = before
    if text is None and secret is None:
        return SettingsChange(path, before, before)
    original = _render(settings)
    table = settings.get("env", {})
    if not isinstance(table, dict):
        raise InstallError(f"{path}: key 'env' is not an object; refusing to change it")
    if secret is not None:
        settings["env"] = {**table, SECRET_VARIABLE: secret}
    elif SECRET_VARIABLE in table:
        del table[SECRET_VARIABLE]
        if not table:
            del settings["env"]
    change = _change(path, text, original, settings)
    return SettingsChange(path, before, change.after)


def _holds_http(path: str, dialect: Dialect) -> bool:
    # Whether the file at ``path`` has an http hook of ours (which needs the secret).
    _, settings = _read(path)
    for groups in _hooks_table(path, settings, dialect).values():
        assert isinstance(groups, list)  # checked by _hooks_table
        for group in groups:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(hooks, list) and any(_is_our_http(hook, dialect) for hook in hooks):
                return True
    return False


def _is_our_http(hook: object, dialect: Dialect) -> bool:
    return isinstance(hook, Mapping) and hook.get("type") == "http" and _is_ours(hook, dialect)


class Place(NamedTuple):
    """Where settings files are found: the current directory, the environment, the home."""

    cwd: str
    environ: Mapping[str, str]
    home: str


def plan_scope(
    dialect: Dialect,
    scope: Scope,
    place: Place,
    command: str | None,
    *,
    results: bool = False,
    http: HttpInstall | None = None,
    polls: Sequence[str] = (),
) -> tuple[SettingsChange, ...]:
    """Return the changes that install our entries at ``scope`` (``plan_install``), or for a
    ``command`` of ``None`` uninstall them (``plan_uninstall``), one per file changed.

    For a host that takes http hooks (``Dialect.http``), the file holding the secret (its
    ``secret_scopes``: for Claude Code's project scope, the local settings file, never the
    committed one) gets ``http.secret`` in its ``env``; without ``http``, the secret is taken
    out of it unless an http hook of ours in a file of a scope sharing it still needs it.
    When both are one file, the one change covers both; a secret file left as it was is not
    listed, but for ``install --http``.
    """
    path = settings_path(dialect, scope, *place)
    if command is None:
        change = plan_uninstall(path, dialect)
    else:
        change = plan_install(path, dialect, command, results=results, http=http, polls=polls)
    if dialect.http is None:
        return (change,)
    held = dialect.http.secret_scopes[scope]
    secret_path = settings_path(dialect, held, *place)
    same = os.path.realpath(secret_path) == os.path.realpath(path)
    if http is None:
        sharing = [
            settings_path(dialect, other, *place)
            for other, holder in dialect.http.secret_scopes.items()
            if holder == held
        ]
        others = [p for p in sharing if os.path.realpath(p) != os.path.realpath(path)]
        if any(_holds_http(other, dialect) for other in others):
            return (change,)
    if same:
        return (plan_secret(path, http and http.secret, after=change),)
    taken = plan_secret(secret_path, http and http.secret)
    return (change, taken) if http is not None or taken.changed else (change,)


def listener_settings(path: str, *, create: bool) -> tuple[int, str]:
    """Return the port and secret of the guard's listener in ``path`` (``<state>.http``).

    A missing file is made (when ``create``; else only its values are chosen): a free port on
    127.0.0.1 and a random secret, written 0600 in a 0700 folder, never over a file another
    install made meanwhile (whose values are then returned). Raises ``InstallError`` when the
    file holds no usable settings (the message says what is wrong) or cannot be written.
    """
    from ._daemon import read_http_settings  # noqa: PLC0415  # the guard's own reader

    found = read_http_settings(path)
    if isinstance(found, str):
        raise InstallError(f"{found}; fix or remove it, and install again")
    if found is not None:
        return found.port, found.secret
    import secrets  # noqa: PLC0415  # only here
    import socket  # noqa: PLC0415  # only here

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    secret = secrets.token_hex(32)
    if not create:
        return port, secret
    try:
        _create_private(path, json.dumps({"port": port, "secret": secret}) + "\n")
    except FileExistsError:
        return listener_settings(path, create=False)
    except OSError as error:
        raise InstallError(f"cannot write {path}: {error.strerror}") from error
    return port, secret


def _create_private(path: str, text: str) -> None:
    # A new 0600 file with ``text``, whole or not at all: written beside it, then linked to
    # ``path`` (which fails, replacing nothing, when ``path`` exists).
    import tempfile  # noqa: PLC0415  # only here

    from ._store import make_private_folders  # noqa: PLC0415  # the state's folders, 0700

    folder = os.path.dirname(os.path.abspath(path))
    make_private_folders(folder)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".http-")  # 0600
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.link(temporary, path)
    finally:
        os.unlink(temporary)


PLUGINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugins")
"""The folder of the plugin modules (``Dialect.plugin``): the npm package ``adapters/js``,
built."""


def plugin_path(dialect: Dialect) -> str:
    """Return the absolute path of the plugin module ``install`` gives ``dialect``."""
    return os.path.join(PLUGINS, dialect.plugin)


def _is_our_plugin(entry: object, dialect: Dialect) -> bool:
    # Any repeat-guard's plugin for this host, wherever it was installed from.
    if not isinstance(entry, str):
        return False
    parts = entry.replace("\\", "/").split("/")
    return parts[-3:] == ["repeat_guard_hooks", "plugins", dialect.plugin]


def _plan_plugin(path: str, dialect: Dialect, plugin: str | None) -> SettingsChange:
    # ``plugin`` listed once under the host's plugin key (ours elsewhere taken out) and the
    # host's plugin settings set, or, for ``None``, ours and those settings taken out, with
    # every object they alone filled.
    before, settings = _read(path)
    if before is None and plugin is None:
        return SettingsChange(path, None, None)
    original = _render(settings)
    holder, key = _holder(path, settings, dialect.plugin_key, make=plugin is not None)
    listed = holder.get(key, []) if holder is not None else []
    if not isinstance(listed, list):
        raise InstallError(
            f"{path}: key {dialect.plugin_key!r} is not a list; refusing to change it"
        )
    ours = [entry for entry in listed if _is_our_plugin(entry, dialect)]
    kept = [entry for entry in listed if not _is_our_plugin(entry, dialect)]
    if plugin is None:
        _unlist(settings, dialect, holder, kept if kept or not ours else None)
    else:
        assert holder is not None  # made on the way
        if ours != [plugin]:
            holder[key] = [*kept, plugin]
        for dotted, value in dialect.plugin_settings.items():
            inner, last = _holder(path, settings, dotted, make=True)
            assert inner is not None  # made on the way
            inner[last] = value
    return _change(path, before, original, settings)


def _unlist(
    settings: dict[str, object],
    dialect: Dialect,
    holder: dict[str, object] | None,
    kept: list[object] | None,
) -> None:
    # The host's plugin list becomes ``kept`` (``None``: it goes, ours alone filled it), and
    # the host's plugin settings go.
    if kept is None:
        _remove(settings, dialect.plugin_key)
    elif kept:
        assert holder is not None  # it holds them
        holder[dialect.plugin_key.rsplit(".", 1)[-1]] = kept
    for dotted in dialect.plugin_settings:
        _remove(settings, dotted)


def _holder(
    path: str, settings: dict[str, object], dotted: str, *, make: bool
) -> tuple[dict[str, object] | None, str]:
    # The object holding the last key of ``dotted`` (made on the way when ``make``; ``None``
    # when absent) and that key.
    *keys, last = dotted.split(".")
    here = settings
    for key in keys:
        inner = here.get(key)
        if inner is None and make:
            inner = here[key] = {}
        if inner is None:
            return None, last
        if not isinstance(inner, dict):
            raise InstallError(f"{path}: key {key!r} is not an object; refusing to change it")
        here = inner
    return here, last


def _remove(settings: dict[str, object], dotted: str) -> None:
    # The value at ``dotted`` taken out, and every object it alone filled.
    keys = dotted.split(".")
    chain = [settings]
    for key in keys[:-1]:
        inner = chain[-1].get(key)
        if not isinstance(inner, dict):
            return
        chain.append(inner)
    if keys[-1] not in chain[-1]:
        return
    del chain[-1][keys[-1]]
    for holder, key in zip(reversed(chain[:-1]), reversed(keys[:-1]), strict=True):
        if holder[key]:
            return
        del holder[key]


def _change(
    path: str, before: str | None, original: str, settings: Mapping[str, object]
) -> SettingsChange:
    # An unchanged document keeps its own text; a changed one, every byte but those of the
    # values that changed: the file's indent, escapes and numbers, the lines nobody touched.
    if _render(settings) == original:
        return SettingsChange(path, before, before)
    return SettingsChange(path, before, splice_json(before, settings))


def apply_change(change: SettingsChange) -> None:
    """Write ``change`` to its file atomically (never removing it: ``after`` is ``None`` only
    for a file that is absent and stays so).

    A settings file reached through a symbolic link is written where the link points, and the
    link kept. Raises ``TargetError`` when the file cannot be written.
    """
    if not change.changed:
        return
    target = os.path.realpath(change.path)
    assert change.after is not None  # neither plan removes a file
    from repeat_guard_files import write_atomically  # noqa: PLC0415  # not on the hook path, which imports this module

    os.makedirs(os.path.dirname(target), exist_ok=True)
    text = change.after.encode("utf-8")
    write_atomically(target, lambda stream: stream.write(text))


def install(
    path: str,
    dialect: Dialect,
    command: str,
    *,
    results: bool = False,
    dry_run: bool = False,
    polls: Sequence[str] = (),
) -> SettingsChange:
    """Plan and (unless ``dry_run``) apply the install of our hooks into ``path``."""
    change = plan_install(path, dialect, command, results=results, polls=polls)
    if not dry_run:
        apply_change(change)
    return change


def uninstall(path: str, dialect: Dialect, *, dry_run: bool = False) -> SettingsChange:
    """Plan and (unless ``dry_run``) apply the removal of our hooks from ``path``."""
    change = plan_uninstall(path, dialect)
    if not dry_run:
        apply_change(change)
    return change


def installed_executable(argv0: str, python: str) -> list[str]:
    """Return the command that runs this ``repeat-guard``, by absolute path.

    ``argv0`` when the running program is the ``repeat-guard`` script; else the script beside
    the interpreter ``python`` (a virtual environment's ``bin``); else ``python -m
    repeat_guard_entry``.
    """
    if os.path.basename(argv0) == "repeat-guard":
        return [os.path.abspath(argv0)]
    beside = os.path.join(os.path.dirname(os.path.abspath(python)), "repeat-guard")
    if os.path.isfile(beside):
        return [beside]
    return [os.path.abspath(python), "-m", _ENTRY_MODULES[0]]
