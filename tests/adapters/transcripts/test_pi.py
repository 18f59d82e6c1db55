"""The pi reader on a session recorded with the real pi 0.73.1, and on hand-made entries of
the shapes it writes.

Expected counts were made by hand from the files (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import READERS, Located, sniff_head

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

(SESSION_FILE,) = (FIXTURES / "pi").glob("*/*.jsonl")
SESSION = "01a24943-664e-7171-a50b-a65770a6538d"


def test_a_recorded_session_of_identical_calls_continued_with_a_second_prompt() -> None:
    outcomes = run_file("pi", SESSION_FILE)
    # toolResult on lines 6, 8, 10, 12 (`bash ls` four times), 14 (`read` of a missing file,
    # isError); the prompt on line 16 (pi --continue), then `ls` on 18 and 20, whose call ids
    # restart at toolu_000_0.
    assert fired(outcomes) == [(10, "bash", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run) == (7, 4, 4)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == unfinished(outcomes) == []
    (session,) = summary(outcomes).sessions
    assert (session.session, session.agents) == (SESSION, 1)
    lines = SESSION_FILE.read_bytes().splitlines(keepends=True)
    items = [i for i in READERS["pi"].read(lines, "p") if isinstance(i, Located)]
    assert [i.where.line for i in items if isinstance(i.event, PromptSubmitted)] == [4, 16]
    first = items[1]
    assert first.event == ToolCallFinished(
        SESSION, "bash", {"command": "ls"}, result=[{"type": "text", "text": "a.txt\n"}]
    )
    assert (first.where.line, first.project, first.tokens, first.input_tokens) == (
        6,
        "/home/dev/project",
        5,
        10,
    )
    failed = [i.event for i in items if isinstance(i.event, ToolCallFinished) and i.event.failed]
    assert [e.tool for e in failed] == ["read"]


def _entry(message: object, kind: str = "message") -> bytes:
    return json.dumps({"type": kind, "id": "e", "message": message}).encode() + b"\n"


def _call(ident: str, name: str = "grep") -> dict[str, object]:
    return {"type": "toolCall", "id": ident, "name": name, "arguments": {"pattern": "x"}}


def test_parallel_calls_odd_entries_and_calls_left_open() -> None:
    two = {"role": "assistant", "content": [_call("a"), _call("b")], "usage": {"output": 9}}
    lines = [
        _entry({"role": "user", "content": [{"type": "text", "text": "find x"}]}),
        _entry(two),
        _entry({"role": "toolResult", "toolCallId": "a", "content": "x"}),
        _entry({"role": "toolResult", "toolCallId": "b", "content": "x", "isError": True}),
        _entry({"role": "toolResult", "toolCallId": "zz"}),
        _entry({"role": "toolResult"}),
        _entry({"role": "assistant", "content": [3, {"type": "text"}, {"type": "toolCall"}]}),
        _entry({"role": "assistant", "content": "text", "usage": "none"}),
        _entry({"role": "assistant", "content": [_call("c")], "usage": {"input": "?"}}),
        _entry({"role": "user", "content": [{"type": "image"}]}),  # no text: not a prompt
        _entry({"role": "assistant", "content": [_call("d")]}),
        _entry({"role": "user", "content": [{"type": "text", "text": "stop"}]}),
        _entry({"role": "assistant", "content": [_call("e")]}),
        _entry(3),
        _entry({"role": "user"}, kind="custom_message"),
        b"{bad\n",
    ]
    outcomes = run_reader("pi", lines, file="s.jsonl")
    assert [line for line, _ in diagnostics(outcomes)] == [16]
    assert unfinished(outcomes) == [(9, "grep"), (11, "grep"), (13, "grep")]
    items = [i for i in READERS["pi"].read(lines, "s.jsonl") if isinstance(i, Located)]
    # Two calls of one message: its tokens go with the first.
    calls = [
        (i.where.line, i.tokens, i.event.failed)
        for i in items
        if isinstance(i.event, ToolCallFinished)
    ]
    assert calls == [(3, 9, False), (4, None, True)]
    assert {i.where.session for i in items} == {"s"}


def test_sniffing() -> None:
    reader = READERS["pi"]
    head = SESSION_FILE.read_bytes()[:4096]
    assert reader.sniff(head)
    assert sniff_head(head) == "pi"
    assert not reader.sniff(b'{"type": "session", "id": "x"}\n')
    assert not reader.sniff(b'{"type": "message"}\n{"type": "session", "cwd": "/", "version": 3}\n')
