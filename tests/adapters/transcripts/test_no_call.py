"""A file a reader recognises but reads as holding no call is never a silent zero.

Each head below is a look-alike: it passes its reader's sniff (the format is picked as a walk
would pick it) and holds no call. Reading it through ``read_items``, the one read path of the
replay and the audit, ends with one note that says so, ``no_call_note`` (the shared one, or its
reader's own, saying what it read): the note the audit counts. A file with a call, or with a
diagnostic of its own, gets no shared one.
"""

from __future__ import annotations

import json

import pytest

from repeat_guard import ToolCallFinished, ToolCallReturned
from repeat_guard_transcripts import (
    NO_CALL,
    READERS,
    Diagnostic,
    Item,
    Located,
    Unfinished,
    is_no_call_note,
    no_call_note,
    read_items,
    sniff_head,
)


def _lines(*records: object) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


LOOK_ALIKES = {
    "acp": _lines({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
    "qwen-code": _lines(
        {"sessionId": "s", "uuid": "u", "type": "user", "message": {"parts": [{"text": "hi"}]}}
    ),
    "claude-code": _lines({"sessionId": "s", "type": "summary", "summary": "notes"}),
    "codex": _lines({"type": "session_meta", "payload": {"id": "s", "cwd": "/p"}}),
    "openhands": json.dumps([{"source": "user", "action": "message", "args": {}}]).encode(),
    "swe-agent": json.dumps({"trajectory": [], "info": {"action": None}}).encode(),
    "mini-swe-agent": json.dumps({"info": {"mini_version": "1"}, "messages": []}).encode(),
    "gemini-cli": json.dumps({"sessionId": "s", "projectHash": "h", "messages": []}).encode(),
    "copilot-cli": _lines({"type": "session.start", "data": {}, "parentId": None}),
    "pi": _lines({"type": "session", "cwd": "/p", "version": 3, "id": "s"}),
    "cline": json.dumps([{"role": "user", "ts": 1, "content": "hi"}]).encode(),
    "otel-genai": json.dumps({"resourceSpans": []}).encode(),
}


def _read(fmt: str, content: bytes) -> list[Item]:
    return list(read_items(READERS[fmt], content.splitlines(keepends=True), "f"))


def test_every_reader_that_sniffs_a_stream_has_a_look_alike_here() -> None:
    # The readers of paths (SQLite databases, folders) are told apart by more than a head.
    streams = {name for name, reader in READERS.items() if not hasattr(reader, "read_path")}
    assert streams == set(LOOK_ALIKES)


# Readers that say what they read in their own no-call note; read_items adds no second one.
READ = {
    "cline": " (1 message read, none with a tool_use block)",
    "openhands": " (1 event read)",
}


@pytest.mark.parametrize("fmt", sorted(LOOK_ALIKES))
def test_a_look_alike_is_read_with_one_note_saying_no_call(fmt: str) -> None:
    content = LOOK_ALIKES[fmt]
    assert sniff_head(content) == fmt
    items = _read(fmt, content)
    diagnostics = [item for item in items if isinstance(item, Diagnostic)]
    said = NO_CALL.format(format=fmt) + READ.get(fmt, "")
    assert diagnostics == [Diagnostic("f", 1, said, "note")]
    # Every one is the note the audit counts for the format, and for no other.
    assert is_no_call_note(diagnostics[0], fmt)
    assert not is_no_call_note(diagnostics[0], "acp" if fmt != "acp" else "pi")
    assert not any(_is_call(item) for item in items)


def _is_call(item: Item) -> bool:
    return isinstance(item, Unfinished) or (
        isinstance(item, Located) and isinstance(item.event, ToolCallFinished | ToolCallReturned)
    )


def test_a_file_with_a_call_gets_no_note() -> None:
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    content = _lines(
        {"sessionId": "s", "type": "assistant", "message": {"content": [call]}},
        {
            "sessionId": "s",
            "type": "user",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
        },
    )
    items = _read("claude-code", content)
    assert sum(_is_call(item) for item in items) == 1
    assert not any(isinstance(item, Diagnostic) for item in items)
    # A call never finished is a call too.
    unfinished = _read("claude-code", content.splitlines(keepends=True)[0])
    assert any(isinstance(item, Unfinished) for item in unfinished)
    assert not any(isinstance(item, Diagnostic) for item in unfinished)


def test_a_file_with_a_diagnostic_of_its_own_gets_no_second_one() -> None:
    # Not silent: the reader said what it found. OpenTelemetry's own no-call note names the
    # spans it read.
    broken = _read("claude-code", b"{not json\n")
    assert [item.severity for item in broken if isinstance(item, Diagnostic)] == ["error"]
    spans = {"traceId": "t", "spanId": "s", "name": "chat", "attributes": []}
    export = {"resourceSpans": [{"scopeSpans": [{"spans": [spans]}]}]}
    items = _read("otel-genai", json.dumps(export).encode())
    notes = [item for item in items if isinstance(item, Diagnostic)]
    read = "(1 span read, none a GenAI execute_tool or invoke_agent span)"
    assert notes == [Diagnostic("f", 1, f"{NO_CALL.format(format='otel-genai')} {read}", "note")]


def test_a_file_that_only_looks_like_claude_code_is_not_a_silent_zero() -> None:
    # A session id and a parentUuid are all the sniff asks for.
    content = _lines({"sessionId": "s", "parentUuid": None, "event": "x"}, {"sessionId": "s"})
    assert sniff_head(content) == "claude-code"
    items = _read("claude-code", content)
    assert [item for item in items if isinstance(item, Diagnostic)] == [
        Diagnostic("f", 1, NO_CALL.format(format="claude-code"), "note")
    ]


def test_the_no_call_note_is_known_by_its_words_and_place_whatever_it_read() -> None:
    bare, said = no_call_note("f", "cline"), no_call_note("f", "cline", (3, "message"))
    assert said.message == f"{NO_CALL.format(format='cline')} (3 messages read)"
    assert is_no_call_note(bare, "cline")
    assert is_no_call_note(said, "cline")
    # The same words as an error, elsewhere than line 1, run on, or for another format: not it.
    assert not is_no_call_note(Diagnostic("f", 1, said.message), "cline")
    assert not is_no_call_note(Diagnostic("f", 2, said.message, "note"), "cline")
    assert not is_no_call_note(Diagnostic("f", 1, f"{bare.message}s", "note"), "cline")
    assert not is_no_call_note(said, "codex")


@pytest.mark.parametrize(
    ("read", "detail", "said"),
    [
        ((1, "span"), "", "(1 span read)"),
        ((0, "span"), "", "(0 spans read)"),
        ((2, "event"), "", "(2 events read)"),
        (
            (1, "message"),
            "none with a tool_use block",
            "(1 message read, none with a tool_use block)",
        ),
        (None, "nothing read", "(nothing read)"),
    ],
)
def test_the_no_call_note_words_what_was_read_in_one_place(
    read: tuple[int, str] | None, detail: str, said: str
) -> None:
    note = no_call_note("f", "cline", read, detail)
    assert note.message == f"{NO_CALL.format(format='cline')} {said}"
    assert is_no_call_note(note, "cline")
