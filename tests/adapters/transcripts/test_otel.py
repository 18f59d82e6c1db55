"""The OpenTelemetry GenAI reader on spans recorded with pydantic-ai 2.68.0 and on a document
written by hand from the GenAI semantic conventions.

Expected counts and lines were made by hand from the files (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import READERS, Located, sniff_format
from repeat_guard_transcripts._otel import any_value

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

HERE = FIXTURES / "otel-genai"
RECORDED = HERE / "pydantic-ai-2.68.0.jsonl"
NO_CONTENT = HERE / "pydantic-ai-2.68.0-no-content.jsonl"
BY_HAND = HERE / "by-hand.json"
TRACE = "0af7651916cd43dd8448eb211c80319c"


def _located(path_or_lines: object) -> list[Located]:
    if isinstance(path_or_lines, list):
        lines = path_or_lines
    else:
        lines = HERE.joinpath(str(path_or_lines)).read_bytes().splitlines(keepends=True)
    return [i for i in READERS["otel-genai"].read(lines, "t") if isinstance(i, Located)]


def test_each_file_is_sniffed_as_otel_genai() -> None:
    for path in (RECORDED, NO_CONTENT, BY_HAND):
        assert sniff_format(str(path)) == "otel-genai"


def test_two_recorded_runs_of_three_identical_calls_and_a_failure() -> None:
    outcomes = run_file("otel-genai", RECORDED)
    # Each run: lines 2, 4, 6 (12, 14, 16) list_files {"path": "."}, 8 (18) read_file that
    # raised, 10 (20) the invoke_agent span, exported last, started first: the prompt.
    assert fired(outcomes) == [(6, "list_files", 3, "gentle"), (16, "list_files", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run, total.denied) == (8, 4, 3, 0)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == unfinished(outcomes) == []
    (session,) = summary(outcomes).sessions
    assert (session.session, session.agents) == ("conv-1", 1)
    items = _located(RECORDED.name)
    assert [i.where.line for i in items] == [10, 2, 4, 6, 8, 20, 12, 14, 16, 18]
    prompts = [i.event for i in items if isinstance(i.event, PromptSubmitted)]
    assert prompts == [PromptSubmitted("conv-1/files-agent")] * 2
    calls = [i.event for i in items if isinstance(i.event, ToolCallFinished)]
    assert calls[0] == ToolCallFinished(
        "conv-1/files-agent", "list_files", {"path": "."}, False, "a.txt b.txt", False
    )
    failed = [(c.tool, c.arguments, c.result) for c in calls if c.failed]
    assert failed == [("read_file", {"path": "x"}, "no such file: x")] * 2
    assert all(i.timestamp and i.timestamp.startswith("2026-") for i in items)
    # Each call goes with the chat span just before it under the same invoke_agent: run 1's
    # gen_ai.usage.output_tokens / input_tokens 4/53, 8/57, 12/61, 17/65 (the 5th chat, 18/72,
    # made no call), run 2's 4/52, 8/56, 12/60, 17/64. The invoke_agent spans' aggregated
    # usage is no step's.
    steps = [(i.tokens, i.input_tokens) for i in items if isinstance(i.event, ToolCallFinished)]
    assert steps == [(4, 53), (8, 57), (12, 61), (17, 65), (4, 52), (8, 56), (12, 60), (17, 64)]


def test_calls_without_recorded_arguments_count_and_never_repeat() -> None:
    outcomes = run_file("otel-genai", NO_CONTENT)
    assert fired(outcomes) == []
    total = summary(outcomes).tally
    assert (total.calls, total.wasted) == (8, 0)
    message = (
        "8 tool call(s) without gen_ai.tool.call.arguments (opt-in): counted, each its own"
        " call, never a repeat"
    )
    assert diagnostics(outcomes, "note") == [(2, message)]
    arguments = [
        i.event.arguments
        for i in _located(NO_CONTENT.name)
        if isinstance(i.event, ToolCallFinished)
    ]
    assert len({json.dumps(a) for a in arguments}) == 8


def test_a_document_written_by_hand_from_the_conventions() -> None:
    outcomes = run_file("otel-genai", BY_HAND)
    # conv-7: grep {"pattern": "TODO"} at lines 65, 23, 107 by start time (the third with its
    # arguments as a kvlist), run_tests (named by its span) failed at 158, the subagent
    # reviewer's read_file at 197; line 281 exports 65's span again. The other trace has no
    # conversation: its id is the session; shell without arguments at 379, shell failed
    # (error.type) at 415.
    assert fired(outcomes) == [(107, "grep", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run) == (7, 2, 3)
    sessions = {s.session: (s.agents, s.tally.calls) for s in summary(outcomes).sessions}
    assert sessions == {"conv-7": (2, 5), TRACE: (1, 2)}
    assert diagnostics(outcomes) == []
    assert [line for line, _ in diagnostics(outcomes, "note")] == [379]
    items = _located(BY_HAND.name)
    assert [i.where.line for i in items] == [323, 65, 23, 107, 158, 197, 379, 415]
    events = [i.event for i in items]
    assert events[0] == PromptSubmitted("conv-7/asst_5j66UpCpwteGg4YSxUnt7lPY")
    calls = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(c.agent, c.tool, c.failed) for c in calls[3:]] == [
        ("conv-7/asst_5j66UpCpwteGg4YSxUnt7lPY", "run_tests", True),
        ("conv-7/reviewer", "read_file", False),
        (TRACE, "shell", False),
        (TRACE, "shell", True),
    ]
    assert calls[4].arguments == {"path": "a.py", "lines": [1, 20]}
    assert (calls[3].arguments, calls[3].result) == ({"k": 1}, "1 failed")
    assert (calls[6].arguments, calls[6].result) == ("ls -l", "permission denied")


def _line(record: object) -> bytes:
    return json.dumps(record).encode() + b"\n"


def _spans(*spans: object) -> bytes:
    return _line({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


def _span(ident: str, name: str = "execute_tool", parent: str = "", **extra: object) -> object:
    return {"traceId": "t", "spanId": ident, "parentSpanId": parent, "name": name, **extra}


def _op(operation: str) -> list[object]:
    return [{"key": "gen_ai.operation.name", "value": {"stringValue": operation}}]


def _usage(**counts: int) -> list[object]:
    return [
        {"key": f"gen_ai.usage.{name}", "value": {"intValue": str(count)}}
        for name, count in counts.items()
    ]


def test_a_model_calls_tokens_go_with_the_next_call_beside_it() -> None:
    def at(start: int, ident: str, parent: str, attributes: list[object]) -> object:
        name = "execute_tool" if not attributes else "chat"
        return _span(ident, name, parent, startTimeUnixNano=start, attributes=attributes)

    lines = [
        _spans(
            _span("run", "invoke_agent", startTimeUnixNano=1, attributes=_op("invoke_agent")),
            at(2, "m1", "run", _op("chat") + _usage(output_tokens=7, input_tokens=900)),
            at(3, "c1", "run", []),
            at(4, "c2", "run", []),  # the same step's second call: no tokens
            # the older names; a model call under another parent is not this run's step
            at(5, "m2", "run", _op("chat") + _usage(completion_tokens=8, prompt_tokens=950)),
            at(6, "m3", "other", _op("chat") + _usage(output_tokens=1, input_tokens=1)),
            at(7, "c3", "run", []),
            at(8, "m4", "run", _op("chat") + _usage(input_tokens=990)),
            at(9, "m5", "run", _op("chat")),  # no usage: the step before still waits
            at(10, "c4", "run", []),
        )
    ]
    items = [i for i in _located(lines) if isinstance(i.event, ToolCallFinished)]
    assert [(i.tokens, i.input_tokens) for i in items] == [
        (7, 900),
        (None, None),
        (8, 950),
        (None, 990),
    ]


def test_odd_lines_and_spans_give_diagnostics_and_the_rest_is_read() -> None:
    args = [{"key": "gen_ai.tool.call.arguments", "value": {"stringValue": "[" * 100000}}]
    lines = [
        _spans(),
        b"{bad\n",
        b"[1]\n",
        _line({"resourceLogs": []}),
        _spans(3, {"spanId": "x"}, {"traceId": "t", "spanId": ""}),
        _line({"resourceSpans": [3, {"scopeSpans": [3, {"spans": 3}]}]}),
        # a loop of parents: a and b are each other's; neither is a prompt
        _spans(_span("a", "invoke_agent", "b", attributes=_op("invoke_agent"))),
        _spans(_span("b", "invoke_agent", "a", attributes=_op("invoke_agent"))),
        _spans(
            _span("c", parent="a", status={"code": "2"}, startTimeUnixNano="abc", attributes=args),
            _span("d", "execute_tool x", startTimeUnixNano=True, attributes=[3, {"key": 1}]),
            _span("e", "other", startTimeUnixNano=5, attributes=_op("chat")),
        ),
    ]
    outcomes = run_reader("otel-genai", lines)
    found = [(line, said.split(" (")[0]) for line, said in diagnostics(outcomes)]
    assert found == [
        (2, "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2"),
        (3, "expected a JSON object"),
        (4, "a line without resourceSpans"),
        (5, "a span that is not an object"),
        (5, "a span without a traceId and a spanId"),
        (5, "a span without a traceId and a spanId"),
    ]
    items = _located(lines)
    calls = [i.event for i in items if isinstance(i.event, ToolCallFinished)]
    assert [(c.agent, c.tool, c.arguments, c.failed) for c in calls] == [
        ("t", "execute_tool", "[" * 100000, True),
        ("t", "x", {"unrecorded span": "t/d"}, False),
    ]
    assert [i.timestamp for i in items] == [None, None]


def test_spans_that_are_not_genai_get_a_note_and_an_empty_file_nothing() -> None:
    lines = [_spans(_span("a", "GET /", attributes=[]), _span("b", "SELECT"))]
    outcomes = run_reader("otel-genai", lines)
    assert diagnostics(outcomes, "note") == [
        (
            1,
            "read as otel-genai, none of it a tool call"
            " (2 spans read, none a GenAI execute_tool or invoke_agent span)",
        )
    ]
    assert run_reader("otel-genai", []) == run_reader("otel-genai", [b""])


def test_a_document_that_breaks_off_or_has_no_spans() -> None:
    text = json.dumps(
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    "traceId": "t",
                                    "name": "execute_tool",
                                    "links": [{"spanId": "s"}],
                                },
                                {"traceId": "t", "spanId": "s", "name": "execute_tool"},
                                {"traceId": "t", "spanId": "u", "name": "execute_tool"},
                            ]
                        }
                    ]
                }
            ]
        },
        indent=1,
    )
    lines = text.encode().splitlines(keepends=True)
    outcomes = run_reader("otel-genai", lines)
    # A span without an id is placed at its resource's first line; the others at their ids,
    # looked for in turn: here the first span's link names "s" (line 12) before "s" does (18).
    assert diagnostics(outcomes) == [(3, "a span without a traceId and a spanId")]
    assert [i.where.line for i in _located(lines)] == [12, 23]
    # Cut short inside its only resource: the resource's spans are lost, and said so.
    cut = run_reader("otel-genai", lines[:17])
    assert diagnostics(cut) == [
        (18, "invalid JSON: Expecting property name enclosed in double quotes")
    ]
    assert summary(cut).tally.calls == 0
    other = run_reader("otel-genai", [b"{\n", b'"x": 1}\n'])
    assert diagnostics(other) == [(2, "no 'resourceSpans' array in the document")]


def test_any_value() -> None:
    assert any_value({"boolValue": True}) is True
    assert any_value({"doubleValue": 1.5}) == 1.5
    assert any_value({"bytesValue": "AAE="}) == "AAE="
    assert any_value({"intValue": "-7"}) == -7
    assert any_value({"intValue": "1" * 30}) == "1" * 30
    assert any_value({"intValue": "\u00b2"}) == "\u00b2"
    assert any_value({"intValue": 3}) == 3
    assert any_value({"arrayValue": 3}) == []
    assert any_value({"kvlistValue": {"values": [{"key": "k"}]}}) == {"k": None}
    assert any_value({"other": 1}) == {"other": 1}
    deep: object = {"stringValue": "x"}
    for _ in range(70):
        deep = {"arrayValue": {"values": [deep]}}
    flat = any_value(deep)
    for _ in range(65):
        assert isinstance(flat, list)
        flat = flat[0]
    assert isinstance(flat, dict)
    assert "arrayValue" in flat


def test_a_strands_run_named_by_its_trace_and_its_agent_run() -> None:
    path = HERE / "strands-1.62.0.jsonl"
    outcomes = run_file("otel-genai", path)
    # Lines 2, 5, 8: grep {"pattern": "TODO"}, each under an execute_event_loop_cycle span
    # (3, 6, 9) under the agent run (12, invoke_agent finder); no conversation id: the trace.
    assert fired(outcomes) == [(8, "grep", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run) == (3, 2, 3)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == []
    (session,) = summary(outcomes).sessions
    trace = json.loads(path.read_bytes().splitlines()[0])["resourceSpans"][0]["scopeSpans"][0]
    assert session.session == trace["spans"][0]["traceId"]
    items = _located(path.name)
    assert [i.where.line for i in items] == [12, 2, 5, 8]
    assert {i.event.agent for i in items} == {f"{session.session}/finder"}
    first = items[1].event
    assert isinstance(first, ToolCallFinished)
    assert (first.arguments, first.result) == (
        {"pattern": "TODO"},
        '[{"text": "no match for TODO"}]',
    )
