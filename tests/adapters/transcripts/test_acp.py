"""Reading ACP transcripts: every quirk real agents show, bad input, and annotation.

The fixtures in ``fixtures/acp/`` are hand-written in the shapes public recordings show (the
quirk each one reproduces is named in its test; see ``fixtures/README.md``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from acp import schema

from repeat_guard import GuardConfig
from repeat_guard_transcripts import (
    MAX_LINE_BYTES,
    READERS,
    Diagnostic,
    FileSummary,
    Fired,
    Outcome,
    annotate,
    replay,
    tool_name,
)

FIXTURES = Path(__file__).parent / "fixtures" / "acp"


def run(lines: Iterable[bytes], config: GuardConfig | None = None) -> list[Outcome]:
    items = READERS["acp"].read(lines, "t.jsonl")
    return list(replay(items, config or GuardConfig(), file="t.jsonl"))


def fixture(name: str) -> list[bytes]:
    return (FIXTURES / name).read_bytes().splitlines(keepends=True)


def fired(items: list[Outcome]) -> list[tuple[int, str, int, str]]:
    return [
        (i.where.line, i.reminder.tool, i.reminder.count, i.reminder.form)
        for i in items
        if isinstance(i, Fired)
    ]


def summary_of(items: list[Outcome]) -> FileSummary:
    last = items[-1]
    assert isinstance(last, FileSummary)
    return last


def diagnostics(items: list[Outcome], severity: str = "error") -> list[tuple[int, str]]:
    return [
        (i.line, i.message) for i in items if isinstance(i, Diagnostic) and i.severity == severity
    ]


def line(message: dict[str, object], direction: str | None = "a2c") -> bytes:
    record = message if direction is None else {"dir": direction, "msg": message}
    return json.dumps(record).encode() + b"\n"


def update(session: str, body: Mapping[str, object]) -> dict[str, object]:
    params = {"sessionId": session, "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def call(tool_call_id: str, status: str, **extra: object) -> dict[str, object]:
    body = {"sessionUpdate": "tool_call", "toolCallId": tool_call_id, "status": status}
    return update("s", {**body, "title": "grep", **extra})


def test_claude_code_two_tool_calls_per_id_are_one_call_named_by_meta() -> None:
    items = run(fixture("claude_code_double_tool_call.jsonl"))
    assert fired(items) == [(14, "Bash", 3, "gentle")]
    totals = summary_of(items).sessions[0]
    assert (totals.tally.calls, totals.tally.tracked, totals.tally.wasted) == (4, 4, 3)
    reminder = next(i for i in items if isinstance(i, Fired))
    assert reminder.where.session == "sess-1"
    assert reminder.reminder.agent == "session:sess-1"


def test_claude_code_identity_is_the_real_input_not_the_empty_first_one() -> None:
    items = run(fixture("claude_code_double_tool_call.jsonl"), GuardConfig(thresholds=(3, 4)))
    detailed = [i.reminder for i in items if isinstance(i, Fired)][-1]
    assert '{"command":"pytest -x","description":"run tests"}' in detailed.text


def test_gemini_details_from_the_permission_request_and_a_name_from_the_id() -> None:
    items = run(fixture("gemini_permission_only.jsonl"))
    assert fired(items) == [(14, "run_shell_command", 3, "gentle")]
    assert summary_of(items).tally.wasted == 2


def test_weak_identity_includes_the_calls_content() -> None:
    """Without rawInput, two writes of different content to one file are not a repeat (seen
    in a real Gemini recording); the same write three times is."""

    def write(ident: str, text: str) -> bytes:
        diff = [{"type": "diff", "path": "/w/a.py", "oldText": None, "newText": text}]
        return line(
            update(
                "s",
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": ident,
                    "title": "Write a.py",
                    "kind": "edit",
                    "status": "completed",
                    "locations": [{"path": "/w/a.py"}],
                    "content": diff,
                },
            )
        )

    different = run([write(str(n), f"v{n}") for n in range(3)])
    assert (fired(different), summary_of(different).tally.wasted) == ([], 0)
    same = run([write(str(n), "v") for n in range(3)])
    assert fired(same) == [(3, "edit", 3, "gentle")]


def test_opencode_repeated_in_progress_updates_are_not_calls() -> None:
    summary = summary_of(run(fixture("opencode_repeated_in_progress.jsonl")))
    assert summary.tally.calls == 2
    assert summary.tally.wasted == 1


def test_parallel_calls_interleave_and_colliding_request_ids_match_by_direction() -> None:
    items = run(fixture("parallel_colliding_ids.jsonl"), GuardConfig(thresholds=(2,)))
    summary = summary_of(items)
    # grep and read alternate, so neither repeats consecutively; the agent's permission
    # request shares id 1 with the client's prompt, and its rejection is still a denial
    assert fired(items) == []
    assert summary.tally.calls == 7
    assert diagnostics(items) == []


def test_a_rejected_permission_is_a_denied_call_and_its_failed_update_is_not_another() -> None:
    items = run(fixture("denials.jsonl"))
    # the third rejection fires at the agent's failed update for it, where a live guard speaks
    assert fired(items) == [(17, "rm", 3, "gentle")]
    # the failed updates after the rejections are not second calls; the call whose permission
    # request was cancelled counts once, when the agent reports it failed
    assert summary_of(items).tally.calls == 4


def test_session_load_history_is_not_counted_and_unknown_messages_are_ignored() -> None:
    items = run(fixture("load_history_and_unknowns.jsonl"))
    assert fired(items) == [(11, "execute", 3, "gentle")]
    # three updates for calls never announced: a recording that starts mid-way, noted
    assert diagnostics(items, "note") == []
    assert diagnostics(items) == []
    assert summary_of(items).tally.calls == 3


def test_a_prompt_resets_the_session_chain_and_sessions_are_separate() -> None:
    grep = {"rawInput": {"pattern": "x"}}
    lines = [
        line(call("1", "completed", **grep)),
        line(call("2", "completed", **grep)),
        line(
            update(
                "other",
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "9",
                    "title": "grep",
                    "status": "completed",
                    "rawInput": {"pattern": "x"},
                },
            )
        ),
        line(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": "s", "prompt": []},
            },
            "c2a",
        ),
        line(call("3", "completed", **grep)),
        line(call("4", "completed", **grep)),
    ]
    items = run(lines, GuardConfig(thresholds=(3,)))
    assert fired(items) == []
    assert [s.session for s in summary_of(items).sessions] == ["s", "other"]


def test_tool_name_precedence() -> None:
    meta = {"claudeCode": {"toolName": "Bash"}}
    assert tool_name("x-1", {"name": "grep", "_meta": meta, "kind": "k"}) == "grep"
    assert tool_name("x-1", {"_meta": meta, "kind": "k"}) == "Bash"
    assert tool_name("read_file-123", {"_meta": {"claudeCode": "?"}, "kind": "k"}) == "read_file"
    assert tool_name("toolu_1", {"kind": "read", "title": "t"}) == "read"
    assert tool_name("toolu_1", {"title": "Read a.py"}) == "Read a.py"
    assert tool_name("toolu_1", {"_meta": []}) == "unknown"


def test_bad_lines_become_diagnostics_and_the_rest_is_still_replayed() -> None:
    good = [line(call(str(n), "completed", rawInput={"p": 1})) for n in range(3)]
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n"
    lines = [
        b"{not json\n",
        good[0],
        b"\xff\xfe\n",
        b"[1, 2]\n",
        b"\n",
        good[1],
        deep,
        line({"jsonrpc": "2.0", "id": 1}),
        line({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {}}}),
        line({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}}),
        json.dumps({"dir": "sideways", "msg": {}}).encode() + b"\n",
        json.dumps({"dir": "a2c", "msg": [1]}).encode() + b"\n",
        line(
            update(
                "s",
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "ghost",
                    "status": "in_progress",
                },
            )
        ),
        line(update("s", {"sessionUpdate": "tool_call", "status": "completed"})),
        good[2],
        line({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {}}, "c2a"),
        b'{"truncated": ',
    ]
    items = run(lines)
    found = diagnostics(items)
    assert [n for n, _ in found] == [1, 3, 4, 7, 8, 9, 10, 11, 12, 14, 16, 17]
    messages = dict(found)
    assert messages[1].startswith("invalid JSON")
    assert messages[3].startswith("not UTF-8")
    assert messages[4] == "expected a JSON object, got an array"
    assert messages[7] == "JSON nested too deeply to parse"
    assert messages[8] == "neither a request, a notification nor a response"
    assert messages[9] == "session/update: sessionId must be a non-empty string"
    assert messages[10] == "session/update: update must be an object"
    assert messages[11] == 'record "dir" must be "c2a" or "a2c", got a string'
    assert messages[12] == "the JSON-RPC message is an array, not an object"
    assert messages[14] == "tool_call: toolCallId must be a non-empty string"
    assert messages[16] == "session/prompt: sessionId must be a non-empty string"
    assert messages[17].startswith("truncated last line")
    # an update for a call never announced is a note: the recording may start mid-way
    assert [n for n, _ in diagnostics(items, "note")] == [13]
    assert fired(items) == [(15, "grep", 3, "gentle")]
    assert summary_of(items).errors == 12
    assert summary_of(items).unfinished == 1  # ghost never finished


def test_an_overlong_line_is_reported_without_parsing() -> None:
    items = run([b" " * (MAX_LINE_BYTES + 1)])
    assert diagnostics(items) == [
        (1, f"line of {MAX_LINE_BYTES + 1} bytes is longer than the limit of {MAX_LINE_BYTES}")
    ]


def test_a_large_line_is_replayed() -> None:
    payload = "x" * (8 * 1024 * 1024)
    big = line(call("1", "completed", rawInput={"p": 1}, rawOutput={"out": payload}))
    items = run([big, big.replace(b'"1"', b'"2"'), big.replace(b'"1"', b'"3"')])
    assert fired(items) == [(3, "grep", 3, "gentle")]


def test_invalid_permission_requests_and_outcomes_are_diagnosed() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "session/request_permission",
        "params": {"sessionId": "s", "options": []},
    }
    good_request = {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "session/request_permission",
        "params": {"sessionId": "s", "toolCall": {"toolCallId": "c"}, "options": []},
    }
    lines = [
        line(request),
        line(good_request),
        line({"jsonrpc": "2.0", "id": 8, "result": {"outcome": "selected"}}, "c2a"),
        line({"jsonrpc": "2.0", "id": 99, "result": {}}, "c2a"),
        line(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "session/load",
                "params": {"cwd": "/", "mcpServers": []},
            },
            "c2a",
        ),
        line(
            {"jsonrpc": "2.0", "id": [1], "method": "session/new", "params": "not an object"}, "c2a"
        ),
        line({"jsonrpc": "2.0", "id": [1], "error": {"code": 1, "message": "no"}}, "a2c"),
    ]
    found = diagnostics(run(lines))
    assert [n for n, _ in found] == [1, 3, 5, 6, 7]
    assert found[0][1] == "session/request_permission: toolCall must be an object"
    assert found[1][1] == "permission response without a selected or cancelled outcome"
    assert found[2][1] == "session/load: sessionId must be a non-empty string"
    assert found[3][1] == "session/new: params must be an object, got a string"
    assert found[4][1] == "response id must be a string or an integer, got an array"


def test_a_permission_answer_for_a_finished_call_changes_nothing() -> None:
    ask = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s",
            "toolCall": {"toolCallId": "c"},
            "options": [{"optionId": "n", "name": "No", "kind": "reject_once"}],
        },
    }
    lines = [
        line(ask),
        line(call("c", "completed", rawInput={"p": 1})),
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"outcome": {"outcome": "selected", "optionId": "n"}},
            },
            "c2a",
        ),
    ]
    lines.append(line(call("c", "completed", rawInput={"p": 2})))  # a repeated end
    assert summary_of(run(lines)).tally.calls == 1


def reject(ident: int, tool_call_id: str) -> list[bytes]:
    ask = {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s",
            "toolCall": {"toolCallId": tool_call_id},
            "options": [{"optionId": "n", "name": "No", "kind": "reject_always"}],
        },
    }
    answer = {
        "jsonrpc": "2.0",
        "id": ident,
        "result": {"outcome": {"outcome": "selected", "optionId": "n"}},
    }
    return [line(ask), line(answer, "c2a")]


def test_a_rejected_call_without_a_failed_update_finishes_at_the_end_of_its_turn() -> None:
    prompt = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": []},
    }
    lines = [line(prompt, "c2a")]
    for n in range(3):
        lines += [line(call(f"c{n}", "pending", rawInput={"p": 1})), *reject(10 + n, f"c{n}")]
    lines.append(line(call("c0", "failed")))  # reported: finishes here, not at the turn end
    lines.append(line({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}, "c2a"))
    items = run(lines)
    assert fired(items) == [(12, "grep", 3, "gentle")]
    assert summary_of(items).tally.calls == 3


def test_a_rejected_call_still_open_at_the_end_of_input_is_finished_there() -> None:
    lines = []
    for n in range(3):
        lines += [line(call(f"c{n}", "pending", rawInput={"p": 1})), *reject(10 + n, f"c{n}")]
    assert fired(run(lines)) == [(9, "grep", 3, "gentle")]
    written = annotated(lines)
    assert json.loads(written[-1])["dir"] == "a2c"
    assert b"repeatGuard" in written[-1]


def test_untracked_calls_are_counted_but_not_tracked() -> None:
    lines = [line(call(str(n), "completed", rawInput={"p": 1})) for n in range(4)]
    summary = summary_of(run(lines, GuardConfig(exclude=("gr*",))))
    assert (summary.tally.calls, summary.tally.tracked, summary.tally.wasted) == (4, 0, 0)


def annotated(lines: list[bytes], config: GuardConfig | None = None) -> list[bytes]:
    out: list[bytes] = []
    outcomes = annotate(lines, READERS["acp"], config or GuardConfig(), file="t", write=out.append)
    assert isinstance(list(outcomes)[-1], FileSummary)
    return out


def test_annotation_injects_valid_reminders_that_a_replay_recognises() -> None:
    source = fixture("claude_code_double_tool_call.jsonl")
    written = annotated(source, GuardConfig(thresholds=(2, 3, 4)))
    assert len(written) == len(source) + 3
    injected = [json.loads(raw) for raw in written if b"repeatGuard" in raw]
    assert [m["dir"] for m in injected] == ["a2c"] * 3
    for message in injected:
        notification = schema.SessionNotification.model_validate(message["msg"]["params"])
        assert isinstance(notification.update, schema.UserMessageChunk)
        label = message["msg"]["params"]["update"]["_meta"]["repeatGuard"]
        assert label["source"] == {"kind": "plugin", "plugin": "repeat-tool-guard"}
    items = run(written, GuardConfig(thresholds=(2, 3, 4)))
    summary = summary_of(items)
    computed = [
        (i.where.session, i.reminder.tool, i.reminder.count, i.reminder.form)
        for i in items
        if isinstance(i, Fired)
    ]
    recorded = [(r.where.session, r.tool, r.count, r.form) for r in summary.recorded]
    assert (
        recorded
        == computed
        == [
            ("sess-1", "Bash", 2, "gentle"),
            ("sess-1", "Bash", 3, "detailed"),
            ("sess-1", "Bash", 4, "detailed"),
        ]
    )
    assert summary.tally.calls == 4  # injected reminders are not prompts and reset nothing


def test_annotating_again_replaces_the_earlier_reminders() -> None:
    source = fixture("claude_code_double_tool_call.jsonl")
    once = annotated(source, GuardConfig(thresholds=(2, 3)))
    again = annotated(once, GuardConfig())
    assert [raw for raw in again if b"repeatGuard" not in raw] == source
    assert sum(b"repeatGuard" in raw for raw in again) == 1


def test_annotation_keeps_raw_form_and_passes_diagnostics_and_summary_through() -> None:
    lines = [line(call(str(n), "completed", rawInput={"p": 1}), None) for n in range(3)]
    out: list[bytes] = []
    outcomes = list(
        annotate([b"oops", *lines], READERS["acp"], GuardConfig(), file="t", write=out.append)
    )
    assert out[0] == b"oops\n"
    assert isinstance(outcomes[0], Diagnostic)
    assert isinstance(outcomes[-1], FileSummary)
    injected = json.loads(out[-1])
    assert injected["method"] == "session/update"
    assert len(out) == 5


def test_a_session_with_traffic_but_no_prompt_is_counted() -> None:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    summary = summary_of(run([line(update("s", chunk))]))
    assert [s.session for s in summary.sessions] == ["s"]
    assert (summary.errors, summary.tally.calls) == (0, 0)


def test_recorded_reminders_need_tool_count_and_form() -> None:
    body = {
        "sessionUpdate": "user_message_chunk",
        "content": {"type": "text", "text": "x"},
        "_meta": {"repeatGuard": {"tool": "grep"}},
    }
    items = run([line(update("s", body))])
    assert diagnostics(items) == [
        (1, "a repeatGuard reminder without a string tool, integer count and form")
    ]
    assert summary_of(items).recorded == ()
