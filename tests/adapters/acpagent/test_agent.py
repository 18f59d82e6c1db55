"""The agent served in process: the frames it streams for calls, denials, errors and reminders."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from syrupy.assertion import SnapshotAssertion

from repeat_guard import GuardConfig
from repeat_guard_acp_agent import ClientPlan, GuardedAgent, session_reminder
from repeat_guard_agentloop import ContextMessage, ToolCall, hookspecs
from repeat_guard_pluggy import Accept
from repeat_guard_pluggy import ContextMessage as HookContext
from repeat_guard_transcripts import READERS, annotate, reminder_notification

from .harness import messages, run_in_process, script_of, updates

TODOS = {"todos": [{"content": "Draft the release notes", "status": "pending"}]}
FIVE_TODO_WRITES = {
    "tools": {"todo_write": {"kind": "think", "result": "Todos updated."}},
    "sessions": [
        {
            "prompts": ["Plan the release."],
            "turns": [*([[{"tool": "todo_write", "arguments": TODOS}]] * 5), "Planned."],
        }
    ],
    "client": {"cwd": "/home/dev/project"},
}


def test_five_identical_todo_writes_pin_gentle_third_and_detailed_fifth(
    snapshot: SnapshotAssertion,
) -> None:
    recording, events, _agent = run_in_process(script_of(FIVE_TODO_WRITES))
    assert b"".join(recording.lines()).decode() == snapshot(name="acp-frames")
    assert "".join(event.to_json() + "\n" for event in events) == snapshot(name="session-log")
    reminders = [u for u in updates(recording) if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["_meta"]["repeatGuard"]["count"] for u in reminders] == [3, 5]  # type: ignore[index]
    assert [u["_meta"]["repeatGuard"]["form"] for u in reminders] == ["gentle", "detailed"]  # type: ignore[index]


def test_each_reminder_frame_is_reminder_notification_and_follows_its_completion() -> None:
    recording, events, _agent = run_in_process(script_of(FIVE_TODO_WRITES))
    calls = {e.call_id: e for e in events if isinstance(e, ToolCall)}
    contexts = [e for e in events if isinstance(e, ContextMessage)]
    assert len(contexts) == 2
    decoded = messages(recording)
    for context in contexts:
        call = calls[context.call_id]
        acp_id = f"todo_write-{list(calls).index(context.call_id) + 1}"
        assert context.reminder is not None
        assert context.reminder.tool == call.tool
        reminder = session_reminder(context.reminder, "session-1")
        assert reminder == replace(context.reminder, agent="session:session-1")
        expected = reminder_notification("session-1", reminder)
        index = next(i for i, (_d, m) in enumerate(decoded) if m == expected)
        before = decoded[index - 1][1]["params"]["update"]  # type: ignore[index]
        assert before == {
            "toolCallId": acp_id,
            "status": "completed",
            "content": [{"content": {"text": "Todos updated.", "type": "text"}, "type": "content"}],
            "sessionUpdate": "tool_call_update",
        }


def test_tool_call_frames_carry_title_kind_raw_input_and_the_tool_name() -> None:
    recording, _events, _agent = run_in_process(script_of(FIVE_TODO_WRITES))
    start = updates(recording)[0]
    assert start == {
        "toolCallId": "todo_write-1",
        "title": 'todo_write {"todos":[{"content":"Draft the release notes","status":"pending"}]}',
        "kind": "think",
        "status": "pending",
        "rawInput": TODOS,
        "_meta": {"agentloop": {"toolName": "todo_write", "callId": "call_1"}},
        "sessionUpdate": "tool_call",
    }
    assert updates(recording)[-1] == {
        "content": {"text": "Planned.", "type": "text"},
        "sessionUpdate": "agent_message_chunk",
    }


PERMISSIONS = {
    "tools": {
        "Bash": {"kind": "execute", "permission": True, "results": ["one", "two"]},
        "broken": {"error": "disk full"},
    },
    "sessions": [
        {
            "prompts": ["Run it."],
            "turns": [
                [{"tool": "Bash", "arguments": {"command": "ls"}}],
                [{"tool": "Bash", "arguments": {"command": "ls"}}],
                [{"tool": "Bash", "arguments": {"command": "ls"}}],
                [{"tool": "Bash", "arguments": {"command": "ls"}}],
                [{"tool": "broken"}, {"tool": "missing", "arguments": "raw text"}],
                "Done.",
            ],
        }
    ],
    "client": {"permissions": ["allow_once", "reject_once", "cancelled", "allow_always"]},
}


def test_denials_errors_and_unknown_tools_end_failed_and_still_count() -> None:
    recording, _events, _agent = run_in_process(script_of(PERMISSIONS))
    ends = [
        (u["toolCallId"], u["status"], u["content"][0]["content"]["text"])  # type: ignore[index]
        for u in updates(recording)
        if u.get("status") in ("completed", "failed")
    ]
    assert ends == [
        ("Bash-1", "completed", "one"),
        ("Bash-2", "failed", "denied: the client rejected the call"),
        ("Bash-3", "failed", "denied: the permission request was cancelled"),
        ("Bash-4", "failed", "denied: the permission request was cancelled"),
        ("broken-5", "failed", "RuntimeError: disk full"),
        ("missing-6", "failed", "unknown tool 'missing'"),
    ]
    reminders = [u for u in updates(recording) if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["_meta"]["repeatGuard"]["count"] for u in reminders] == [3]  # type: ignore[index]
    running = [u["toolCallId"] for u in updates(recording) if u.get("status") == "in_progress"]
    assert running == ["Bash-1", "broken-5", "missing-6"]


def test_an_answer_naming_no_offered_option_denies_the_call() -> None:
    from acp.schema import AllowedOutcome

    from repeat_guard_acp_agent._agent import _refusal

    outcome = AllowedOutcome(outcome="selected", option_id="sometimes")
    assert _refusal(outcome) == "the client chose an unknown option 'sometimes'"


class _Annotator:
    """Another post-execute plugin: attaches its own context to every call."""

    @hookspecs.hookimpl
    def tool_post_execute(self, execution: object, result: object) -> Accept:
        return Accept(contexts=(HookContext("checked", {"kind": "plugin", "plugin": "lint"}),))


def test_other_plugins_contexts_stay_in_the_log_but_not_on_the_wire() -> None:
    script = script_of({"sessions": [{"prompts": ["go"], "turns": [[{"tool": "t"}], "done"]}]})

    async def run() -> tuple[int, list[dict[str, object]]]:
        from .harness import _run

        events: list[object] = []
        agent = GuardedAgent(script, log=events.append)
        agent.loop.pm.register(_Annotator())
        recording = await _run(agent, ClientPlan.from_script(script))
        return sum(isinstance(e, ContextMessage) for e in events), updates(recording)

    contexts, sent = asyncio.run(run())
    assert contexts == 1
    assert [u["sessionUpdate"] for u in sent] == [
        "tool_call",
        "tool_call_update",
        "tool_call_update",
        "agent_message_chunk",
    ]


def test_the_live_output_is_what_annotate_writes_into_the_same_frames() -> None:
    recording, _events, _agent = run_in_process(script_of(FIVE_TODO_WRITES))
    lines = recording.lines()
    bare = [line for line in lines if b'"repeatGuard"' not in line]
    assert len(bare) == len(lines) - 2
    annotated: list[bytes] = []
    outcomes = annotate(
        bare, READERS["acp"], GuardConfig(), file="bare.jsonl", write=annotated.append
    )
    assert len(list(outcomes)) == 3  # two reminders, then the summary
    assert [json.loads(line) for line in annotated] == [json.loads(line) for line in lines]
