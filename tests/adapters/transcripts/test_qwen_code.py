"""The Qwen Code reader on a chat recorded with the real Qwen Code 0.24.4, and on hand-made
records of the shape it writes.

Expected counts were made by hand from the files (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import READERS, Located, sniff_head

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

(CHAT,) = (FIXTURES / "qwen-code").glob("*/chats/*.jsonl")
SESSION = "dc646ee1-bfcc-4a6f-a83a-766380540284"


def test_a_recorded_chat_of_identical_calls_and_a_failed_read() -> None:
    outcomes = run_file("qwen-code", CHAT)
    # tool_result records on lines 6, 10, 14, 18 (`run_shell_command ls` four times) and 22
    # (`read_file` of a missing file: status error).
    assert fired(outcomes) == [(14, "run_shell_command", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run, total.denied) == (5, 3, 4, 0)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == unfinished(outcomes) == []
    assert [s.session for s in summary(outcomes).sessions] == [SESSION]
    lines = CHAT.read_bytes().splitlines(keepends=True)
    items = [i for i in READERS["qwen-code"].read(lines, "q") if isinstance(i, Located)]
    assert (items[0].where.line, items[0].event) == (1, PromptSubmitted(SESSION))
    events = [i.event for i in items if isinstance(i.event, ToolCallFinished)]
    assert events[0].arguments == {"command": "ls"}
    assert [e.failed for e in events] == [False] * 4 + [True]
    assert items[1].project == "/home/dev/project"
    # Each assistant record (lines 4, 8, 12, 16, 20) says promptTokenCount 10 and
    # candidatesTokenCount 5; the one on line 24 is the closing text, no call's.
    calls = [i for i in items if isinstance(i.event, ToolCallFinished)]
    assert [(i.tokens, i.input_tokens) for i in calls] == [(5, 10)] * 5


def test_a_records_usage_goes_with_its_first_call() -> None:
    usage = {"promptTokenCount": 800, "candidatesTokenCount": 30, "thoughtsTokenCount": 12}
    lines = [
        _record("assistant", "s", _call("a"), _call("b"), usageMetadata=usage),
        _record("tool_result", "s", _answer("b"), _answer("a")),
        _record("assistant", "s", _call("c"), usageMetadata="none"),
        _record("tool_result", "s", _answer("c")),
    ]
    items = [i for i in READERS["qwen-code"].read(lines, "q") if isinstance(i, Located)]
    # The thoughts are part of the 30 (Qwen Code's OpenAI usage): not added.
    assert [(i.where.line, i.tokens, i.input_tokens) for i in items] == [
        (2, None, None),
        (2, 30, 800),
        (4, None, None),
    ]


def _record(kind: str, session: str = "s", *parts: object, **extra: object) -> bytes:
    record = {"uuid": "u", "sessionId": session, "type": kind, "message": {"parts": list(parts)}}
    return json.dumps({**record, **extra}).encode() + b"\n"


def _call(ident: str, name: object = "grep") -> dict[str, object]:
    return {"functionCall": {"id": ident, "name": name, "args": {"pattern": "x"}}}


def _answer(ident: str) -> dict[str, object]:
    return {"functionResponse": {"id": ident, "response": {"output": "x"}}}


def test_denials_sessions_and_calls_left_open() -> None:
    lines = [
        _record("user", "s", {"text": "find x"}),
        _record("assistant", "s", _call("a"), _call("b"), _call("c", 3), {"text": "hm"}),
        _record("tool_result", "s", _answer("a"), toolCallResult={"status": "cancelled"}),
        _record("tool_result", "s", _answer("zz"), {"functionResponse": 4}, "part"),
        _record("assistant", "t", _call("a")),  # another session, the same id
        _record("tool_result", "t", _answer("a"), toolCallResult="odd"),
        _record("user", "s", {"inlineData": {}}),  # no text: not a prompt
        _record("user", "s", {"text": "stop"}),
        json.dumps({"type": "user", "message": {"parts": [{"text": "x"}]}}).encode() + b"\n",
        b"{bad\n",
    ]
    outcomes = run_reader("qwen-code", lines)
    assert [line for line, _ in diagnostics(outcomes)] == [10]
    assert unfinished(outcomes) == [(2, "grep")]
    assert [s.session for s in summary(outcomes).sessions] == ["s", "t"]
    items = [i for i in READERS["qwen-code"].read(lines, "q") if isinstance(i, Located)]
    calls = [
        (i.where.line, i.where.session, i.event.denied)
        for i in items
        if isinstance(i.event, ToolCallFinished)
    ]
    assert calls == [(3, "s", True), (6, "t", False)]


def test_sniffing_comes_before_claude_codes() -> None:
    reader = READERS["qwen-code"]
    head = CHAT.read_bytes()[:4096]
    assert reader.sniff(head)
    assert sniff_head(head) == "qwen-code"
    claude = b'{"sessionId": "s", "uuid": "u", "type": "user", "message": {"content": "hi"}}\n'
    assert not reader.sniff(claude)
    assert sniff_head(claude) == "claude-code"
