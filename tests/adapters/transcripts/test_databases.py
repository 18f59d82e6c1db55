"""The readers of SQLite databases: opencode's (recorded with the real opencode) and goose's
(built with goose's own schema). Counts made by hand from what each fixture holds."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from repeat_guard import GuardConfig, PromptSubmitted, ToolCallFinished
from repeat_guard_audit import AuditSettings, FileJob, audit_file
from repeat_guard_transcripts import (
    READERS,
    Diagnostic,
    FileSummary,
    Fired,
    Item,
    Located,
    PathReading,
    SessionSeen,
    Unfinished,
    replay,
    sniff_format,
    walk,
)
from repeat_guard_transcripts import _sqlite as sqlite_module

FIXTURES = Path(__file__).parent / "fixtures"
OPENCODE = FIXTURES / "opencode" / "opencode.db"
GOOSE = FIXTURES / "goose" / "sessions.db"


def _copy(source: Path, folder: Path) -> str:
    target = folder / source.name
    shutil.copyfile(source, target)
    return str(target)


def _read(fmt: str, path: str) -> list[Item]:
    reader = READERS[fmt]
    assert isinstance(reader, PathReading)
    return list(reader.read_path(path, path))


def _summary(path: str, fmt: str) -> tuple[list[Fired], FileSummary, list[Diagnostic]]:
    outcomes = list(replay(iter(_read(fmt, path)), GuardConfig(), file=path))
    summary = outcomes[-1]
    assert isinstance(summary, FileSummary)
    fired = [o for o in outcomes if isinstance(o, Fired)]
    return fired, summary, [o for o in outcomes if isinstance(o, Diagnostic)]


def test_opencode_tool_parts_are_calls_user_messages_prompts_a_rejection_a_denial(
    tmp_path: Path,
) -> None:
    path = _copy(OPENCODE, tmp_path)
    assert sniff_format(path) == "opencode"
    items = list(_read("opencode", path))
    calls = [i.event for i in items if isinstance(i, Located)]
    # Session 1: a prompt, bash ls three times; a second prompt, bash ls twice. Session 2 (its
    # project denies bash by asking, and `opencode run` rejects): a prompt, one call rejected.
    kinds = [
        "prompt" if isinstance(e, PromptSubmitted) else ("denied" if e.denied else e.tool)
        for e in calls
        if isinstance(e, PromptSubmitted | ToolCallFinished)
    ]
    assert kinds == ["prompt", "bash", "bash", "bash", "prompt", "bash", "bash", "prompt", "denied"]
    first = calls[1]
    assert isinstance(first, ToolCallFinished)
    assert first.arguments == {"command": "ls", "description": "List files"}
    assert first.result == "opencode.json\n"
    fired, summary, problems = _summary(path, "opencode")
    assert problems == []
    assert len(summary.sessions) == 2
    counts = summary.tally
    # Runs of 3 and 2 (a prompt ends a run), then the denied call: 6 calls, 2 + 1 wasted.
    assert (counts.calls, counts.wasted, counts.denied, counts.longest_run) == (6, 3, 1, 3)
    assert [(f.reminder.tool, f.reminder.count) for f in fired] == [("bash", 3)]
    assert summary.unfinished == 0
    # Every assistant message with a call says tokens {"input": 10, "output": 5, "reasoning":
    # 0, "cache": {"write": 0, "read": 0}}: each of the 6 calls carries 5 out and 10 in.
    steps = [(i.tokens, i.input_tokens) for i in items if isinstance(i, Located)]
    assert [step for step in steps if step != (None, None)] == [(5, 10)] * 6


def test_opencode_a_messages_tokens_go_with_its_first_call_that_counts(tmp_path: Path) -> None:
    running = {"type": "tool", "tool": "bash", "state": {"status": "running", "input": {}}}
    done = {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {}}}
    parts: list[tuple[object, object]] = [
        ("p1", json.dumps(running)),
        ("p2", json.dumps(done)),
        ("p3", json.dumps(done)),
    ]
    # opencode keeps the cached tokens out of input and the reasoning out of output.
    tokens = {"input": 50, "output": 7, "reasoning": 30, "cache": {"read": 900, "write": 40}}
    expected: list[tuple[object, list[tuple[int | None, int | None]]]] = [
        (tokens, [(37, 990), (None, None)]),
        ({"output": 7, "cache": "none"}, [(7, None), (None, None)]),
        ({"cache": {"read": 900}}, [(None, 900), (None, None)]),
        ("none", [(None, None), (None, None)]),
    ]
    for n, (given, steps) in enumerate(expected):
        message = json.dumps({"role": "assistant", "tokens": given})
        path = _opencode_db(tmp_path / f"{n}.db", parts, message)
        calls = [i for i in _read("opencode", path) if isinstance(i, Located)]
        assert [(c.tokens, c.input_tokens) for c in calls] == steps


def test_goose_requests_and_responses_pair_by_id_in_each_session(tmp_path: Path) -> None:
    path = _copy(GOOSE, tmp_path)
    assert sniff_format(path) == "goose"
    fired, summary, problems = _summary(path, "goose")
    # Session 1: three identical shell calls, a prompt, the same call declined, then asked for
    # again with no answer. Session 2: a request goose could not parse (a note), one call
    # whose tool failed.
    counts = summary.tally
    assert (counts.calls, counts.wasted, counts.denied, counts.longest_run) == (5, 2, 1, 3)
    assert [(f.reminder.tool, f.reminder.count) for f in fired] == [("developer__shell", 3)]
    assert (summary.unfinished, summary.errors, summary.notes) == (1, 0, 1)
    assert [(p.line, p.message) for p in problems] == [
        (14, "a tool request goose could not parse ('bad'): no call")
    ]
    items = list(_read("goose", path))
    (unfinished,) = [i for i in items if isinstance(i, Unfinished)]
    assert (unfinished.where.line, unfinished.tool) == (12, "developer__shell")
    last = [i for i in items if isinstance(i, Located)][-1].event
    assert isinstance(last, ToolCallFinished)
    assert (last.tool, last.result) == ("developer__text_editor", "File does not exist")


@pytest.mark.parametrize("fmt", ["opencode", "goose"])
def test_a_database_is_not_read_from_a_stream(fmt: str) -> None:
    (problem,) = READERS[fmt].read([b"SQLite format 3\x00"], "<stdin>")
    assert isinstance(problem, Diagnostic)
    assert problem.message.endswith("is read from its file, not from a stream")


@pytest.mark.parametrize("fmt", ["opencode", "goose"])
def test_a_file_that_is_no_database_is_a_diagnostic(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "x.db"
    path.write_bytes(b"hello, this is not a database at all\n" * 100)
    problems = _read(fmt, str(path))
    assert [(p.line, p.message) for p in problems if isinstance(p, Diagnostic)] == [
        (0, "database read failed: file is not a database")
    ]
    missing = tmp_path / "missing.db"
    (problem,) = _read(fmt, str(missing))
    assert isinstance(problem, Diagnostic)
    assert problem.message.startswith("cannot open the database: ")
    assert not missing.exists()  # read-only: never created


def test_a_database_a_writer_holds_is_skipped_with_a_note(tmp_path: Path) -> None:
    path = _copy(GOOSE, tmp_path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        items = _read("goose", path)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert items == [
        Diagnostic(path, 0, "the database is busy (a writer holds it), skipped", "note")
    ]


def test_rows_are_read_a_chunk_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _copy(GOOSE, tmp_path)
    monkeypatch.setattr(sqlite_module, "CHUNK_ROWS", 2)
    _, summary, _ = _summary(path, "goose")
    assert summary.tally.calls == 5


CONVERSATION = FIXTURES / "openhands" / "conversation"


def test_an_openhands_conversation_folder_is_one_input_read_as_its_events(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "conversations" / "c1"
    shutil.copytree(CONVERSATION, folder)
    # A walk gives the folder, not its 16 event files, and the audit reads it as one file.
    assert list(walk([str(tmp_path)])) == [(str(folder), True)]
    result = audit_file(FileJob(str(folder), None, 0, walked=True), AuditSettings(GuardConfig()))
    assert (result.format, result.files, result.diagnostics) == ("openhands-events", 1, 0)
    fired, summary, problems = _summary(str(folder), "openhands-events")
    # As v1-events.jsonl: the same terminal call four times (the reminder at the third), a
    # prompt, a call the user rejected, a call answered by an AgentErrorEvent.
    counts = summary.tally
    assert (counts.calls, counts.wasted, counts.denied, counts.longest_run) == (6, 3, 1, 4)
    ((where, count),) = [(f.where, f.reminder.count) for f in fired]
    assert count == 3
    assert (Path(where.file).name[:11], where.line) == ("event-00008", 1)
    assert where.session == "00000000-0000-4000-8000-0000000000aa"
    assert problems == []


def test_a_damaged_conversation_folder_gives_diagnostics_at_its_files(tmp_path: Path) -> None:
    folder = tmp_path / "c2"
    shutil.copytree(CONVERSATION, folder)
    (folder / "base_state.json").write_bytes(b"{not json")
    broken = sorted((folder / "events").iterdir())[4]
    broken.write_bytes(b"[1, 2]")
    items = _read("openhands-events", str(folder / "base_state.json"))
    problems = [(Path(p.file).name, p.line, p.message) for p in items if isinstance(p, Diagnostic)]
    assert problems[0][:2] == ("base_state.json", 1)
    assert problems[1] == (broken.name, 1, "expected a JSON object")
    seen = [i for i in items if isinstance(i, SessionSeen)]
    assert [s.where.session for s in seen] == ["c2"]  # no id: the folder's name
    shutil.rmtree(folder / "events")
    (folder / "events").write_text("not a folder")
    items = _read("openhands-events", str(folder))
    assert [p.message for p in items if isinstance(p, Diagnostic)][-1] == (
        "cannot list events: Not a directory"
    )
    (folder / "base_state.json").unlink()
    (folder / "base_state.json").mkdir()
    items = _read("openhands-events", str(folder))
    assert next(p.message for p in items if isinstance(p, Diagnostic)) == (
        "read failed: Is a directory"
    )


def test_an_event_file_too_long_is_a_diagnostic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from repeat_guard_transcripts import _openhands_folder

    folder = tmp_path / "c3"
    shutil.copytree(CONVERSATION, folder)
    monkeypatch.setattr(_openhands_folder, "MAX_LINE_BYTES", 100)
    items = _read("openhands-events", str(folder))
    messages = {p.message for p in items if isinstance(p, Diagnostic)}
    assert "longer than 100 bytes" in messages


def test_a_folder_reader_given_a_stream_says_so() -> None:
    reader = READERS["openhands-events"]
    assert not reader.sniff(b'{"id": "x"}')
    (problem,) = reader.read([b"{}"], "<stdin>")
    assert isinstance(problem, Diagnostic)
    assert (
        problem.message
        == "an OpenHands conversation folder is read from its file, not from a stream"
    )


def test_a_row_whose_text_is_not_utf8_is_a_diagnostic_and_the_rest_is_read(
    tmp_path: Path,
) -> None:
    path = _copy(GOOSE, tmp_path)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE messages SET content_json = CAST(X'80' AS TEXT) WHERE id = 3")
        db.execute("UPDATE sessions SET id = CAST(X'FF' AS TEXT) WHERE id = '20261206_2'")
        db.execute("UPDATE messages SET session_id = CAST(X'FF' AS TEXT) WHERE id > 12")
    db.close()
    items = _read("goose", path)
    problems = [(p.line, p.message[:36]) for p in items if isinstance(p, Diagnostic)]
    assert problems[0] == (3, "a message whose content_json is not ")
    sessions = [i.where.session for i in items if isinstance(i, SessionSeen)]
    assert sessions == ["20261206_1", "b'\\xff'"]


def _opencode_db(path: Path, parts: list[tuple[object, object]], message: object) -> str:
    """A database in opencode's shape: one session, one message, its ``parts``."""
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE `session` (`id` text, `directory` text, `time_created`)")
        db.execute("CREATE TABLE `message` (`id` text, `session_id` text, `data` text)")
        db.execute("CREATE TABLE `part` (`id` text, `message_id` text, `data` text)")
        db.execute("INSERT INTO `session` VALUES ('s', NULL, 0)")
        db.execute("INSERT INTO `message` VALUES ('m', 's', ?)", (message,))
        for ident, data in parts:
            db.execute("INSERT INTO `part` VALUES (?, 'm', ?)", (ident, data))
    db.close()
    return str(path)


def test_opencode_rows_it_cannot_use_are_diagnostics_and_the_rest_is_read(
    tmp_path: Path,
) -> None:
    tool = {"type": "tool", "tool": "bash", "state": {"status": "running", "input": {}}}
    state: dict[str, object] = {"status": "completed", "input": {}, "time": {"start": 10**20}}
    timed = {"type": "tool", "tool": "bash", "state": state}
    parts: list[tuple[object, object]] = [
        ("p1", "{not json"),
        ("p2", None),
        ("p3", "[1]"),
        ("p4", json.dumps({"type": "tool", "tool": "bash"})),
        ("p5", json.dumps(tool)),
        ("p6", json.dumps(timed)),
        ("p7", json.dumps({**timed, "state": {**state, "time": {"start": "x"}}})),
    ]
    path = _opencode_db(tmp_path / "a.db", parts, json.dumps({"role": "assistant"}))
    items = _read("opencode", path)
    problems = [(p.line, p.message[:28]) for p in items if isinstance(p, Diagnostic)]
    assert problems == [
        (1, "a part whose data is not JSO"),
        (2, "a part whose data is not tex"),
        (3, "a part whose data is not a J"),
        (4, "a tool part without its tool"),
    ]
    assert [(u.where.line, u.tool) for u in items if isinstance(u, Unfinished)] == [(5, "bash")]
    calls = [i for i in items if isinstance(i, Located)]
    assert [(c.where.line, c.timestamp, c.project) for c in calls] == [
        (6, None, None),
        (7, None, None),
    ]
    # A message whose data is no object: one diagnostic at its first part, its parts unread.
    path = _opencode_db(tmp_path / "b.db", [("p1", json.dumps(tool))], "[]")
    problems = [(p.line, p.message) for p in _read("opencode", path) if isinstance(p, Diagnostic)]
    assert problems == [(1, "a message whose data is not a JSON object")]
    path = _opencode_db(tmp_path / "c.db", [], None)
    problems = [(p.line, p.message) for p in _read("opencode", path) if isinstance(p, Diagnostic)]
    assert problems == [(0, "a message whose data is not text")]


def test_a_database_without_the_formats_tables_is_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE other (x)")
    db.close()
    (problem,) = _read("opencode", str(path))
    assert problem == Diagnostic(str(path), 0, "database read failed: no such table: session")


def test_goose_items_it_cannot_use_are_passed_by(tmp_path: Path) -> None:
    value = {"content": ["x", {"type": "image"}, {"type": "text", "text": "fine"}]}
    ls = {"status": "success", "value": {"name": "ls", "arguments": {}}}
    messages: list[object] = [
        [{"type": "toolRequest", "id": "c1", "toolCall": ls}],
        [
            "not an item",
            {"type": "toolResponse", "id": "nobody", "toolResult": {"status": "success"}},
            {"type": "toolConfirmationRequest", "id": "c1"},
            {
                "type": "toolResponse",
                "id": "c1",
                "toolResult": {"status": "success", "value": value},
            },
        ],
        7,
    ]
    path = tmp_path / "g.db"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE sessions (id, working_dir, created_at)")
        db.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id, role, content_json)")
        db.execute("INSERT INTO sessions VALUES ('s', NULL, 0)")
        for content in messages:
            data = content if isinstance(content, int) else json.dumps(content)
            db.execute("INSERT INTO messages VALUES (NULL, 's', 'assistant', ?)", (data,))
    db.close()
    items = _read("goose", str(path))
    problems = [(p.line, p.message) for p in items if isinstance(p, Diagnostic)]
    assert problems == [(3, "a message whose content_json is not text")]
    (call,) = [i.event for i in items if isinstance(i, Located)]
    # Answered once: the answer for no call and the other item are passed by.
    assert isinstance(call, ToolCallFinished)
    assert (call.tool, call.denied, call.result) == ("ls", False, value)


def test_a_damaged_schema_is_a_diagnostic(tmp_path: Path) -> None:
    # A byte that is not UTF-8 in the name of a column of goose's schema (found by the fuzz
    # campaign): the query fails as it names its columns.
    data = bytearray(GOOSE.read_bytes())
    data[3893] = 0x80
    path = tmp_path / "sessions.db"
    path.write_bytes(bytes(data))
    (problem,) = _read("goose", str(path))
    assert isinstance(problem, Diagnostic)
    assert problem.message.startswith("database read failed: 'utf-8' codec can't decode")
