"""Any input, in any order, to either agent's hook: exit 0, an answer only of the documented
shape, a refusal only where a hard limit (``denyAt``, a budget) is configured, and no error of
the hook's own. Any settings file, or any bytes in its place: installed into and uninstalled
from without loss, or refused and left as it was.

Each drawn hook case is a short session of hook calls against one fresh store: JSON objects
with the fields the agents send (each sometimes missing, or of another JSON type), well-formed
calls, arbitrary bytes, and valid inputs cut short or with a byte flipped, a few of them
repeated in a drawn order. ``make test`` draws 300 cases a test, ``make fuzz`` a tenth of
``FUZZ_TRANSCRIPTS`` (5,000).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import tempfile
import unittest.mock
from contextlib import closing
from pathlib import Path

from hypothesis import event, given
from hypothesis import strategies as st

from repeat_guard_hooks import CLAUDE_CODE, DIALECTS, Dialect, HookOptions, _dialects, run_hook
from repeat_guard_hooks.installer import (
    InstallError,
    hook_command,
    install,
    installed_events,
    uninstall,
)

from ..transcripts.fuzzing import cut_and_flipped, field, fuzz_settings

EXAMPLES = int(os.environ.get("REPEAT_GUARD_FUZZ", "3000")) // 10

_EVENTS = (
    "PreToolUse",
    "UserPromptSubmit",
    "SubagentStop",
    "SessionEnd",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SessionStart",
)
# Settings values: strings of any code point, lone surrogates included, and no NaN, so that a
# settings object given back compares equal to the one written.
_TEXT = st.text(st.characters(exclude_categories=()), max_size=6)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=10,
)


_PAYLOAD = st.fixed_dictionaries(
    {"hook_event_name": field(st.sampled_from(_EVENTS))},
    optional={
        "session_id": field(st.sampled_from(["s", "t"])),
        "agent_id": field(st.sampled_from(["a1", "a2"])),
        "cwd": field(st.just("/")),
        "tool_name": field(st.sampled_from(["Bash", "Read", "exec_command"])),
        "tool_input": field(
            st.fixed_dictionaries({"command": st.sampled_from(["ls", "make test"])})
        ),
        "tool_use_id": field(st.text(max_size=4)),
        "tool_response": field(st.sampled_from(["", "out", {"stdout": "x"}])),
        "error": field(st.sampled_from(["Exit code 1", "Exit code 2"])),
        "is_interrupt": field(st.booleans()),
        "prompt": field(st.text(max_size=8)),
        "transcript_path": field(st.just("/dev/null")),
    },
)


# A well-formed call or its result, so that repeats reach the thresholds and the limits, and
# results that change or stay the same reach progress.
_CALL = st.fixed_dictionaries(
    {
        "hook_event_name": st.sampled_from(
            ["PreToolUse", "PreToolUse", "PostToolUse", "PostToolUseFailure"]
        ),
        "session_id": st.sampled_from(["s", "t"]),
        "tool_name": st.sampled_from(["Bash", "Read"]),
        "tool_input": st.fixed_dictionaries({"command": st.sampled_from(["ls", "make test"])}),
    },
    optional={
        "agent_id": st.just("a1"),
        "tool_response": st.sampled_from(["a", "b"]),
        "error": st.sampled_from(["Exit code 1", "Exit code 2"]),
        "is_interrupt": st.booleans(),
    },
)
_INPUT = st.one_of(
    _CALL.map(lambda payload: json.dumps(payload).encode()),
    _CALL.map(lambda payload: json.dumps(payload).encode()),
    _PAYLOAD.map(lambda payload: json.dumps(payload).encode()),
    cut_and_flipped(_PAYLOAD),
    st.binary(max_size=40),
)
# A session repeats its inputs: a few drawn, then called in a drawn order.
_SESSION = st.lists(_INPUT, min_size=1, max_size=3).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), min_size=len(pool), max_size=12)
)
# Configurations: the defaults, and every opt-in policy that changes what a hook answers.
_CONFIGS = (
    "",
    "thresholds = [2, 3]\ndenyAt = 3\n",
    'cyclePeriod = 2\ncycleThresholds = [2]\nbudgets = {"Bash" = 3}\n',
    'progress = "result"\n',
)
# What the hook logs when an error of its own, not of its input, made it fail open.
_OWN_ERROR = re.compile(r"internal error|state store (unusable|corrupt)|unreadable chain")


@fuzz_settings(EXAMPLES)
@given(
    st.sampled_from(list(DIALECTS.values())),
    st.sampled_from(_CONFIGS),
    _SESSION,
    st.integers(0, 3),
    st.sampled_from([0o000, 0o022, 0o077]),
    st.booleans(),
)
def test_any_hook_input_is_answered_or_fails_open_and_never_errs(
    dialect: Dialect, config: str, inputs: list[bytes], depth: int, umask: int, foreign: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        config_file = Path(folder) / "guard.toml"
        config_file.write_text(config, encoding="utf-8")
        # The state in folders of its own, under any umask: every folder the hook makes is 0700.
        levels = [f"d{level}" for level in range(depth)]
        made = [Path(folder, *levels[: count + 1]) for count in range(depth)]
        state = Path(folder, *levels) / "st.db"
        options = HookOptions(dialect, str(state), str(config_file))
        if foreign:  # a newer guard's store: never changed, and nothing answered from it
            state.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(state)) as connection, connection:
                connection.execute("PRAGMA user_version=99")
            connection.close()
            written = state.read_bytes()
        previous = os.umask(umask)
        try:
            outcomes = [run_hook(options, data, float(now)) for now, data in enumerate(inputs)]
        finally:
            os.umask(previous)
        if foreign:
            assert state.read_bytes() == written
            assert [outcome.stdout for outcome in outcomes] == [b""] * len(outcomes)
            made = []  # made before the umask was set
        modes = {stat.S_IMODE(path.stat().st_mode) for path in made if path.exists()}
        assert modes <= {0o700}
        for data, outcome in zip(inputs, outcomes, strict=True):
            if dialect.deny_status and outcome.status == dialect.deny_status:
                event("refused by the exit status")  # Kiro: the reason on stderr, nothing out
                assert "denyAt" in config or "budgets" in config  # the hard limits
                assert (outcome.stdout, bool(outcome.stderr.strip())) == (b"", True)
                continue
            assert (outcome.status, outcome.stderr) == (0, "")
            if not outcome.stdout:
                continue
            event("answered")
            answer = json.loads(outcome.stdout)
            output = answer.pop("hookSpecificOutput")
            assert answer == {}
            assert output["hookEventName"] == json.loads(data)["hook_event_name"]
            assert set(output) - {"hookEventName"} <= {
                "additionalContext",
                "permissionDecision",
                "permissionDecisionReason",
            }
            if "permissionDecision" in output:
                event("refused")
                assert "denyAt" in config or "budgets" in config  # the hard limits
                assert output["permissionDecision"] == "deny"
                assert output["permissionDecisionReason"].startswith("refused: ")
        log = Path(f"{state}.log")
        lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
        assert [line for line in lines if _OWN_ERROR.search(line)] == []


@fuzz_settings(EXAMPLES)
@given(st.sampled_from(list(DIALECTS.values())), _INPUT, st.integers(0, 120))
def test_an_event_over_the_input_limit_is_stood_aside_whatever_it_holds(
    dialect: Dialect, data: bytes, limit: int
) -> None:
    # The limit drawn small, so that any input can be over it: one byte over, nothing parsed,
    # the store never opened, one log line; at or under it, the input is read as ever.
    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder) / "st.db"
        options = HookOptions(dialect, str(state))
        with unittest.mock.patch.object(_dialects, "INPUT_LIMIT", limit):
            outcome = run_hook(options, data, 0.0)
        assert (outcome.status, outcome.stderr) == (0, "")
        log = Path(f"{state}.log")
        lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
        over = [line for line in lines if "stdin holds more than" in line]
        if len(data) > limit:
            event("over the limit")
            assert (outcome.stdout, len(over), state.exists()) == (b"", 1, False)
        else:
            assert over == []


# Every list of a hooks table holds something, since uninstall drops a list it leaves empty.
_HOOKS = st.dictionaries(
    st.sampled_from(installed_events(CLAUDE_CODE, results=True)) | _TEXT,
    st.lists(_JSON, min_size=1, max_size=3),
    min_size=1,
    max_size=4,
)
_SETTINGS = st.dictionaries(_TEXT.filter(lambda key: key != "hooks"), _JSON, max_size=4).flatmap(
    lambda others: st.just(others) | _HOOKS.map(lambda hooks: {**others, "hooks": hooks})
)


# How a settings file is written: indent (none: one line), separators, line ending, a BOM, a
# final newline. Install then uninstall must give back every byte.
_LAYOUT = st.tuples(
    st.sampled_from([None, 2, 4, "\t"]),
    st.sampled_from([(", ", ": "), (",", ":"), (",", " : ")]),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["", "\n", "\r\n", "\n\n"]),
)


def _written(
    settings_file: dict[str, object],
    escaped: bool,
    layout: tuple[int | str | None, tuple[str, str], bool, bool, str],
) -> str:
    indent, separators, crlf, bom, end = layout
    if indent is not None:
        separators = (",", separators[1])
    text = json.dumps(settings_file, ensure_ascii=escaped, indent=indent, separators=separators)
    if not escaped and re.search("[\ud800-\udfff]", text):  # UTF-8 cannot hold it unescaped
        text = json.dumps(settings_file, indent=indent, separators=separators)
    text = text.replace("\n", "\r\n") if crlf else text
    return ("\ufeff" if bom else "") + text + end


# The hosts install edits a settings file of (Cline's hooks are files of their own).
_INSTALLABLE = [d for d in DIALECTS.values() if d.settings and not d.hook_files]


@fuzz_settings(EXAMPLES)
@given(_SETTINGS, st.sampled_from(_INSTALLABLE), st.booleans(), st.booleans(), _LAYOUT)
def test_any_settings_file_gets_our_entries_and_gives_back_every_byte(
    settings_file: dict[str, object],
    dialect: Dialect,
    escaped: bool,
    results: bool,
    layout: tuple[int | str | None, tuple[str, str], bool, bool, str],
) -> None:
    command = hook_command(["/opt/repeat-guard"], dialect)
    if dialect.trigger_field and "hooks" in settings_file:  # a list of hooks (Kiro CLI 3)
        assert isinstance(settings_file["hooks"], dict)
        listed = [hook for hooks in settings_file["hooks"].values() for hook in hooks]
        settings_file = {**settings_file, "hooks": listed}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "settings.json"
        text = _written(settings_file, escaped, layout)
        path.write_bytes(text.encode("utf-8"))
        install(str(path), dialect, command, results=results)
        installed = json.loads(path.read_bytes().decode("utf-8").removeprefix("\ufeff"))
        # A file holding no key gets what the host needs of every one (Cursor's version).
        defaults = {} if settings_file else dialect.settings_defaults
        assert {key: value for key, value in installed.items() if key != "hooks"} == {
            **defaults,
            **{key: value for key, value in settings_file.items() if key != "hooks"},
        }
        _check_ours_last(installed["hooks"], settings_file.get("hooks"), dialect, command, results)
        uninstall(str(path), dialect)
        if defaults:  # they stay, as the empty object would
            assert json.loads(path.read_bytes().decode("utf-8").removeprefix("\ufeff")) == defaults
        else:
            assert path.read_bytes() == text.encode("utf-8")  # never removed, nor changed


def _check_ours_last(
    hooks: object, before: object, dialect: Dialect, command: str, results: bool
) -> None:
    # Every hook of the file where it was, ours last, in the host's shape: a matcher group, a
    # flat entry (Crush), or a hook naming its trigger in the file's one list (Kiro CLI 3).
    events = installed_events(dialect, results=results)
    ours = [dialect.entry(event, dialect.events[event], command) for event in events]
    if dialect.trigger_field:
        assert hooks == [*(before if isinstance(before, list) else []), *ours]
        return
    assert isinstance(hooks, dict)
    before = before or {}
    assert isinstance(before, dict)
    for name, entry in zip(events, ours, strict=True):
        assert hooks[name] == [*before.get(name, []), entry]


@fuzz_settings(EXAMPLES)
@given(
    st.binary(max_size=64)
    | st.builds(_written, _SETTINGS, st.booleans(), _LAYOUT).map(
        lambda text: text.encode("utf-8", "replace")
    )
    | st.lists(
        st.sampled_from(['{"', "[", "]", "{", "}", '"hooks"', ":", ",", "1", '"\\ud800"'])
    ).map(lambda parts: "".join(parts).encode())
)
def test_any_bytes_are_installed_into_or_refused_untouched(content: bytes) -> None:
    command = hook_command(["/opt/repeat-guard"], CLAUDE_CODE)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "settings.json"
        path.write_bytes(content)
        try:
            install(str(path), CLAUDE_CODE, command)
        except InstallError:
            assert path.read_bytes() == content
            return
        installed = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
        assert isinstance(json.loads(installed), dict)
        uninstall(str(path), CLAUDE_CODE)
        assert isinstance(
            json.loads(path.read_bytes().decode("utf-8").removeprefix("\ufeff")), dict
        )
