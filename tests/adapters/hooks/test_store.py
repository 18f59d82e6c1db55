"""The SQLite store: one row per agent chain, one transaction per hook call."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from contextlib import closing
from pathlib import Path

import pytest

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    PromptSubmitted,
    ToolCallFinished,
    ToolCallReturned,
)
from repeat_guard_hookcall import default_state_path
from repeat_guard_hooks import (
    DEFAULT_EXPIRE_AFTER,
    AfterCall,
    AgentEvent,
    CorruptStore,
    ForeignStore,
    SessionEnded,
    StoreResult,
    apply_action,
    open_store,
)
from repeat_guard_hooks._store import _migrate, make_private_folders, set_aside

CONFIG = GuardConfig()
LS = {"command": "ls"}


def _call(session: str, agent: str | None = None, arguments: object = LS) -> AgentEvent:
    who = session if agent is None else f"{session}/{agent}"
    return AgentEvent(session, ToolCallFinished(who, "Bash", arguments))


def _apply(path: Path, action: AgentEvent | SessionEnded, now: float = 1000.0) -> StoreResult:
    connection = open_store(str(path))
    try:
        return apply_action(connection, CONFIG, action, now)
    finally:
        connection.close()


def _rows(path: Path) -> list[tuple[str, str, str, float]]:
    with closing(sqlite3.connect(path)) as connection, connection:
        return connection.execute(
            "SELECT session, agent, chain, seen FROM agents ORDER BY session, agent"
        ).fetchall()


def test_state_path_from_the_environment() -> None:
    home = "/home/u"
    assert default_state_path({"REPEAT_GUARD_STATE": "/s.db"}, home) == "/s.db"
    assert default_state_path({"XDG_STATE_HOME": "/x"}, home) == "/x/repeat-guard/state.sqlite3"
    default = "/home/u/.local/state/repeat-guard/state.sqlite3"
    assert default_state_path({}, home) == default
    assert default_state_path({"XDG_STATE_HOME": "rel", "REPEAT_GUARD_STATE": ""}, home) == default


def test_counts_across_connections_and_fires_at_thresholds(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    fired = [(r.count, r.form) for _ in range(8) for r in _apply(path, _call("s")).reminders]
    assert fired == [(3, "gentle"), (5, "detailed"), (8, "detailed")]
    ((session, agent, chain, seen),) = _rows(path)
    assert (session, agent, seen) == ("s", "s", 1000.0)
    assert chain == '[1, "Bash", "{\\"command\\":\\"ls\\"}", 8]'


def test_long_arguments_are_stored_as_a_digest(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    secret = {"content": "x" * 100_000 + "hunter2"}
    _apply(path, _call("s", arguments=secret))
    ((_, _, chain, _),) = _rows(path)
    assert "hunter2" not in chain
    assert len(chain) < 100


def test_file_and_directory_are_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "state.sqlite3"
    connection = open_store(str(path))
    try:
        apply_action(connection, CONFIG, _call("s"), 1.0)
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        for name in ("state.sqlite3", "state.sqlite3-wal", "state.sqlite3-shm"):
            assert stat.S_IMODE(os.stat(path.parent / name).st_mode) == 0o600, name
    finally:
        connection.close()
    # The directory holding the file is private, and so is every one the store made.
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path.parent.parent).st_mode) == 0o700


def test_agents_and_sessions_are_independent(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    for _ in range(2):
        _apply(path, _call("s"))
        _apply(path, _call("s", "sub"))
        _apply(path, _call("t"))
    assert _apply(path, _call("s", "sub")).reminders[0].agent == "s/sub"
    assert [(s, a, c[-2]) for s, a, c, _ in _rows(path)] == [
        ("s", "s", "2"),
        ("s", "s/sub", "3"),
        ("t", "t", "2"),
    ]


def test_prompt_and_disposal_drop_one_chain(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _apply(path, _call("s"))
    _apply(path, _call("s", "sub"))
    _apply(path, AgentEvent("s", PromptSubmitted("s")))
    assert [a for _, a, _, _ in _rows(path)] == ["s/sub"]
    _apply(path, AgentEvent("s", AgentDisposed("s/sub")))
    assert _rows(path) == []


def test_session_end_drops_every_chain_of_the_session_only(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    for action in (_call("s"), _call("s", "a"), _call("s", "b"), _call("t")):
        _apply(path, action)
    assert _apply(path, SessionEnded("s")) == StoreResult(())
    assert [(s, a) for s, a, _, _ in _rows(path)] == [("t", "t")]


def test_chains_unseen_for_the_expiry_time_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _apply(path, _call("old"), now=0.0)
    _apply(path, _call("recent"), now=DEFAULT_EXPIRE_AFTER - 1)
    _apply(path, _call("now"), now=DEFAULT_EXPIRE_AFTER + 1)
    assert [s for s, _, _, _ in _rows(path)] == ["now", "recent"]


@pytest.mark.parametrize("stored", ["not json", '{"a": 1}', '[2, "Bash", "k", 1]', "[[[["])
def test_an_unreadable_row_starts_afresh(tmp_path: Path, stored: str) -> None:
    path = tmp_path / "state.sqlite3"
    _apply(path, _call("s"))
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("UPDATE agents SET chain = ?", (stored,))
    assert _apply(path, _call("s")) == StoreResult((), dropped=1)
    assert _rows(path)[0][2].endswith(", 1]")


def test_a_blob_row_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _apply(path, _call("s"))
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("UPDATE agents SET chain = ?", (b"\x00",))
    assert _apply(path, _call("s")).dropped == 1


def test_threads_with_their_own_connections_lose_no_count(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    open_store(str(path)).close()

    def work() -> None:
        for _ in range(10):
            _apply(path, _call("s"))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _rows(path)[0][2].endswith(", 80]")


def test_a_file_that_is_not_a_database_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    path.write_bytes(b"this is not a database, just some text\n" * 200)
    with pytest.raises(CorruptStore):
        open_store(str(path))


def test_a_damaged_page_is_corrupt_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    for n in range(200):
        _apply(path, _call(f"s{n:03d}"))
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(path.read_bytes())
    data[page_size : 3 * page_size] = b"\xa5" * (2 * page_size)
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptStore):
        _apply(path, _call("s100"))


def test_set_aside_moves_the_file_and_its_wal(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    path.write_bytes(b"junk")
    (tmp_path / "state.sqlite3-wal").write_bytes(b"wal")
    aside = set_aside(str(path), 5.0)
    assert not path.exists()
    assert not (tmp_path / "state.sqlite3-wal").exists()
    assert Path(aside).read_bytes() == b"junk"
    assert Path(aside + "-wal").read_bytes() == b"wal"
    assert aside.startswith(f"{path}.corrupt-5-")


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_another_schema_version_is_left_alone_byte_for_byte(tmp_path: Path, journal: str) -> None:
    # Not a byte written: switching it to WAL (as a store of ours is) would already change it.
    path = tmp_path / "state.sqlite3"
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA journal_mode={journal}")
    connection.execute("CREATE TABLE newer (x)")
    connection.execute("INSERT INTO newer VALUES (1)")
    connection.execute("PRAGMA user_version=99")
    connection.commit()
    connection.close()
    before, modified = path.read_bytes(), path.stat().st_mtime_ns
    with pytest.raises(ForeignStore, match="schema version 99, which this guard") as raised:
        open_store(str(path))
    assert raised.value.version == 99
    assert not isinstance(raised.value, CorruptStore)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == (before, modified)
    assert [child.name for child in tmp_path.iterdir()] == ["state.sqlite3"]


def test_a_store_made_newer_meanwhile_is_not_migrated(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _version_1_store(path)
    first = sqlite3.connect(path, isolation_level=None)
    try:
        with closing(sqlite3.connect(path)) as newer, newer:  # a newer guard, first
            newer.execute("PRAGMA user_version=99")
        with pytest.raises(ForeignStore):
            _migrate(first)  # what the first would do next: re-read, find 99, change nothing
    finally:
        first.close()
    with closing(sqlite3.connect(path)) as connection, connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (99,)


def test_a_locked_store_times_out_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _apply(path, _call("s"))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        connection = open_store(str(path), busy_timeout=0.05)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            apply_action(connection, CONFIG, _call("s"), 1.0)
        assert not connection.in_transaction
        connection.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _rows(path)[0][2].endswith(", 1]")


def test_a_failure_inside_the_transaction_rolls_it_back(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _apply(path, _call("s"))
    not_an_event: Event = "junk"  # type: ignore[assignment]  # misuse, on purpose
    connection = open_store(str(path))
    with pytest.raises(AttributeError):
        apply_action(connection, CONFIG, AgentEvent("s", not_an_event), 2.0)
    assert not connection.in_transaction
    with closing(sqlite3.connect(path)) as other, other:
        other.execute("DROP TABLE agents")
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        apply_action(connection, CONFIG, _call("s"), 3.0)
    assert not connection.in_transaction
    connection.close()


BUDGET = GuardConfig(budgets=(("Bash", 3),), exclude=("Bash",))
CYCLE = GuardConfig(cycle_period=2, cycle_thresholds=(2,))


def _apply_with(
    path: Path, config: GuardConfig, action: AgentEvent | SessionEnded, now: float = 1000.0
) -> StoreResult:
    connection = open_store(str(path))
    try:
        return apply_action(connection, config, action, now)
    finally:
        connection.close()


def _memories(path: Path) -> list[tuple[str, str | None, str | None, str | None]]:
    with closing(sqlite3.connect(path)) as connection, connection:
        return connection.execute(
            "SELECT agent, chain, memory, memory_for FROM agents ORDER BY agent"
        ).fetchall()


def test_with_every_policy_off_no_memory_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _apply(path, _call("s"))
    assert _memories(path) == [("s", '[1, "Bash", "{\\"command\\":\\"ls\\"}", 1]', None, None)]


def test_a_budget_is_remembered_across_connections_without_a_chain(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    fired = [[r.form for r in _apply_with(path, BUDGET, _call("s")).reminders] for _ in range(4)]
    assert fired == [[], [], ["budget"], []]
    # Bash is excluded, so the agent has no chain: the row holds the memory alone.
    assert _memories(path) == [("s", None, "[2, [], [], null, [4], null]", '[0, [["Bash", 3]]]')]


def test_a_cycle_is_remembered_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    calls = [_call("s", arguments={"command": c}) for c in ("a", "b") * 3]
    fired = [[r.form for r in _apply_with(path, CYCLE, call).reminders] for call in calls]
    assert fired == [[], [], [], ["cycle"], [], []]


def test_a_memory_made_under_other_policy_settings_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    for _ in range(2):
        _apply_with(path, BUDGET, _call("s"))
    # A second budget changes what each count means: the memory is dropped, not misread.
    changed = GuardConfig(budgets=(("Grep", 1), ("Bash", 3)), exclude=("Bash",))
    assert _apply_with(path, changed, _call("s")) == StoreResult(())
    assert _memories(path)[0][2:] == (
        "[2, [], [], null, [0, 1], null]",
        '[0, [["Grep", 1], ["Bash", 3]]]',
    )
    # Back under the default config the chain is kept and the memory goes.
    _apply(path, _call("s"))
    assert _memories(path)[0][2:] == (None, None)


def test_a_memory_that_empties_is_stored_as_null(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    config = GuardConfig(progress="result")
    event = ToolCallFinished("s", "Bash", LS, result="out")
    _apply_with(path, config, AgentEvent("s", event))
    # The result's key is its canonical text, short enough to be kept as it is.
    assert _memories(path)[0][2] == '[2, [], [], "\\"out\\"", [], null]'
    # The same call again, its result not reported: the one before is kept for it.
    _apply_with(path, config, _call("s"))
    assert _memories(path)[0][2] == '[2, [], [], null, [], "\\"out\\""]'
    # Another call, its result not reported either, leaves nothing to remember.
    _apply_with(path, config, _call("s", arguments={"command": "pwd"}))
    assert _memories(path)[0][2:] == (None, None)


# The last: a memory that decodes but has two budget counts under one budget's settings.
@pytest.mark.parametrize(
    "stored", ["junk", "[1, [], [], null]", "5", "[2, [], [], null, [1, 1], null]"]
)
def test_an_unreadable_memory_starts_the_agent_afresh(tmp_path: Path, stored: str) -> None:
    path = tmp_path / "state.sqlite3"
    for _ in range(2):
        _apply_with(path, BUDGET, _call("s"))
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("UPDATE agents SET memory = ?", (stored,))
    assert _apply_with(path, BUDGET, _call("s")) == StoreResult((), dropped=1)
    assert _memories(path)[0][2] == "[2, [], [], null, [1], null]"


def test_a_memory_written_in_version_1_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _apply_with(path, BUDGET, _call("s"))
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("UPDATE agents SET memory = ?", ("[1, [], [], null, [2]]",))
    fired = _apply_with(path, BUDGET, _call("s"))
    assert (fired.dropped, [r.form for r in fired.reminders]) == (0, ["budget"])
    assert _memories(path)[0][2] == "[2, [], [], null, [3], null]"


def _version_1_store(path: Path) -> None:
    # The schema as version 1 created it, with one chain at 2.
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute(
            "CREATE TABLE chains (session TEXT NOT NULL, agent TEXT NOT NULL, "
            "chain TEXT NOT NULL, seen REAL NOT NULL, PRIMARY KEY (session, agent)) WITHOUT ROWID"
        )
        connection.execute("CREATE INDEX chains_by_seen ON chains (seen)")
        connection.execute(
            "INSERT INTO chains VALUES ('s', 's', ?, 1000.0)",
            ('[1, "Bash", "{\\"command\\":\\"ls\\"}", 2]',),
        )
        connection.execute("PRAGMA user_version=1")


def test_a_version_1_store_is_migrated_and_keeps_its_chains(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _version_1_store(path)
    assert [r.count for r in _apply(path, _call("s")).reminders] == [3]
    with closing(sqlite3.connect(path)) as connection, connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (2,)
        tables = connection.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall()
    assert tables == [("agents",), ("agents_by_seen",)]


def test_a_migration_that_fails_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _version_1_store(path)
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("CREATE TABLE agents (x)")  # in the way of the new table's index
    with pytest.raises(sqlite3.OperationalError):
        open_store(str(path))
    with closing(sqlite3.connect(path)) as connection, connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (1,)
        assert connection.execute("SELECT count(*) FROM chains").fetchone() == (1,)


def test_a_store_migrated_meanwhile_is_not_migrated_twice(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _version_1_store(path)
    first = sqlite3.connect(path, isolation_level=None)
    try:
        assert first.execute("PRAGMA user_version").fetchone() == (1,)
        open_store(str(path)).close()  # another hook migrates first
        _migrate(first)  # what the first would do next: re-read, find 2, change nothing
        assert first.execute("PRAGMA user_version").fetchone() == (2,)
    finally:
        first.close()
    assert _apply(path, _call("s")).reminders[0].count == 3


def test_a_call_at_deny_at_is_refused_and_still_counted(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    config = GuardConfig(deny_at=4)
    results = [_apply_with(path, config, _call("s")) for _ in range(5)]
    assert [r.denied is not None for r in results] == [False, False, False, True, True]
    assert results[3].denied == (
        "refused: this would be the 4th identical call to `Bash` in a row, and the limit is "
        "reached. Change the arguments or the approach, or finish your answer."
    )
    # The refused attempts counted: the fifth is the detailed reminder's, refused or not.
    assert [(r.count, r.form) for r in results[4].reminders] == [(5, "detailed")]
    assert _rows(path)[0][2].endswith(", 5]")


def test_a_spent_budget_refuses_the_next_call_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    results = [_apply_with(path, BUDGET, _call("s")) for _ in range(4)]
    assert [r.denied is not None for r in results] == [False, False, False, True]
    assert "budget of 3 calls to tools matching `Bash`" in str(results[3].denied)
    # Another agent's budget is its own.
    assert _apply_with(path, BUDGET, _call("s", "sub")).denied is None


def test_other_events_are_never_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    config = GuardConfig(deny_at=2)
    _apply_with(path, config, _call("s"))
    assert _apply_with(path, config, AgentEvent("s", PromptSubmitted("s"))) == StoreResult(())
    assert _apply_with(path, config, SessionEnded("s")) == StoreResult(())


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o277])
def test_every_folder_the_store_makes_is_private_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    # A nested REPEAT_GUARD_STATE under umask 000: each folder made is 0700, not only the last.
    (tmp_path / "kept").mkdir(mode=0o755)
    path = tmp_path / "kept" / "a" / "b" / "c" / "state.sqlite3"
    previous = os.umask(umask)
    try:
        open_store(str(path)).close()
    finally:
        os.umask(previous)
    made = [path.parent, path.parent.parent, path.parent.parent.parent]
    assert [stat.S_IMODE(os.stat(folder).st_mode) for folder in made] == [0o700] * 3
    assert stat.S_IMODE(os.stat(tmp_path / "kept").st_mode) == 0o755  # not made: left alone


def test_a_folder_made_meanwhile_is_used_and_a_file_in_the_way_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = tmp_path / "raced"
    mkdir = os.mkdir

    def racing(folder: str, mode: int = 0o777) -> None:
        mkdir(folder, 0o755)  # another hook process, first
        mkdir(folder, mode)

    monkeypatch.setattr(os, "mkdir", racing)
    make_private_folders(str(made))
    monkeypatch.undo()
    assert stat.S_IMODE(os.stat(made).st_mode) == 0o755  # its folder, as it made it
    (tmp_path / "file").write_text("")
    for folder in (tmp_path / "file", tmp_path / "file" / "below"):
        with pytest.raises(FileExistsError):
            make_private_folders(str(folder))


def _carried(
    path: Path, action: AgentEvent | SessionEnded | AfterCall, now: float = 1000.0
) -> StoreResult:
    connection = open_store(str(path))
    try:
        return apply_action(connection, CONFIG, action, now, carry=True)
    finally:
        connection.close()


def _pending(path: Path) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(path)) as connection, connection:
        return list(connection.execute("SELECT session, agent FROM pending"))


def test_carried_reminders_wait_for_the_call_after(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    results = [_carried(path, _call("s")) for _ in range(3)]
    # The third call's reminder is not answered at the call: it waits for the call's end.
    assert [r.reminders for r in results] == [(), (), ()]
    assert _pending(path) == [("s", "s")]
    (gentle,) = [r for _ in range(3) for r in _apply(tmp_path / "plain.db", _call("s")).reminders]
    taken = _carried(path, AfterCall("s", "s"))
    assert taken == StoreResult((gentle,))
    assert _pending(path) == []
    assert _carried(path, AfterCall("s", "s")) == StoreResult(())


def test_carried_reminders_add_up_and_a_refusal_answers_its_own(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    config = GuardConfig(thresholds=(2, 3, 4), deny_at=4)
    connection = open_store(str(path))
    try:
        for _ in range(3):  # the 2nd's and the 3rd's reminders wait, neither taken between
            assert apply_action(connection, config, _call("s"), 1000.0, carry=True).reminders == ()
        refused = apply_action(connection, config, _call("s"), 1000.0, carry=True)
        taken = apply_action(connection, config, AfterCall("s", "s"), 1000.0, carry=True)
    finally:
        connection.close()
    assert refused.denied is not None
    assert [r.count for r in refused.reminders] == [4]  # a refused call has no call after it
    assert [r.count for r in taken.reminders] == [2, 3]


def test_a_prompt_a_disposal_and_the_sessions_end_drop_carried_reminders(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    for who in ("s", "s/a", "t"):
        session, _, agent = who.partition("/")
        for _ in range(3):
            _carried(path, _call(session, agent or None))
    assert sorted(_pending(path)) == [("s", "s"), ("s", "s/a"), ("t", "t")]
    _carried(path, AgentEvent("s", PromptSubmitted("s")))
    _carried(path, AgentEvent("s", AgentDisposed("s/a")))
    assert _pending(path) == [("t", "t")]
    # A result changes no reminder that waits.
    _carried(path, AgentEvent("t", ToolCallReturned("t", "Bash", LS, "out")))
    assert _pending(path) == [("t", "t")]
    _carried(path, SessionEnded("t"))
    assert _pending(path) == []


def test_carried_reminders_expire_and_a_broken_row_gives_none(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    for _ in range(3):
        _carried(path, _call("s"), now=1000.0)
    later = 1000.0 + DEFAULT_EXPIRE_AFTER + 1
    assert _carried(path, AfterCall("s", "s"), now=later) == StoreResult(())
    for _ in range(3):
        _carried(path, _call("t"))
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute('UPDATE pending SET reminders = \'{"not": "a list"}\'')
    assert _carried(path, AfterCall("t", "t")) == StoreResult(())
    assert _pending(path) == []
