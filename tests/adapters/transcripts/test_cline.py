"""The Cline reader on a session recorded with the real Cline CLI 3.0.65, and on a task's
``api_conversation_history.json`` made by hand in the extension's shape.

Expected counts were made by hand from the files (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import READERS, Located, sniff_head

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

MESSAGES = FIXTURES / "cline" / "1796525878538_3yxtp.messages.json"


def test_a_recorded_cli_session_of_identical_calls_and_a_failed_read() -> None:
    outcomes = run_file("cline", MESSAGES)
    # The tool results start on lines 51, 97, 143, 189 (`run_commands ls` four times) and 235
    # (`read_files` of a missing file: "success": false).
    assert fired(outcomes) == [(143, "run_commands", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run, total.denied) == (5, 3, 4, 0)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == unfinished(outcomes) == []
    assert [s.session for s in summary(outcomes).sessions] == ["1796525878538_3yxtp"]
    lines = MESSAGES.read_bytes().splitlines(keepends=True)
    items = [i for i in READERS["cline"].read(lines, "m") if isinstance(i, Located)]
    assert items[0].event == PromptSubmitted("m")
    calls = [i.event for i in items if isinstance(i.event, ToolCallFinished)]
    assert [(c.tool, c.failed) for c in calls][-2:] == [
        ("run_commands", False),
        ("read_files", True),
    ]
    assert calls[0].arguments == {"commands": ["ls"]}
    # Every assistant message's metrics say inputTokens 10, outputTokens 5.
    steps = [(i.tokens, i.input_tokens) for i in items if isinstance(i.event, ToolCallFinished)]
    assert steps == [(5, 10)] * 5


USAGE = FIXTURES / "cline" / "usage" / "1796535088269_dcfc6.messages.json"


def test_a_recorded_session_whose_steps_read_from_the_cache() -> None:
    outcomes = run_file("cline", USAGE)
    # Tool results on lines 51, 97, 143 (`run_commands ls`) and 189 (`false`: exit code 1).
    assert fired(outcomes) == [(143, "run_commands", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run) == (4, 2, 3)
    lines = USAGE.read_bytes().splitlines(keepends=True)
    items = [i for i in READERS["cline"].read(lines, "m") if isinstance(i, Located)]
    calls = [i.event for i in items if isinstance(i.event, ToolCallFinished)]
    assert [c.failed for c in calls] == [False, False, False, True]
    # The assistant messages' metrics (lines 44, 90, 136, 182; 223 is the closing text's):
    # outputTokens 20-23, inputTokens 1000-1300, each with cacheReadTokens 600 inside it.
    steps = [(i.tokens, i.input_tokens) for i in items if isinstance(i.event, ToolCallFinished)]
    assert steps == [(20, 1000), (21, 1100), (22, 1200), (23, 1300)]


def test_a_steps_metrics_go_with_its_first_call() -> None:
    messages = [
        {"role": "assistant", "content": [_use("a"), _use("b")], "metrics": {"inputTokens": 9}},
        {"role": "user", "content": [_result("b", "x"), _result("a", "x")]},
        {"role": "assistant", "content": [_use("c")], "metrics": "none"},
        {"role": "user", "content": [_result("c", "x")]},
    ]
    lines = [json.dumps(messages).encode()]
    items = [i for i in READERS["cline"].read(lines, "m") if isinstance(i, Located)]
    calls = [(i.tokens, i.input_tokens) for i in items if isinstance(i.event, ToolCallFinished)]
    # b's result comes first; the first call, a, carries the step's input tokens.
    assert calls == [(None, None), (None, 9), (None, None)]


def _use(ident: str) -> dict[str, object]:
    return {"type": "tool_use", "id": ident, "name": "execute_command", "input": {"command": "ls"}}


def _result(ident: str, content: object, **extra: object) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": ident, "content": content, **extra}


def test_an_extension_task_with_a_denial_an_error_and_odd_messages() -> None:
    history: list[object] = [
        {"role": "user", "content": [{"type": "text", "text": "<task>list</task>"}], "ts": 1},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, _use("a")], "ts": 2},
        {"role": "user", "content": [_result("a", "a.txt"), {"type": "text", "text": "<env>"}]},
        {"role": "assistant", "content": [_use("b"), _use("c"), {"type": "tool_use"}]},
        {
            "role": "user",
            "content": [
                _result("b", [{"type": "text", "text": "The user denied this operation."}]),
                _result("c", "boom", is_error=True),
                _result("zz", "?"),
                {"type": "tool_result"},
            ],
        },
        {"role": "user", "content": "a prompt as a string"},
        {"role": "assistant", "content": [_use("d")]},
        {"role": "user", "content": [{"type": "image"}]},
        {"role": "system", "content": "x"},
        {"role": "assistant", "content": "no blocks"},
        {"role": "user", "content": "stop"},
        {"role": "assistant", "content": [_use("e")]},
        5,
    ]
    lines = [json.dumps(m).encode() + b"\n" for m in history]
    lines[0] = b"[" + lines[0]
    lines = [line.replace(b"\n", b",\n") for line in lines[:-1]] + [lines[-1] + b"]\n"]
    file = "tasks/1700000000000/api_conversation_history.json"
    outcomes = run_reader("cline", lines, file=file)
    assert diagnostics(outcomes) == [(13, "a message that is not an object")]
    assert unfinished(outcomes) == [(7, "execute_command"), (12, "execute_command")]
    assert [s.session for s in summary(outcomes).sessions] == ["1700000000000"]
    items = [i for i in READERS["cline"].read(lines, file) if isinstance(i, Located)]
    flags = [
        (i.where.line, i.event.denied, i.event.failed)
        for i in items
        if isinstance(i.event, ToolCallFinished)
    ]
    assert flags == [(3, False, False), (5, True, False), (5, False, True)]
    prompts = [i.where.line for i in items if isinstance(i.event, PromptSubmitted)]
    assert prompts == [1, 6, 11]


def test_messages_without_a_call_it_knows_get_a_note() -> None:
    # The extension's older XML tool format, in the assistant's text.
    history = [
        {"role": "user", "content": "<task>list</task>", "ts": 1},
        {"role": "assistant", "content": "<execute_command><command>ls</command>", "ts": 2},
    ]
    outcomes = run_reader("cline", [json.dumps(history).encode()])
    assert diagnostics(outcomes, "note") == [
        (1, "read as cline, none of it a tool call (2 messages read, none with a tool_use block)")
    ]


def test_sniffing_and_names() -> None:
    reader = READERS["cline"]
    head = MESSAGES.read_bytes()[:4096]
    assert reader.sniff(head)
    assert sniff_head(head) == "cline"
    listed = b'[{"role": "user", "content": "hi", "ts": 1}]'
    assert reader.sniff(listed)
    assert sniff_head(listed) == "cline"
    assert not reader.sniff(b'[{"role": "user", "content": "hi"}]')
    assert not reader.sniff(b'{"messages": [], "ts": 1}')
    outcomes = run_reader("cline", [b"[]"], file="api_conversation_history.json")
    assert [s.session for s in summary(outcomes).sessions] == ["api_conversation_history"]
    outcomes = run_reader("cline", [b"[]"], file=".messages.json")
    assert [s.session for s in summary(outcomes).sessions] == [".messages"]
