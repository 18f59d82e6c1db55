"""The Claude Code reader on sessions recorded from the real binary, and hand-written quirks.

Expected counts were made by hand from the files (see ``fixtures/README.md``): every call is
a ``tool_use`` block and counts at the line of its ``tool_result``.
"""

from __future__ import annotations

import json

import pytest

from repeat_guard import GuardConfig, PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import READERS, Located, SessionSeen

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

PROJECT = FIXTURES / "claude-code" / "projects" / "-home-dev-proj"
LOOP = PROJECT / "75ed4efb-ff36-4160-9d16-d209eefb574b.jsonl"
PARALLEL = PROJECT / "d40ac318-ccf9-4ebc-9129-faa2c1b3ec26.jsonl"
PARENT = PROJECT / "fe29ca76-f36a-4506-9a56-d8a0ac7a41ca.jsonl"
SUBAGENT = PROJECT / "fe29ca76-f36a-4506-9a56-d8a0ac7a41ca/subagents/agent-a9db1cda3af2c2cce.jsonl"
RELIABILITY = FIXTURES / "claude-code" / "claude-reliability_coverage-test-fix.transcript.jsonl"
DENIED = FIXTURES / "claude-code" / "denied_and_interrupted.jsonl"


@pytest.mark.parametrize(
    ("path", "counts", "lines"),
    [
        # (calls, tracked, wasted, denied, reminders, longest run), firing lines
        (LOOP, (5, 5, 4, 0, 2, 5), [(11, "Bash", 3, "gentle"), (15, "Bash", 5, "detailed")]),
        (PARALLEL, (6, 6, 5, 0, 2, 6), [(12, "Bash", 3, "gentle"), (16, "Bash", 5, "detailed")]),
        (PARENT, (3, 3, 1, 0, 0, 2), []),
        (SUBAGENT, (3, 3, 2, 0, 1, 3), [(8, "Bash", 3, "gentle")]),
        (RELIABILITY, (13, 13, 0, 0, 0, 1), []),
        (DENIED, (4, 4, 2, 3, 1, 3), [(7, "Bash", 3, "gentle")]),
    ],
    ids=["loop", "parallel", "parent", "subagent", "reliability", "denied"],
)
def test_counts_made_by_hand(
    path: object, counts: tuple[int, ...], lines: list[tuple[int, str, int, str]]
) -> None:
    assert isinstance(path, type(LOOP))
    outcomes = run_file("claude-code", path)
    total = summary(outcomes).tally
    got = (total.calls, total.tracked, total.wasted, total.denied, total.reminders)
    assert (*got, total.longest_run) == counts
    assert fired(outcomes) == lines
    assert len(summary(outcomes).sessions) == 1
    assert diagnostics(outcomes) == []


def test_a_subagent_is_its_own_agent_of_the_parents_session() -> None:
    items = list(READERS["claude-code"].read(SUBAGENT.read_bytes().splitlines(True), "sub"))
    events = [item.event for item in items if isinstance(item, Located)]
    session = "fe29ca76-f36a-4506-9a56-d8a0ac7a41ca"
    assert events[0] == PromptSubmitted(f"{session}/a9db1cda3af2c2cce")
    calls = [e for e in events if isinstance(e, ToolCallFinished)]
    assert {c.agent for c in calls} == {f"{session}/a9db1cda3af2c2cce"}
    assert calls[0].arguments == {"command": "ls", "description": "List files"}
    assert isinstance(items[0], SessionSeen)
    assert items[0].where.session == session


def test_the_main_agent_is_the_session_and_extras_come_along() -> None:
    items = list(READERS["claude-code"].read(LOOP.read_bytes().splitlines(True), "loop"))
    located = [item for item in items if isinstance(item, Located)]
    prompt, first = located[0], located[1]
    assert prompt.event == PromptSubmitted("75ed4efb-ff36-4160-9d16-d209eefb574b")
    assert prompt.turn == "9755c9b2-695f-459e-bd4a-bfc3019680c8"
    assert (first.project, first.tokens, first.where.line) == ("/home/dev/proj", 5, 7)
    assert first.timestamp == "2026-12-02T17:01:01.179Z"


def test_rejections_are_denials_and_open_calls_are_reported() -> None:
    outcomes = run_file("claude-code", DENIED)
    # the interrupted call is reported at its own line, when the next prompt ends its turn;
    # the one still open at the end of the file, at its own line too
    assert unfinished(outcomes) == [(10, "Bash"), (13, "Bash")]
    assert summary(outcomes).unfinished == 2


def record(**fields: object) -> bytes:
    return json.dumps({"sessionId": "s", **fields}).encode() + b"\n"


def use(ident: str, command: str = "ls", **extra: object) -> bytes:
    block = {"type": "tool_use", "id": ident, "name": "Bash", "input": {"command": command}}
    return record(type="assistant", message={"content": [block]}, **extra)


def result(ident: object, **extra: object) -> bytes:
    block = {"type": "tool_result", "tool_use_id": ident, "content": [{"type": "text"}]}
    return record(type="user", message={"content": [block]}, **extra)


def test_meta_messages_and_compaction_summaries_are_not_prompts() -> None:
    lines = [
        use("1"),
        result("1"),
        record(type="user", isMeta=True, message={"content": "caveat"}),
        use("2"),
        result("2"),
        record(type="user", isCompactSummary=True, message={"content": [{"type": "text"}]}),
        use("3"),
        result("3"),
    ]
    assert fired(run_reader("claude-code", lines)) == [(8, "Bash", 3, "gentle")]


def test_a_text_prompt_resets_and_sidechains_without_an_agent_id_are_one_agent() -> None:
    lines = [
        use("1"),
        result("1"),
        record(type="user", message={"content": [{"type": "text", "text": "go on"}]}),
        use("2"),
        result("2"),
        use("3", isSidechain=True),
        result("3", isSidechain=True),
    ]
    outcomes = run_reader("claude-code", lines, GuardConfig(thresholds=(2,)))
    assert fired(outcomes) == []
    assert summary(outcomes).sessions[0].agents == 2


def test_odd_records_are_diagnosed_or_ignored_and_reading_goes_on() -> None:
    lines = [
        b"[1]\n",
        b"{oops\n",
        json.dumps({"type": "summary", "summary": "s", "leafUuid": "u"}).encode() + b"\n",
        record(type="assistant", message="not an object"),
        record(type="assistant", message={"content": "just text"}),
        record(type="assistant", message={"content": ["x", {"type": "tool_use", "id": 1}]}),
        result(7),
        result("never-called"),
        use("1"),
        use("1"),  # the same id again: one call
        result("1"),
        result("1"),  # a repeated result: no news
        record(type="system", message={"content": "x"}),
    ]
    outcomes = run_reader("claude-code", lines)
    found = diagnostics(outcomes)
    assert [line for line, _ in found] == [1, 2, 6, 7]
    assert found[0] == (1, "expected a JSON object")
    assert found[1][1].startswith("invalid JSON")
    assert found[2:] == [
        (6, "tool_use without a string id and name"),
        (7, "tool_result without a string tool_use_id"),
    ]
    assert diagnostics(outcomes, "note") == [
        (8, "tool_result for tool_use 'never-called' that is not in this file")
    ]
    assert summary(outcomes).tally.calls == 1


def test_a_tool_use_id_repeated_in_another_session_of_the_file_counts_in_each() -> None:
    # A session copied into another of the same file (the same ids under a new sessionId):
    # each session replays its own calls, and a result pairs with its own session's call.
    lines = [use("1"), result("1"), use("1", sessionId="t"), result("1", sessionId="t")]
    outcomes = run_reader("claude-code", lines)
    assert [(s.session, s.tally.calls) for s in summary(outcomes).sessions] == [("s", 1), ("t", 1)]
    assert diagnostics(outcomes, "note") == []
    # Within one session a repeated id is still one call (a duplicated line).
    outcomes = run_reader("claude-code", [use("1"), use("1"), result("1"), result("1")])
    assert summary(outcomes).tally.calls == 1


def test_tokens_that_are_not_integers_are_dropped() -> None:
    block = {"type": "tool_use", "id": "2", "name": "Bash", "input": {}}
    usage = {"output_tokens": True}
    lines = [record(type="assistant", message={"content": [block], "usage": usage}), result("2")]
    items = list(READERS["claude-code"].read(lines, "t"))
    calls = [i for i in items if isinstance(i, Located) and isinstance(i.event, ToolCallFinished)]
    assert [c.tokens for c in calls] == [None]


def test_parallel_calls_recorded_by_the_binary_charge_their_response_once() -> None:
    # Claude Code 2.1.197 wrote each of a response's two calls on a line of its own, each line
    # with the response's usage (5 output tokens): the response's tokens go with its first call.
    items = list(READERS["claude-code"].read(PARALLEL.read_bytes().splitlines(True), "p"))
    calls = [i for i in items if isinstance(i, Located) and isinstance(i.event, ToolCallFinished)]
    assert [c.tokens for c in calls] == [5, None, 5, None, 5, None]
    assert [c.input_tokens for c in calls] == [10, None, 10, None, 10, None]


def test_a_responses_input_tokens_add_up_the_new_and_the_cached() -> None:
    def line(ident: str, usage: dict[str, object]) -> bytes:
        block = {"type": "tool_use", "id": ident, "name": "Bash", "input": {"n": ident}}
        return record(type="assistant", message={"content": [block], "usage": usage})

    lines = [
        line("1", {"input_tokens": 3, "cache_creation_input_tokens": 40, "output_tokens": 1}),
        line("2", {"cache_read_input_tokens": 500, "input_tokens": False}),
        line("3", {"output_tokens": 2}),
        *(result(str(n)) for n in range(1, 4)),
    ]
    items = list(READERS["claude-code"].read(lines, "t"))
    calls = [i for i in items if isinstance(i, Located) and isinstance(i.event, ToolCallFinished)]
    assert [(c.tokens, c.input_tokens) for c in calls] == [(1, 43), (None, 500), (2, None)]


def test_a_response_is_charged_once_per_agent_and_by_its_id() -> None:
    def line(ident: str, message: str | None, **extra: object) -> bytes:
        block = {"type": "tool_use", "id": ident, "name": "Bash", "input": {}}
        body: dict[str, object] = {"content": [block], "usage": {"output_tokens": 9}}
        if message is not None:
            body["id"] = message
        return record(type="assistant", message=body, **extra)

    side = {"isSidechain": True, "agentId": "a"}
    lines = [
        line("1", "m1"),
        line("2", "m1", **side),  # another agent's response with the same id: its own
        line("3", "m1"),
        line("4", "m2"),
        line("5", None),  # no id: each line charged, as before ids were read
        line("6", None),
        *(result(str(n)) for n in range(1, 7)),
    ]
    items = list(READERS["claude-code"].read(lines, "t"))
    calls = [i for i in items if isinstance(i, Located) and isinstance(i.event, ToolCallFinished)]
    assert [c.tokens for c in calls] == [9, 9, None, 9, 9, 9]


def test_a_call_is_dated_by_its_result_else_by_its_own_line() -> None:
    lines = [
        use("1", timestamp="2026-01-01T00:00:00Z"),
        result("1", timestamp="2026-01-02T00:00:00Z"),
        use("2", "pwd", timestamp="2026-01-03T00:00:00Z"),
        result("2"),
        use("3", "cd"),
        result("3"),
    ]
    items = list(READERS["claude-code"].read(lines, "t"))
    calls = [i for i in items if isinstance(i, Located) and isinstance(i.event, ToolCallFinished)]
    assert [c.timestamp for c in calls] == ["2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", None]


def test_sniffing() -> None:
    reader = READERS["claude-code"]
    assert reader.sniff(LOOP.read_bytes()[:4096])
    assert reader.sniff(RELIABILITY.read_bytes()[:65536])
    assert not reader.sniff(b'{"jsonrpc": "2.0", "method": "session/update"}\n')
    assert not reader.sniff(b'{"sessionId": "s"}\n')


@pytest.mark.parametrize(
    ("content", "tool_use_result", "denied"),
    [
        ([{"type": "text", "text": "Permission to use Bash has been denied."}], None, True),
        ({"odd": 1}, "User rejected tool use", True),
        ("Exit code 1", None, False),
        ({"odd": 1}, None, False),
    ],
)
def test_denials_are_told_by_their_text(
    content: object, tool_use_result: object, denied: bool
) -> None:
    block = {"type": "tool_result", "tool_use_id": "1", "content": content, "is_error": True}
    extra = {} if tool_use_result is None else {"toolUseResult": tool_use_result}
    lines = [use("1"), record(type="user", message={"content": [block]}, **extra)]
    assert summary(run_reader("claude-code", lines)).tally.denied == int(denied)
