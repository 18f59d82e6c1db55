"""The ACP reader on the quirks of real agents (one fixture each), its limits, and its memory.

Expected counts were made by hand from the fixtures (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from repeat_guard import GuardConfig, ToolCallFinished
from repeat_guard_transcripts import (
    READERS,
    AcpReader,
    Diagnostic,
    Located,
    Unfinished,
    annotate,
)
from repeat_guard_transcripts import _acp as acp_module

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

ACP = FIXTURES / "acp"


def test_a_recording_that_starts_in_the_middle_gets_notes_not_errors() -> None:
    outcomes = run_file("acp", ACP / "starts_mid_way.jsonl")
    assert fired(outcomes) == [(5, "execute", 3, "gentle")]
    assert [line for line, _ in diagnostics(outcomes, "note")] == [1, 3]
    assert diagnostics(outcomes) == []
    assert summary(outcomes).tally.calls == 3


def test_claude_agent_acp_opens_calls_with_a_pending_update() -> None:
    outcomes = run_file("acp", ACP / "claude_agent_acp_pending_update_first.jsonl")
    assert fired(outcomes) == [(10, "Read", 3, "gentle")]
    assert diagnostics(outcomes, "note") == []
    assert summary(outcomes).tally.calls == 3


def test_calls_that_never_finish_are_reported_per_session() -> None:
    outcomes = run_file("acp", ACP / "never_finished.jsonl")
    assert unfinished(outcomes) == [(2, "execute"), (6, "execute")]
    (session,) = summary(outcomes).sessions
    assert (session.session, session.unfinished, session.tally.calls) == ("s-open", 2, 0)


def test_every_session_seen_is_in_the_summary_prompted_or_not() -> None:
    outcomes = run_file("acp", ACP / "sessions_without_prompts.jsonl")
    sessions = summary(outcomes).sessions
    assert [s.session for s in sessions] == ["s-quiet", "s-busy", "s-plan"]
    assert [s.tally.calls for s in sessions] == [0, 1, 0]


def frame(**update: object) -> bytes:
    body = {"sessionUpdate": "tool_call", "toolCallId": "t", "status": "completed", **update}
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": body},
    }
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize(
    ("update", "message"),
    [
        ({"title": 3}, "tool_call: title must be a string"),
        ({"locations": {}}, "tool_call: locations must be an array"),
        ({"_meta": []}, "tool_call: _meta must be an object"),
        ({"status": "done"}, "tool_call: unknown status 'done'"),
        ({"status": ["x" * 100]}, "tool_call: unknown status \"['" + "x" * 38 + '"'),
        ({"toolCallId": ""}, "tool_call: toolCallId must be a non-empty string"),
        ({"toolCallId": {"a": 1}}, "tool_call: toolCallId must be a non-empty string"),
    ],
)
def test_a_frame_is_validated_before_anything_is_stored(
    update: dict[str, object], message: str
) -> None:
    outcomes = run_reader("acp", [frame(**update)])
    assert diagnostics(outcomes) == [(1, message)]
    assert summary(outcomes).tally.calls == 0


@pytest.mark.parametrize(
    ("ident", "message"),
    [
        ("true", "a boolean"),
        ("1.5", "a number with a fraction"),
        ("null", "null"),
        ('{"a": 1}', "an object"),
    ],
)
def test_an_id_that_is_not_a_string_or_integer_is_a_diagnostic(ident: str, message: str) -> None:
    params = '"method": "session/prompt", "params": {"sessionId": "s"}'
    line = f'{{"jsonrpc": "2.0", "id": {ident}, {params}}}\n'.encode()
    expected = f"session/prompt: request id must be a string or an integer, got {message}"
    assert diagnostics(run_reader("acp", [line])) == [(1, expected)]


def request(
    ident: object, method: str, params: Mapping[str, object], direction: str = "c2a"
) -> bytes:
    message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
    return json.dumps({"dir": direction, "msg": message}).encode() + b"\n"


def response(ident: object, result: object, direction: str) -> bytes:
    message = {"jsonrpc": "2.0", "id": ident, "result": result}
    return json.dumps({"dir": direction, "msg": message}).encode() + b"\n"


def test_string_and_integer_ids_with_the_same_text_are_different_requests() -> None:
    lines = [
        request("1", "session/prompt", {"sessionId": "s"}),
        frame(status="pending"),
        response(1, {"stopReason": "end_turn"}, "a2c"),  # answers nothing: id 1 is not "1"
        frame(),
        response("1", {"stopReason": "end_turn"}, "a2c"),
    ]
    outcomes = run_reader("acp", lines)
    assert (summary(outcomes).tally.calls, unfinished(outcomes)) == (1, [])


def test_options_that_are_not_an_array_are_diagnosed() -> None:
    params = {"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": {}}
    outcomes = run_reader("acp", [request(1, "session/request_permission", params, "a2c")])
    assert diagnostics(outcomes) == [(1, "session/request_permission: options must be an array")]


def test_unanswered_requests_and_finished_marks_do_not_grow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(acp_module, "PENDING_REQUESTS", 4)
    monkeypatch.setattr(acp_module, "DONE_MARKS", 4)
    state = acp_module._AcpFile("t")
    lines = []
    for n in range(50):
        lines.append(request(n, "session/prompt", {"sessionId": "s"}))
        lines.append(frame(toolCallId=f"t{n}", rawInput={"n": n}))
    items = list(state.read(lines))
    assert len(state.pending) == 4
    assert len(state.done) == 4
    assert (
        sum(isinstance(i, Located) and isinstance(i.event, ToolCallFinished) for i in items) == 50
    )


def test_too_many_open_calls_push_out_the_oldest_as_unfinished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(acp_module, "OPEN_CALLS", 2)
    lines = [frame(toolCallId=f"t{n}", status="pending", kind="read") for n in range(4)]
    lines.append(frame(toolCallId="t0", status="completed", kind="read"))  # t0 was pushed out
    outcomes = run_reader("acp", lines)
    assert unfinished(outcomes)[:2] == [(1, "read"), (2, "read")]
    assert summary(outcomes).tally.calls == 0


def test_sniffing_and_the_reminder_line_form() -> None:
    reader = READERS["acp"]
    assert isinstance(reader, AcpReader)
    assert reader.sniff(frame())
    assert reader.sniff(b'{"jsonrpc": "2.0", "id": 0, "method": "initialize"}\n')
    assert not reader.sniff(b'{"sessionId": "s", "type": "user"}\n')
    config = GuardConfig(thresholds=(2,))
    items = run_reader("acp", [frame(toolCallId="a"), frame(toolCallId="b")], config)
    reminder = next(i for i in items if not isinstance(i, (Diagnostic, Unfinished)))
    assert reminder is not None
    fired_item = items[0]
    line = reader.reminder_line(b"{not json", "s", fired_item.reminder)  # type: ignore[union-attr]
    assert json.loads(line)["method"] == "session/update"


def test_a_prompt_sent_as_a_notification_still_resets() -> None:
    prompt = {"jsonrpc": "2.0", "method": "session/prompt", "params": {"sessionId": "s"}}
    lines = [frame(toolCallId="a"), frame(toolCallId="b"), json.dumps(prompt).encode() + b"\n"]
    lines.append(frame(toolCallId="c"))
    assert fired(run_reader("acp", lines)) == []


def test_an_answer_for_a_call_long_forgotten_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(acp_module, "DONE_MARKS", 0)
    params = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t"},
        "options": [{"optionId": "no", "kind": "reject_once"}],
    }
    answer = {"outcome": {"outcome": "selected", "optionId": "no"}}
    lines = [
        request(1, "session/request_permission", params, "a2c"),
        frame(),
        response(1, answer, "c2a"),
    ]
    outcomes = run_reader("acp", lines)
    assert (summary(outcomes).tally.calls, summary(outcomes).tally.denied) == (1, 0)
    assert unfinished(outcomes) == []


def test_sniffing_passes_by_files_that_only_quote_acp() -> None:
    # Walking a project folder once took these for ACP transcripts: a Python source with a
    # JSON-RPC reply in it, and notes quoting a frame in a code block.
    reader = READERS["acp"]
    source = b'import json\nif method == "initialize":\n    reply = {"jsonrpc": "2.0", "id": 1}\n'
    notes = b"# ACP\n\n```json\n" + frame() + b"```\n"
    other_protocol = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}\n'
    wrong_version = b'{"jsonrpc": "1.0", "id": 1, "method": "initialize"}\n'
    for head in (source, notes, other_protocol, wrong_version, b"\x00\x01{", b""):
        assert not reader.sniff(head), head
    record = b'{"dir": "c2a", "msg": {"jsonrpc": "2.0", "id": 0, "method": "initialize"}}\n'
    assert reader.sniff(b"\n" + record)
    assert reader.sniff(b"{bad\n" + frame())  # a damaged first line; the next one will do
    cut = frame(rawInput={"text": "x" * 5000})[:3000]  # a first line longer than the head
    assert reader.sniff(cut)
    assert not reader.sniff(b'{"jsonrpc": "2.0", "result": {"x": "' + b"y" * 5000)


# -- an IDE's transport log ----------------------------------------------------------------

IDE_LOG = ACP / "ide_transport_log.log"
_PREFIX = "2025-11-14 19:57:21,{ms:03d} [   8648]   FINE - AcpTransport - {way}: "


def log_line(message: Mapping[str, object], way: str = "IN", ms: int = 0) -> bytes:
    return (_PREFIX.format(ms=ms, way=way) + json.dumps(message)).encode() + b"\n"


def log_call(call_id: str, path: str = "README.md") -> bytes:
    update = {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": f"Read {path}",
        "kind": "read",
        "status": "completed",
        "rawInput": {"path": path},
    }
    params = {"sessionId": "s", "update": update}
    return log_line({"jsonrpc": "2.0", "method": "session/update", "params": params})


def test_an_ide_transport_log_reads_as_the_records_it_logs() -> None:
    # The same lines as recorder records, made here from the log's own parts.
    records = []
    for raw in IDE_LOG.read_bytes().splitlines(keepends=True):
        head, way, body = raw.partition(b" AcpTransport - ")[2].partition(b": ")
        if not way:
            continue  # the other logger's line
        direction = "c2a" if head == b"OUT" else "a2c"
        stamp = raw[:23].decode().replace(" ", "T").replace(",", ".")
        records.append(json.dumps({"dir": direction, "ts": stamp, "msg": json.loads(body)}))
    as_log = run_file("acp", IDE_LOG)
    as_records = run_reader("acp", [r.encode() + b"\n" for r in records])
    assert diagnostics(as_log) == []
    assert diagnostics(as_log, "note") == [
        (5, "1 log line carrying no ACP message skipped, the first on this line")
    ]
    log_tally, record_tally = summary(as_log).tally, summary(as_records).tally
    assert log_tally == record_tally
    assert (log_tally.calls, log_tally.wasted) == (5, 0)
    assert [s.session for s in summary(as_log).sessions] == ["4a152829-869d-4813-b0b5-c43a7decd492"]


def test_a_transport_log_is_sniffed_and_its_times_kept() -> None:
    reader = READERS["acp"]
    assert reader.sniff(IDE_LOG.read_bytes()[:4096])
    assert reader.sniff(b"2025-11-14 19:57:12 INFO - app - started\n" + log_call("a"))
    other = b"2025-11-14 19:57:12,975 [ 34] FINE - AcpTransport - OUT: "
    assert not reader.sniff(other + b'{"jsonrpc": "2.0", "method": "other/thing"}\n')
    assert not reader.sniff(other + b"{not json\n")
    assert not reader.sniff(b"2025-11-14 19:57:12 INFO - app - started\n")
    mixed = [log_call("a"), log_call("b").replace(b",000 ", b" "), frame(toolCallId="c")]
    located = [item for item in reader.read(mixed, "f") if isinstance(item, Located)]
    assert [item.timestamp for item in located] == [
        "2025-11-14T19:57:21.000",
        "2025-11-14T19:57:21",
        None,  # a raw JSON line among the log's: no time of its own
    ]


def test_a_loop_in_a_transport_log_fires_and_annotates_in_the_log_s_form() -> None:
    lines = [log_call(f"c{n}") for n in range(3)]
    lines.insert(1, b"2025-11-14 19:57:21,100 [ 1] WARN - #c.i.Other - unrelated\n")
    lines.insert(2, b"2025-11-14 19:57:21,200 [ 2] FINE - AcpTransport - IN: {broken\n")
    outcomes = run_reader("acp", lines)
    assert fired(outcomes) == [(5, "read", 3, "gentle")]
    assert [line for line, _ in diagnostics(outcomes)] == [3]
    assert diagnostics(outcomes, "note") == [
        (2, "1 log line carrying no ACP message skipped, the first on this line")
    ]
    written: list[bytes] = []
    list(annotate(lines, READERS["acp"], GuardConfig(), file="t", write=written.append))
    assert written[:5] == lines
    reminder = written[5]
    assert reminder.startswith(_PREFIX.format(ms=0, way="IN").encode())
    message = json.loads(reminder.partition(b" - IN: ")[2])
    assert message["params"]["update"]["_meta"]["repeatGuard"]["count"] == 3
    again: list[bytes] = []
    list(annotate(written, READERS["acp"], GuardConfig(), file="t", write=again.append))
    assert again == written  # the earlier reminder is recognised, dropped and written again


def test_a_line_opening_with_a_digit_that_is_no_log_line_is_read_as_json() -> None:
    # Scripted, so its coverage does not hang on what the fuzz campaign draws.
    items = list(READERS["acp"].read([b"42\n", b"7 is not JSON\n"], "t"))
    assert [(i.line, i.message[:13]) for i in items if isinstance(i, Diagnostic)] == [
        (1, "expected a JS"),
        (2, "invalid JSON:"),
    ]


def test_an_update_whose_kind_is_not_a_string_is_passed_over() -> None:
    update = {"sessionUpdate": 3, "toolCallId": "c1", "status": "completed"}
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }
    items = list(READERS["acp"].read([json.dumps(message).encode() + b"\n"], "t"))
    assert not [i for i in items if isinstance(i, (Diagnostic, Located))]
