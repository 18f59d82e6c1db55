"""The Codex reader on a rollout recorded from the real CLI and a hand-written polling loop.

Expected counts were made by hand from the files (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json

from repeat_guard import GuardConfig, PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import HEAD_BYTES, READERS, Located

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

LIVE = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
POLLED = FIXTURES / "codex" / "write_stdin_polled.jsonl"


def test_the_live_rollout_the_same_command_four_times() -> None:
    outcomes = run_file("codex", LIVE)
    # exec_command {"cmd": "ls"} four times; outputs on lines 14, 20, 26, 32
    assert fired(outcomes) == [(26, "exec_command", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run) == (4, 3, 4)
    assert [s.session for s in summary(outcomes).sessions] == [
        "01a237c4-a07f-7b71-97e2-ba1894ae8275"
    ]
    assert diagnostics(outcomes) == []


def test_write_stdin_polled_seven_times() -> None:
    outcomes = run_file("codex", POLLED)
    assert fired(outcomes) == [(12, "write_stdin", 3, "gentle"), (16, "write_stdin", 5, "detailed")]
    total = summary(outcomes).tally
    # npm start, 7 polls, the declined rm, apply_patch, local shell ls, the malformed call
    assert (total.calls, total.wasted, total.denied, total.longest_run) == (12, 6, 1, 7)
    assert unfinished(outcomes) == [(28, "exec_command")]
    assert diagnostics(outcomes) == []


def test_what_each_call_carries() -> None:
    items = list(READERS["codex"].read(POLLED.read_bytes().splitlines(True), "p"))
    located = [item for item in items if isinstance(item, Located)]
    prompts = [item for item in located if isinstance(item.event, PromptSubmitted)]
    assert [p.where.line for p in prompts] == [3, 4]  # the injected context on 27 is not one
    calls = [item for item in located if isinstance(item.event, ToolCallFinished)]
    by_tool = {call.event.tool: call.event.arguments for call in calls}  # type: ignore[union-attr]
    assert by_tool["apply_patch"] == "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
    assert by_tool["local_shell"] == {"type": "exec", "command": ["ls"]}
    assert by_tool["exec_command"] == "{oops"  # malformed argument JSON is compared as text
    first = calls[0]
    assert (first.turn, first.project, first.timestamp) == ("t1", "/w", "2026-12-02T18:00:05.000Z")
    assert first.event == ToolCallFinished(
        "s-poll", "exec_command", {"cmd": "npm start"}, result="Process running with session ID 3"
    )


def line(payload: object, kind: str = "response_item") -> bytes:
    return json.dumps({"type": kind, "payload": payload}).encode() + b"\n"


def test_older_unwrapped_rollouts_and_odd_lines() -> None:
    call = {"type": "function_call", "name": "grep", "arguments": '{"p": 1}', "call_id": "a"}
    done = {"type": "function_call_output", "call_id": "a", "output": "x"}
    lines = [
        json.dumps({"id": "old", "instructions": ""}).encode() + b"\n",
        json.dumps(call).encode() + b"\n",
        json.dumps(done).encode() + b"\n",
        b"[]\n",
        line({"type": "function_call", "name": "grep"}),
        line({"type": "function_call_output"}),
        line({"type": "function_call_output", "call_id": "ghost"}),
        line(done),  # again: no news
        line({"type": 3}),
        line({"type": "message", "role": "assistant", "content": "hi"}),
        line({"type": "item_completed", "item": {"type": "AgentMessage"}}, "event_msg"),
        b"{bad\n",
        line({"type": "function_call", "name": "t", "arguments": "{}", "call_id": "b"}),
        line({"type": "function_call_output", "call_id": "b"}),  # no output at all
    ]
    outcomes = run_reader("codex", lines, file="/x/rollout-1.jsonl")
    assert diagnostics(outcomes)[:3] == [
        (4, "expected a JSON object"),
        (5, "a call without a string call_id and name"),
        (6, "a call output without a string call_id"),
    ]
    assert diagnostics(outcomes, "note") == [
        (7, "output for call 'ghost' that is not in this file")
    ]
    assert [line for line, _ in diagnostics(outcomes)][3:] == [12]
    assert summary(outcomes).tally.calls == 2
    assert [s.session for s in summary(outcomes).sessions] == ["rollout-1"]


def test_a_prompt_ends_the_turn_of_open_calls() -> None:
    lines = [
        line({"type": "function_call", "name": "sleep", "arguments": "{}", "call_id": "a"}),
        line({"type": "item_completed", "item": {"type": "UserMessage"}}, "event_msg"),
    ]
    outcomes = run_reader("codex", lines, GuardConfig())
    assert unfinished(outcomes) == [(1, "sleep")]


def test_sniffing() -> None:
    reader = READERS["codex"]
    assert reader.sniff(LIVE.read_bytes()[:HEAD_BYTES])
    assert reader.sniff(LIVE.read_bytes()[:300])  # the first line cut short: its opening will do
    assert not reader.sniff(b'{"type": "session_meta"}\n')
    assert not reader.sniff(b'{"sessionId": "s", "type": "user", "parentUuid": null}\n')


def tokens_of(lines: list[bytes]) -> list[tuple[int, int | None]]:
    items = READERS["codex"].read(lines, "t")
    return [
        (item.where.line, item.tokens)
        for item in items
        if isinstance(item, Located) and isinstance(item.event, ToolCallFinished)
    ]


def test_the_live_rollouts_steps_charge_their_first_call() -> None:
    # Each of the four steps has a token_usage_record with output_tokens 5 after its call
    # (lines 11, 17, 23, 29) and an event_msg token_count after its output (ignored).
    assert tokens_of(LIVE.read_bytes().splitlines(True)) == [(14, 5), (20, 5), (26, 5), (32, 5)]


def usage(tokens: object) -> bytes:
    return line({"usage": {"output_tokens": tokens}}, "token_usage_record")


def count(tokens: object) -> bytes:
    info = {"last_token_usage": {"output_tokens": tokens}}
    return line({"type": "token_count", "info": info}, "event_msg")


def call(ident: str) -> bytes:
    return line({"type": "function_call", "name": "t", "arguments": "{}", "call_id": ident})


def output(ident: str) -> bytes:
    return line({"type": "function_call_output", "call_id": ident, "output": "x"})


def test_a_step_of_parallel_calls_charges_its_first_call_once() -> None:
    lines = [call("a"), call("b"), usage(7), output("a"), output("b"), count(7)]
    assert tokens_of(lines) == [(4, 7), (5, None)]


def test_older_rollouts_charge_from_token_count_when_it_comes_before_the_output() -> None:
    lines = [call("a"), count(3), output("a"), call("b"), output("b"), count(4)]
    # b's count came after b had counted: its step's tokens are not known at the call
    assert tokens_of(lines) == [(3, 3), (5, None)]


def test_a_prompt_or_odd_usage_charges_nobody() -> None:
    prompt = line({"type": "user_message", "message": "go"}, "event_msg")
    lines = [
        call("a"),
        prompt,
        usage(9),  # the step of "a" ended with the prompt: nobody to charge
        call("b"),
        usage(True),
        count(None),
        line({"type": "token_count", "info": None}, "event_msg"),
        line({"usage": "many"}, "token_usage_record"),
        output("b"),
    ]
    assert tokens_of(lines) == [(9, None)]


def test_a_steps_input_tokens_come_with_its_output_tokens() -> None:
    def step_usage(**fields: object) -> bytes:
        return line({"usage": {"output_tokens": 2, **fields}}, "token_usage_record")

    lines = [
        call("a"),
        step_usage(input_tokens=300, cached_input_tokens=200),  # cached ones are within
        output("a"),
        call("b"),
        step_usage(input_tokens=True),
        output("b"),
    ]
    items = READERS["codex"].read(lines, "t")
    assert [
        (item.tokens, item.input_tokens)
        for item in items
        if isinstance(item, Located) and isinstance(item.event, ToolCallFinished)
    ] == [(2, 300), (2, None)]
    # The recorded rollout's steps read 10 input tokens each.
    live = READERS["codex"].read(LIVE.read_bytes().splitlines(True), "live")
    assert [
        item.input_tokens
        for item in live
        if isinstance(item, Located) and isinstance(item.event, ToolCallFinished)
    ] == [10, 10, 10, 10]


def test_call_arguments_are_what_json_loads_makes_of_them() -> None:
    texts = ['{"p": 1}', ' {"p": 1}', '{"p": 1} ', "\ufeff{}", '{"p": 1} x', "[1e400]", "[", ""]
    lines = [
        line({"type": "function_call", "name": "t", "arguments": text, "call_id": str(n)})
        for n, text in enumerate(texts)
    ] + [line({"type": "function_call_output", "call_id": str(n)}) for n in range(len(texts))]
    items = list(READERS["codex"].read(lines, "f"))
    got = [i.event.arguments for i in items if isinstance(i, Located)]  # type: ignore[union-attr]
    # Whitespace around the JSON is no part of it; anything else that is not JSON stays text.
    assert got == [{"p": 1}, {"p": 1}, {"p": 1}, "\ufeff{}", '{"p": 1} x', [float("inf")], "[", ""]
