"""The OpenHands reader on real trajectories (whole and excerpted) and hand-made events.

Expected counts were made by hand from the files (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json

import pytest

from repeat_guard import GuardConfig, PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import READERS, Located, Unfinished

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

OPENHANDS = FIXTURES / "openhands"
EXCERPT = OPENHANDS / "ponyc_4593_excerpt.json"
OUTPUT = OPENHANDS / "ponyc_4593_excerpt_output.jsonl"
RENAME = OPENHANDS / "tests_runtime_trajs_wrong_initial_state.json"


def test_the_same_failing_str_replace_twice_in_a_row_twice() -> None:
    # events 46 and 48 send the same str_replace (observations 47, 49); so do 66 and 68
    config = GuardConfig(thresholds=(2, 3))
    outcomes = run_file("openhands", EXCERPT, config)
    assert fired(outcomes) == [
        (372, "str_replace_editor", 2, "gentle"),
        (772, "str_replace_editor", 2, "gentle"),
    ]
    total = summary(outcomes).tally
    # 40 read, 42/46/48/50/62/64/66/68 edits, 44 read, 70 finish
    assert (total.calls, total.wasted, total.longest_run) == (11, 2, 2)
    assert summary(run_file("openhands", EXCERPT)).tally.reminders == 0


def test_evaluation_output_one_instance_per_line() -> None:
    outcomes = run_file("openhands", OUTPUT, GuardConfig(thresholds=(2,)))
    assert fired(outcomes) == [
        (1, "str_replace_editor", 2, "gentle"),
        (1, "str_replace_editor", 2, "gentle"),
    ]
    (session,) = summary(outcomes).sessions
    assert (session.session, session.tally.calls) == ("ponylang__ponyc-4593", 11)


def test_the_rename_trajectory() -> None:
    outcomes = run_file("openhands", RENAME)
    total = summary(outcomes).tally
    # view /workspace, mv, view /workspace, finish
    assert (total.calls, total.wasted) == (4, 0)
    items = list(READERS["openhands"].read(RENAME.read_bytes().splitlines(True), "r"))
    located = [i for i in items if isinstance(i, Located)]
    assert located[0].event == PromptSubmitted("r")
    listing = "Here's the files and directories up to 2 levels deep in /workspace, excluding hidden"
    assert located[1].event == ToolCallFinished(
        "r",
        "str_replace_editor",
        {"command": "view", "path": "/workspace"},
        result=f"{listing} items:\n/workspace/\n/workspace/game_2048.py",
    )
    assert located[-1].event == ToolCallFinished("r", "finish", {})  # ends the run: no result
    assert diagnostics(outcomes) == []


def event(ident: int, **fields: object) -> dict[str, object]:
    return {"id": ident, "source": "agent", **fields}


def test_delegates_are_agents_and_rejections_are_denials() -> None:
    events = [
        event(0, source="user", action="message", args={"content": "go"}),
        event(1, action="delegate", args={"agent": "BrowsingAgent", "thought": "t"}),
        event(2, action="run", args={"command": "ls", "thought": "a"}),
        event(3, observation="run", cause=2),
        event(4, action="run", args={"command": "ls", "thought": "b"}),
        event(5, observation="user_rejected", cause=4),
        event(6, observation="delegate", cause=1),
        event(7, action="run", args={"command": "ls"}),
        event(8, observation="run", cause=7),
        event(9, action="think", args={"thought": "hm"}),
        event(10, action="message", args={"content": "done?"}),
        event(11, source="environment", observation="agent_state_changed"),
        event(12, action="run", id=True, args={"command": "x"}),
        event(13, action="run", args=["odd"]),
        event(14),
        event(15, observation="run", cause=999),
    ]
    lines = [json.dumps(e).encode() + b"\n" for e in events]
    items = list(READERS["openhands"].read(lines, "/x/events.jsonl"))
    calls = [
        i.event for i in items if isinstance(i, Located) and isinstance(i.event, ToolCallFinished)
    ]
    assert [(c.agent, c.tool, c.denied) for c in calls] == [
        ("events/delegate-1", "run", False),
        ("events/delegate-1", "run", True),
        ("events", "delegate", False),
        ("events", "run", False),
        ("events", "run", False),
    ]
    assert calls[0].arguments == {"command": "ls"}  # the thought is not part of the call
    outcomes = run_reader("openhands", lines)
    assert unfinished(outcomes) == [(10, "think"), (14, "run")]
    assert summary(outcomes).sessions[0].agents == 2


def test_tool_call_metadata_without_its_call_falls_back_to_the_function_name() -> None:
    metadata = {
        "function_name": "execute_bash",
        "tool_call_id": "x",
        "model_response": {"choices": [1, {"message": {"tool_calls": [1, {"id": "y"}]}}]},
    }
    events = [event(1, action="run", args={"command": "ls"}, tool_call_metadata=metadata)]
    events.append(event(2, observation="run", cause=1))
    events.append(event(3, action="finish", tool_call_metadata={"tool_call_id": "z"}))
    items = list(READERS["openhands"].read([json.dumps(events).encode()], "t"))
    calls = [i.event for i in items if isinstance(i, Located)]
    assert calls == [
        ToolCallFinished("t", "execute_bash", {"command": "ls"}),  # an observation without content
        ToolCallFinished("t", "finish", None),
    ]


def test_odd_documents_and_lines() -> None:
    response = {"choices": [{"message": {"tool_calls": [{"id": None, "function": {"name": "f"}}]}}]}
    odd = [
        1,
        {"observation": "run"},
        event(1, action="run", tool_call_metadata={"model_response": response}),
        {"observation": "run", "cause": 1},
    ]
    outcomes = run_reader("openhands", [json.dumps(odd).encode() + b"\n"])
    assert diagnostics(outcomes) == [(1, "an event that is not an object")]
    assert summary(outcomes).tally.calls == 1
    pretty = json.dumps({"history": [event(1, action="finish")]}, indent=1).encode()
    assert summary(run_reader("openhands", pretty.splitlines(True))).tally.calls == 1
    assert diagnostics(run_reader("openhands", [b"[\xff]"])) == [
        (1, "not UTF-8 (invalid start byte at byte 1)")
    ]
    broken = run_reader("openhands", [b'[{"id": 1},\n', b"{bad"])
    assert [line for line, _ in diagnostics(broken)] == [2]
    # Text after the list: its events are read, and the rest gets a diagnostic.
    trailing = run_reader(
        "openhands", [b'[{"id": 1, "action": "finish", "source": "agent"}]\n', b"garbage\n"]
    )
    assert diagnostics(trailing) == [(2, "text after the end of the document")]
    assert summary(trailing).tally.calls == 1
    # An evaluation line holding an array is diagnosed, and makes no session of the file.
    lines = [b'{"instance_id": 3, "history": []}\n', b"{bad\n", b"[]\n", b'[{"id": 1}]\n']
    outcomes = run_reader("openhands", lines)
    assert [s.session for s in summary(outcomes).sessions] == ["line 1"]
    assert diagnostics(outcomes)[1:] == [
        (3, "expected a JSON object"),
        (4, "expected a JSON object"),
    ]
    assert summary(run_reader("openhands", [])).sessions == ()


def test_the_no_call_note_is_the_files_not_an_instances() -> None:
    # Evaluation output: an instance without a call beside one with calls is a session with
    # none; only a file whose instances all held none ends with the note, counting them all.
    chat = {"source": "user", "action": "message", "args": {"content": "hi"}}
    silent = json.dumps({"instance_id": "a", "history": [chat, chat]}).encode() + b"\n"
    busy = json.dumps({"instance_id": "b", "history": [event(1, action="finish")]}).encode()
    mixed = run_reader("openhands", [silent, busy + b"\n"])
    assert [s.session for s in summary(mixed).sessions] == ["a", "b"]
    assert diagnostics(mixed, "note") == []
    quiet = run_reader("openhands", [silent, silent.replace(b'"a"', b'"c"')])
    assert diagnostics(quiet, "note") == [
        (1, "read as openhands, none of it a tool call (4 events read)")
    ]


def test_malformed_tool_call_arguments_are_compared_as_text() -> None:
    malformed = {"id": "c", "function": {"name": "f", "arguments": "{oops"}}
    call = {
        "tool_call_id": "c",
        "model_response": {"choices": [{"message": {"tool_calls": [malformed]}}]},
    }
    document = json.dumps([event(1, action="finish", tool_call_metadata=call)]).encode()
    items = list(READERS["openhands"].read([document], "m"))
    assert [i.event for i in items if isinstance(i, Located)] == [
        ToolCallFinished("m", "f", "{oops")
    ]


def test_sniffing() -> None:
    reader = READERS["openhands"]
    assert reader.sniff(RENAME.read_bytes()[:4096])
    assert reader.sniff(OUTPUT.read_bytes()[:4096])
    assert not reader.sniff(b'[{"id": 1}]')
    assert not reader.sniff(b'{"history": []}\n')


def test_delegates_that_never_end_are_bounded() -> None:
    from repeat_guard_transcripts import OPEN_CALLS
    from repeat_guard_transcripts._openhands import _Session

    session = _Session("e.jsonl", "e")
    for n in range(OPEN_CALLS + 2):
        list(session.event(n + 1, event(n, action="delegate", args={})))
    assert len(session.delegates) == OPEN_CALLS
    assert session.agent == f"e/delegate-{OPEN_CALLS + 1}"
    list(session.event(1, event(10**6, observation="delegate", cause=OPEN_CALLS + 1)))
    assert session.agent == f"e/delegate-{OPEN_CALLS}"
    assert session.delegates[0][0] == "e/delegate-2"  # the two outermost were forgotten


def test_a_trajectory_read_in_chunks_of_any_size_reads_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import repeat_guard_transcripts._document as document_module

    samples = [path.read_bytes().splitlines(keepends=True) for path in (EXCERPT, RENAME)]
    whole = [run_reader("openhands", lines) for lines in samples]
    monkeypatch.setattr(document_module, "_CHUNK", 5)
    assert [run_reader("openhands", lines) for lines in samples] == whole


V1 = OPENHANDS / "v1-events.jsonl"


def test_openhands_v1_events_four_identical_calls_are_caught() -> None:
    from repeat_guard_transcripts import sniff_head

    assert sniff_head(V1.read_bytes()) == "openhands"
    outcomes = run_file("openhands", V1)
    # By hand: lines 5, 7, 9, 11 answer the same terminal call (the summaries differ, the
    # action does not); 14 a denial after the prompt on 12; 16 an error result.
    assert fired(outcomes) == [(9, "terminal", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.denied, total.longest_run) == (6, 3, 1, 4)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == []
    items = list(READERS["openhands"].read(V1.read_bytes().splitlines(True), "v1.jsonl"))
    events = [(i.where.line, i.event) for i in items if isinstance(i, Located)]
    assert events[0] == (2, PromptSubmitted("v1"))
    assert events[1] == (
        5,
        ToolCallFinished(
            "v1",
            "terminal",
            {"command": "pytest -x tests", "is_input": False, "reset": False},
            False,
            {
                "content": [{"type": "text", "text": "1 failed"}],
                "is_error": False,
                "command": "pytest -x tests",
                "exit_code": 1,
                "timeout": False,
                "kind": "TerminalObservation",
            },
            failed=True,  # exit code 1
        ),
    )
    assert events[-1] == (
        16,
        ToolCallFinished(
            "v1",
            "file_editor",
            {"command": "view", "path": "/w"},
            False,
            "invalid arguments",
            failed=True,  # an AgentErrorEvent
        ),
    )
    assert events[-2][1] == ToolCallFinished(
        "v1",
        "terminal",
        {"command": "rm -rf build", "is_input": False, "reset": False},
        True,
        "not now",
    )


def test_openhands_v1_history_in_evaluation_output_and_a_json_list() -> None:
    events = [json.loads(line) for line in V1.read_text().splitlines()]
    line = json.dumps({"instance_id": "i1", "history": events}).encode() + b"\n"
    outcomes = run_reader("openhands", [line, line])
    assert summary(outcomes).tally.calls == 12
    assert [where for where, *_ in fired(outcomes)] == [1, 2]
    listed = json.dumps(events, indent=1).encode().splitlines(True)
    assert summary(run_reader("openhands", listed)).tally.wasted == 3


def test_openhands_v1_odd_events_and_a_file_without_calls_gets_a_note() -> None:
    odd: list[object] = [
        {"kind": "ActionEvent", "source": "agent", "tool_name": "t"},  # no tool_call_id
        {
            "kind": "ObservationEvent",
            "source": "environment",
            "tool_call_id": "x",
            "tool_name": "t",
        },
        {"kind": "MessageEvent", "source": "agent", "llm_message": {}},
        {"kind": "PauseEvent", "source": "user"},
        {
            "kind": "ActionEvent",
            "source": "agent",
            "tool_call_id": "y",
            "tool_name": "t",
            "tool_call": {"arguments": "not json"},
        },
        {
            "kind": "ActionEvent",
            "source": "agent",
            "tool_call_id": "z",
            "tool_name": "t",
            "tool_call": {"arguments": "[1]"},
        },
        {"kind": "ActionEvent", "source": "agent", "tool_call_id": "w", "tool_name": "t"},
    ]
    lines = [json.dumps(event).encode() + b"\n" for event in odd]
    outcomes = run_reader("openhands", lines[:4])
    assert diagnostics(outcomes, "note") == [
        (1, "read as openhands, none of it a tool call (4 events read)")
    ]
    assert summary(outcomes).tally.calls == 0
    items = list(READERS["openhands"].read(lines, "odd.jsonl"))
    assert [(u.where.line, u.tool) for u in items if isinstance(u, Unfinished)] == [
        (5, "t"),
        (6, "t"),
        (7, "t"),
    ]
