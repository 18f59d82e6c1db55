"""One hook call end to end, in process: the answer, the fail-open paths and the config search."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from contextlib import closing
from pathlib import Path

import pytest

from repeat_guard_hookcall import INPUT_LIMIT, resolve_state
from repeat_guard_hooks import (
    CLAUDE_CODE,
    CODEX,
    EXIT_BAD_CONFIG,
    LOG_LIMIT,
    HookInput,
    HookOptions,
    HookOutcome,
    find_config_file,
    hook_input_or_reason,
    run_hook,
)


def _pre(cwd: Path | str, session: str = "s", command: str = "ls", tool: str = "Bash") -> bytes:
    payload = {
        "session_id": session,
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"command": command},
    }
    return json.dumps(payload).encode()


def _options(tmp_path: Path, **changes: object) -> HookOptions:
    fields: dict[str, object] = {"dialect": CLAUDE_CODE, "state": str(tmp_path / "st.db")}
    fields.update(changes)
    return HookOptions(**fields)  # type: ignore[arg-type]  # the test's own fields


def _log(tmp_path: Path) -> list[str]:
    path = tmp_path / "st.db.log"
    return path.read_text().splitlines() if path.exists() else []


def _contexts(options: HookOptions, data: bytes, times: int) -> list[str | None]:
    answers: list[str | None] = []
    for _ in range(times):
        outcome = run_hook(options, data, 100.0)
        assert outcome.status == 0
        assert outcome.stderr == ""
        answer = json.loads(outcome.stdout) if outcome.stdout else None
        answers.append(
            None if answer is None else answer["hookSpecificOutput"]["additionalContext"]
        )
    return answers


def test_the_third_and_fifth_identical_calls_get_reminders(tmp_path: Path) -> None:
    answers = _contexts(_options(tmp_path), _pre(tmp_path), 5)
    assert [a is not None for a in answers] == [False, False, True, False, True]
    assert answers[2] is not None
    assert answers[2].startswith("You are repeating")
    assert answers[4] is not None
    assert "`Bash` 5 times" in answers[4]
    assert _log(tmp_path) == []


def test_resolve_state_prefers_the_flag() -> None:
    assert resolve_state("/flag.db", {"REPEAT_GUARD_STATE": "/env.db"}, "/h") == "/flag.db"
    assert resolve_state(None, {"REPEAT_GUARD_STATE": "/env.db"}, "/h") == "/env.db"


def test_unused_events_touch_nothing(tmp_path: Path) -> None:
    data = json.dumps({"hook_event_name": "Stop", "session_id": "s"}).encode()
    assert run_hook(_options(tmp_path), data, 1.0) == HookOutcome(0)
    assert list(tmp_path.iterdir()) == []


def test_garbage_stdin_fails_open_with_one_log_line(tmp_path: Path) -> None:
    assert run_hook(_options(tmp_path), b"\x00garbage hunter2", 0.0) == HookOutcome(0)
    (line,) = _log(tmp_path)
    assert line.startswith("1970-01-01T00:00:00Z pid=")
    assert line.endswith(" claude-code ?: stdin is not JSON")
    assert "hunter2" not in line
    assert stat.S_IMODE((tmp_path / "st.db.log").stat().st_mode) == 0o600


def test_the_first_failure_in_a_new_state_folder_is_logged(tmp_path: Path) -> None:
    # The store makes its folders only when it opens; a hook failing before that makes them
    # too, each 0700 even under umask 000, not only the last.
    options = _options(tmp_path, state=str(tmp_path / "new" / "deeper" / "st.db"))
    previous = os.umask(0)
    try:
        assert run_hook(options, b"garbage", 0.0) == HookOutcome(0)
    finally:
        os.umask(previous)
    (line,) = (tmp_path / "new" / "deeper" / "st.db.log").read_text().splitlines()
    assert line.endswith(" claude-code ?: stdin is not JSON")
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new" / "deeper").stat().st_mode) == 0o700


def test_a_log_that_is_not_a_regular_file_is_passed_over(tmp_path: Path) -> None:
    # Opening a FIFO for writing waits for a reader: the hook must never wait on its log. Here
    # a reader holds it open, so a line written to it would arrive.
    log = tmp_path / "st.db.log"
    os.mkfifo(log)
    reader = os.open(log, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert run_hook(_options(tmp_path), b"garbage", 0.0) == HookOutcome(0)
        assert os.read(reader, 4096) == b""  # its writer came and went, writing nothing
    finally:
        os.close(reader)
    os.unlink(log)
    os.mkfifo(log)  # and with no reader at all, the open fails at once
    assert run_hook(_options(tmp_path), b"garbage", 0.0) == HookOutcome(0)


def test_the_log_is_kept_to_two_files_of_about_the_limit(tmp_path: Path) -> None:
    log = tmp_path / "st.db.log"
    log.write_bytes(b"x" * (LOG_LIMIT - 2) + b"\n")
    assert run_hook(_options(tmp_path), b"not json", 1.0) == HookOutcome(0)
    below = log.read_bytes()  # under the limit before the line: the line went into it
    assert below.startswith(b"x" * (LOG_LIMIT - 2) + b"\n1970-01-01T00:00:01Z ")
    assert run_hook(_options(tmp_path), b"not json", 2.0) == HookOutcome(0)
    assert (tmp_path / "st.db.log.1").read_bytes() == below
    (line,) = _log(tmp_path)
    assert line.startswith("1970-01-01T00:00:02Z ")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_a_full_log_another_hook_renamed_meanwhile_is_not_renamed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "st.db.log"
    log.write_bytes(b"new\n")  # what another hook began after renaming the full one
    real_fstat = os.fstat

    def full_and_gone(descriptor: int) -> os.stat_result:
        # The file this hook opened, as it was: full, and no longer the one at the path.
        fields = list(real_fstat(descriptor))
        fields[1], fields[6] = fields[1] + 1, LOG_LIMIT
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", full_and_gone)
    assert run_hook(_options(tmp_path), b"not json", 3.0) == HookOutcome(0)
    assert not (tmp_path / "st.db.log.1").exists()
    assert _log(tmp_path)[0] == "new"
    assert _log(tmp_path)[1].startswith("1970-01-01T00:00:03Z ")


def test_lone_surrogates_are_counted_in_arguments_and_fail_open_in_ids(tmp_path: Path) -> None:
    # Valid JSON escapes that UTF-8 (and so SQLite's text) cannot hold.
    call = {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "\udc00"}
    data = json.dumps({**call, "tool_input": {"\ud800": "\udfff"}}).encode()
    assert [run_hook(_options(tmp_path), data, 1.0).stdout != b"" for _ in range(3)] == [
        False,
        False,
        True,
    ]
    assert _log(tmp_path) == []
    for key in ("session_id", "agent_id"):
        bad = json.dumps({**call, key: "\ud800", "tool_input": {}}).encode()
        assert run_hook(_options(tmp_path), bad, 2.0) == HookOutcome(0)
        assert _log(tmp_path)[-1].endswith(f"?: PreToolUse: {key} holds a lone surrogate")


def test_a_budget_pattern_holding_a_lone_surrogate_is_remembered(tmp_path: Path) -> None:
    # Only JSON can write one ("\\ud800" is a valid escape); the store must still hold it.
    config = tmp_path / "guard.json"
    config.write_text('{"budgets": {"\\ud800*": 2, "Bash": 3}}')
    forms = _forms(_options(tmp_path, config=str(config)), [_pre(tmp_path)] * 3)
    assert forms == [[], [], ["gentle", "budget"]]
    assert _log(tmp_path) == []


def test_a_config_file_found_above_cwd_applies(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "src" / "deep").mkdir(parents=True)
    (project / ".repeat-guard.toml").write_text("thresholds = [2]\n")
    answers = _contexts(_options(tmp_path), _pre(project / "src" / "deep"), 2)
    assert answers[0] is None
    assert answers[1] is not None


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / ".repeat-guard.toml").write_text("thresholds = [2]\n")
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    assert find_config_file(str(project)) is None
    assert find_config_file(str(tmp_path / "elsewhere")) == str(tmp_path / ".repeat-guard.toml")
    assert find_config_file("relative/dir") is None
    assert find_config_file(None) is None
    assert find_config_file("/") is None or Path("/.repeat-guard.toml").is_file()


def test_an_invalid_config_names_the_file_and_the_key(tmp_path: Path) -> None:
    config = tmp_path / "guard.toml"
    config.write_text("thresholds = [1]\n")
    outcome = run_hook(_options(tmp_path, config=str(config)), _pre(tmp_path), 1.0)
    assert outcome.status == EXIT_BAD_CONFIG == 1
    assert outcome.stdout == b""
    assert outcome.stderr.startswith(f"repeat-guard: invalid configuration in {config}: key ")
    assert "'thresholds'" in outcome.stderr
    assert outcome.stderr.endswith("\n")
    # Another host shows another status as an error that does not stop the call: its row says.
    other = CLAUDE_CODE._replace(name="other", error_status=7)
    outcome = run_hook(_options(tmp_path, config=str(config), dialect=other), _pre(tmp_path), 1.0)
    assert (outcome.status, outcome.stdout) == (7, b"")


def test_an_unreadable_config_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    outcome = run_hook(_options(tmp_path, config=str(missing)), _pre(tmp_path), 1.0)
    assert outcome.status == 1
    assert (
        outcome.stderr
        == f"repeat-guard: cannot read config file {missing}: No such file or directory\n"
    )


def test_a_config_that_is_not_a_regular_file_is_refused_unread(tmp_path: Path) -> None:
    # A hook waiting on a FIFO, or reading /dev/zero, would hold up the agent's tool call.
    fifo = tmp_path / "guard.toml"
    os.mkfifo(fifo)
    for config in (str(fifo), os.devnull):
        outcome = run_hook(_options(tmp_path, config=config), _pre(tmp_path), 1.0)
        assert outcome == HookOutcome(
            1, b"", f"repeat-guard: cannot read config file {config}: not a regular file\n"
        )


def test_an_unusable_state_path_fails_open(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    options = _options(tmp_path, state=str(blocker / "st.db"))
    assert run_hook(options, _pre(tmp_path), 1.0) == HookOutcome(0)
    assert _log(tmp_path) == []  # the log beside the state cannot be written either


def test_a_locked_store_fails_open(tmp_path: Path) -> None:
    options = _options(tmp_path, busy_timeout=0.05)
    run_hook(options, _pre(tmp_path), 1.0)
    holder = sqlite3.connect(options.state, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert run_hook(options, _pre(tmp_path), 2.0) == HookOutcome(0)
    finally:
        holder.close()
    (line,) = _log(tmp_path)
    assert line.endswith("PreToolUse: state store unusable: OperationalError SQLITE_BUSY")


def test_another_schema_version_fails_open_and_the_log_says_why(tmp_path: Path) -> None:
    options = _options(tmp_path)
    with closing(sqlite3.connect(options.state)) as connection, connection:
        connection.execute("PRAGMA user_version=99")
    before = Path(options.state).read_bytes()
    assert run_hook(options, _pre(tmp_path), 1.0) == HookOutcome(0)
    assert Path(options.state).read_bytes() == before
    (line,) = _log(tmp_path)
    assert line.endswith(
        " PreToolUse: stood aside: state store of schema version 99, which this guard does not"
        " know (it writes 2), left unchanged"
    )


def test_a_corrupt_store_is_set_aside_and_counting_starts_afresh(tmp_path: Path) -> None:
    options = _options(tmp_path, dialect=CODEX)
    Path(options.state).write_bytes(b"not a database " * 100)
    _contexts(options, _pre(tmp_path), 1)
    (line,) = _log(tmp_path)
    assert " codex -: state store corrupt (SQLITE_NOTADB); set aside as " in line
    aside = line.rsplit(" ", 1)[1]
    assert Path(aside).read_bytes().startswith(b"not a database")
    answers = _contexts(options, _pre(tmp_path), 2)
    assert answers[1] is not None
    assert answers[1].startswith("<system-reminder>")


def test_unreadable_rows_are_logged(tmp_path: Path) -> None:
    options = _options(tmp_path)
    run_hook(options, _pre(tmp_path), 1.0)
    with closing(sqlite3.connect(options.state)) as connection, connection:
        connection.execute("UPDATE agents SET chain = 'junk'")
    run_hook(options, _pre(tmp_path), 2.0)
    (line,) = _log(tmp_path)
    assert line.endswith("PreToolUse: 1 unreadable chain(s) started afresh")


def test_an_internal_error_fails_open_and_logs_no_message(tmp_path: Path) -> None:
    options = _options(tmp_path, expire_after="7 days")  # misuse, on purpose
    assert run_hook(options, _pre(tmp_path, command="secret-arg"), 1.0) == HookOutcome(0)
    (line,) = _log(tmp_path)
    assert " PreToolUse: internal error: TypeError at _store.py:" in line
    assert "secret-arg" not in line


def _forms(options: HookOptions, calls: list[bytes]) -> list[list[str]]:
    """The reminder kinds each call's answer carries, one hook process's worth at a time."""
    forms: list[list[str]] = []
    for data in calls:
        outcome = run_hook(options, data, 100.0)
        assert (outcome.status, outcome.stderr) == (0, "")
        context = json.loads(outcome.stdout)["hookSpecificOutput"] if outcome.stdout else {}
        text = context.get("additionalContext", "")
        forms.append([form for form, mark in _MARKS.items() if mark in text])
    return forms


_MARKS = {
    "gentle": "You are repeating the exact same tool call.",
    "cycle": "You have repeated the same cycle of",
    "budget": "which is the budget for them",
}


def test_a_budget_and_a_cycle_from_the_config_file_hold_across_hook_calls(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".repeat-guard.toml").write_text(
        'cyclePeriod = 2\ncycleThresholds = [2]\nbudgets = {"Bash" = 5}\n'
    )
    calls = [_pre(tmp_path, command=command) for command in ("a", "b", "a", "b", "a")]
    forms = _forms(_options(tmp_path), calls)
    # a b a b: the cycle's second round; the fifth Bash call spends the budget.
    assert forms == [[], [], [], ["cycle"], ["budget"]]
    assert _log(tmp_path) == []


def test_deny_at_from_the_config_file_refuses_the_call_before_it_runs(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".repeat-guard.toml").write_text("denyAt = 4\n")
    outputs = []
    for _ in range(5):
        outcome = run_hook(_options(tmp_path), _pre(tmp_path), 100.0)
        assert (outcome.status, outcome.stderr) == (0, "")
        outputs.append(json.loads(outcome.stdout)["hookSpecificOutput"] if outcome.stdout else {})
    decisions = [output.get("permissionDecision") for output in outputs]
    assert decisions == [None, None, None, "deny", "deny"]
    assert outputs[3]["permissionDecisionReason"].startswith(
        "refused: this would be the 4th identical call to `Bash` in a row"
    )
    assert "additionalContext" not in outputs[3]
    # The refused fourth call counted: the fifth gets the detailed reminder beside its refusal.
    assert "`Bash` 5 times" in outputs[4]["additionalContext"]
    assert _log(tmp_path) == []


def _post(cwd: Path | str, output: str, command: str = "ls", tool: str = "Bash") -> bytes:
    payload = json.loads(_pre(cwd, command=command, tool=tool))
    payload.update(hook_event_name="PostToolUse", tool_response={"stdout": output})
    return json.dumps(payload).encode()


def test_results_at_post_tool_use_are_progress_under_progress_result(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".repeat-guard.toml").write_text('progress = "result"\n')
    options = _options(tmp_path)
    outputs = ["10%", "60%", "done", "done", "done", "done"]
    calls = [data for output in outputs for data in (_pre(tmp_path), _post(tmp_path, output))]
    forms = _forms(options, calls)
    # A result never gets an answer; the fifth call is the third since the output last changed.
    assert forms[1::2] == [[]] * 6
    assert forms[::2] == [[], [], [], [], ["gentle"], []]
    assert _log(tmp_path) == []


def test_without_progress_result_a_post_tool_use_leaves_the_store_shut(tmp_path: Path) -> None:
    # Grep is in no preset (Claude Code's names its shell, Bash, and Read among its polls).
    options = _options(tmp_path)
    assert run_hook(options, _post(tmp_path, "x", tool="Grep"), 100.0) == HookOutcome(0)
    assert list(tmp_path.iterdir()) == []
    # Without it, changing results are not progress: the third identical call reminds.
    calls = [
        data
        for output in "abc"
        for data in (_pre(tmp_path, tool="Grep"), _post(tmp_path, output, tool="Grep"))
    ]
    assert _forms(options, calls) == [[], [], [], [], ["gentle"], []]


def test_an_event_over_the_input_limit_is_not_parsed(tmp_path: Path) -> None:
    # At the limit an event is read; one byte over, the hook stands aside and says why.
    padding = INPUT_LIMIT - len(_pre(tmp_path)) - len(', "pad": ""')
    event = json.loads(_pre(tmp_path))
    event["pad"] = "x" * padding
    at_limit = json.dumps(event).encode()
    assert len(at_limit) == INPUT_LIMIT
    assert isinstance(hook_input_or_reason(CLAUDE_CODE, at_limit), HookInput)
    over = at_limit[:-1] + b" }"
    assert hook_input_or_reason(CLAUDE_CODE, over) == (
        f"stdin holds more than {INPUT_LIMIT} bytes (INPUT_LIMIT); stood aside"
    )
    options = _options(tmp_path)
    assert run_hook(options, over, 0.0) == HookOutcome(0)
    assert not Path(options.state).exists()
    assert _log(tmp_path)[0].endswith(
        " ?: stdin holds more than 16777216 bytes (INPUT_LIMIT); stood aside"
    )
