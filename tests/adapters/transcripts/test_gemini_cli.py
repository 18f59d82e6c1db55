"""The Gemini CLI reader on a chat recorded with the real Gemini CLI 0.61.0, and on hand-made
chats of the shapes it writes.

Expected counts were made by hand from the files (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import READERS, Located, sniff_head

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

CHAT = FIXTURES / "gemini-cli" / "session-2026-12-06T02-24-404f3d11.jsonl"
SESSION = "404f3d11-bc5e-484a-9d93-b2887996d846"


def test_a_recorded_chat_of_identical_calls_resumed_with_a_second_prompt() -> None:
    outcomes = run_file("gemini-cli", CHAT)
    # Lines 7, 12, 17, 22: `ls` four times (each message written again with its toolCalls);
    # 27 a read_file that failed; 36 the second prompt (after --resume, which rewrites the
    # history on line 35 without toolCalls: nothing counted twice); 40 and 45 `ls` again.
    assert fired(outcomes) == [(17, "run_shell_command", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run, total.denied) == (7, 4, 4, 0)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == unfinished(outcomes) == []
    (session,) = summary(outcomes).sessions
    assert (session.session, session.agents) == (SESSION, 1)
    lines = CHAT.read_bytes().splitlines(keepends=True)
    items = [i for i in READERS["gemini-cli"].read(lines, "c") if isinstance(i, Located)]
    assert [(i.where.line, type(i.event).__name__) for i in items][:2] == [
        (3, "PromptSubmitted"),
        (7, "ToolCallFinished"),
    ]
    failed = [i.event for i in items if isinstance(i.event, ToolCallFinished) and i.event.failed]
    assert [(e.tool, e.arguments) for e in failed] == [
        ("read_file", {"file_path": "/nonexistent/x.txt"})
    ]
    assert [i.where.line for i in items if isinstance(i.event, PromptSubmitted)] == [3, 36]
    # Each gemini message says "tokens": {"input": 10, "output": 5, "cached": 0, "thoughts": 0,
    # "tool": 0, "total": 15}: 10 input and 5 output tokens for each of the 7 calls.
    calls = [i for i in items if isinstance(i.event, ToolCallFinished)]
    assert [(i.tokens, i.input_tokens) for i in calls] == [(5, 10)] * 7


def test_a_messages_tokens_go_with_its_first_call() -> None:
    tokens = {"input": 900, "output": 30, "cached": 600, "thoughts": 12, "tool": 40, "total": 982}
    lines = [
        _line({"sessionId": "s1", "projectHash": "h", "kind": "main"}),
        # The second call finishes first: the tokens still go with the first, when it does.
        _line({**_gemini("m1", _call("a", "executing"), _call("b", "success")), "tokens": tokens}),
        _line({**_gemini("m1", _call("a", "success"), _call("b", "success")), "tokens": tokens}),
        _line({**_gemini("m2", _call("c", "error")), "tokens": {"output": 7, "input": "x"}}),
        _line({**_gemini("m3", _call("d", "success")), "tokens": []}),
    ]
    items = [i for i in READERS["gemini-cli"].read(lines, "c") if isinstance(i, Located)]
    # Output 30 + 12 thoughts, input 900 + 40 tool-use prompt (the 600 cached are part of 900).
    assert [(i.where.line, i.tokens, i.input_tokens) for i in items] == [
        (2, None, None),
        (3, 42, 940),
        (4, 7, None),
        (5, None, None),
    ]


def _line(record: object) -> bytes:
    return json.dumps(record).encode() + b"\n"


def _gemini(ident: str, *calls: object) -> dict[str, object]:
    return {"id": ident, "type": "gemini", "content": "", "toolCalls": list(calls)}


def _call(ident: str, status: str, name: str = "glob", **extra: object) -> dict[str, object]:
    return {"id": ident, "name": name, "args": {"pattern": "*"}, "status": status, **extra}


def test_statuses_odd_calls_and_history_rewritten() -> None:
    lines = [
        _line({"sessionId": "s1", "projectHash": "h", "kind": "main"}),
        _line({"type": "user", "content": "<session_context>\nhere</session_context>"}),
        _line({"type": "user", "content": "find them"}),
        _line(_gemini("m1", _call("a", "executing"))),
        _line(_gemini("m1", _call("a", "success", result=[{"x": 1}]))),
        _line(_gemini("m1", _call("a", "success"))),  # written again: counted once
        _line(_gemini("m2", _call("b", "cancelled"), 3, {"id": "c"}, _call("", "error"))),
        _line({"$set": {"messages": [_gemini("m3", _call("d", "success")), 4]}}),
        _line({"$set": {"messages": [{"type": "user", "content": "old prompt"}]}}),
        _line({"$set": {"lastUpdated": "now"}}),
        _line({"type": "user", "content": [{"text": "a"}, {"functionResponse": {}}]}),
        _line({"type": "user", "content": [{"text": "again"}]}),
        _line(_gemini("m4", _call("e", "scheduled"), {"name": "glob", "status": "success"})),
        _line(_gemini("m4", _call("e", "executing"))),  # still open: reported once, at 13
        _line(_gemini("m5")),
        b"[1]\n",
        b"{bad\n",
    ]
    outcomes = run_reader("gemini-cli", lines)
    found = [(line, said.removesuffix(" (char 1)")) for line, said in diagnostics(outcomes)]
    assert found == [
        (7, "a tool call that is not an object"),
        (7, "a tool call without a name"),
        (16, "expected a JSON object"),
        (17, "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2"),
    ]
    assert unfinished(outcomes) == [(13, "glob")]
    items = [i for i in READERS["gemini-cli"].read(lines, "c") if isinstance(i, Located)]
    assert [(i.where.line, i.where.session) for i in items] == [
        (3, "s1"),
        (5, "s1"),
        (7, "s1"),
        (7, "s1"),
        (8, "s1"),
        (12, "s1"),
        (13, "s1"),
    ]
    events = [i.event for i in items]
    assert events[0] == PromptSubmitted("s1")
    assert events[1] == ToolCallFinished("s1", "glob", {"pattern": "*"}, result=[{"x": 1}])
    flags = [(e.denied, e.failed) for e in events if isinstance(e, ToolCallFinished)]
    assert flags == [(False, False), (True, False), (False, True), (False, False), (False, False)]
    # The last call had no id: its message's id and its place in the list stand in.
    assert isinstance(events[6], ToolCallFinished)


def test_the_older_whole_document_form() -> None:
    chat = {
        "sessionId": "s2",
        "projectHash": "h",
        "messages": [
            {"type": "user", "content": "list"},
            _gemini("m1", _call("a", "success")),
            _gemini("m2", _call("b", "success")),
            _gemini("m3", _call("c", "success")),
            7,
        ],
    }
    indented = json.dumps(chat, indent=2).encode().splitlines(keepends=True)
    outcomes = run_reader("gemini-cli", indented, file="session-x.json")
    # By hand: lines 1-4 open the chat, the prompt takes 5-8, each gemini message 15 lines.
    assert fired(outcomes) == [(39, "glob", 3, "gentle")]
    assert diagnostics(outcomes) == [(54, "a message that is not an object")]
    assert [s.session for s in summary(outcomes).sessions] == ["session-x"]
    # All of it on one line: every message at line 1, the session from the record.
    outcomes = run_reader("gemini-cli", [_line(chat)])
    assert fired(outcomes) == [(1, "glob", 3, "gentle")]
    assert [s.session for s in summary(outcomes).sessions] == ["s2"]


def test_sniffing() -> None:
    reader = READERS["gemini-cli"]
    head = CHAT.read_bytes()[:4096]
    assert reader.sniff(head)
    assert sniff_head(head) == "gemini-cli"
    document = b'{\n  "sessionId": "s",\n  "projectHash": "h",\n  "messages": []\n}'
    assert reader.sniff(document)
    assert sniff_head(document) == "gemini-cli"
    assert not reader.sniff(b'{"sessionId": "s", "type": "user"}\n')
    assert not reader.sniff(b'["projectHash", "messages"]')
