"""Qwen Code's hook inputs as guard events, and the answers it reads.

The fixtures under ``fixtures/qwen-code/`` were recorded from Qwen Code 0.24.4 run headless
(``qwen -p``) against this project's Chat Completions stand-in on 127.0.0.1, every hook event
written to a file by a recording hook (temporary paths replaced by ``/tmp/project`` and
``/tmp/home``): a loop of identical ``ls`` calls that Qwen Code halted itself at the fifth, a
subagent, a call its permission check refused, and the request after a ``PostToolUse`` answer
and a ``PreToolUse`` refusal (each with ``additionalContext``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repeat_guard import GuardState, PromptSubmitted, Reminder, ToolCallFinished, reduce
from repeat_guard_hooks import (
    QWEN_CODE,
    QWEN_LABEL,
    AgentEvent,
    HookOptions,
    Unused,
    hook_input_or_reason,
    labelled_answer,
    run_hook,
)

FIXTURES = Path(__file__).parent / "fixtures" / "qwen-code"


def _inputs(name: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / name).read_text().splitlines()
    return [json.loads(line) for line in lines]


def _answers(name: str, tmp_path: Path, config: str = "") -> list[tuple[str, object]]:
    (tmp_path / "guard.toml").write_text(config)
    options = HookOptions(QWEN_CODE, str(tmp_path / "state.sqlite3"), str(tmp_path / "guard.toml"))
    said: list[tuple[str, object]] = []
    for now, payload in enumerate(_inputs(name)):
        outcome = run_hook(options, json.dumps(payload).encode(), float(now))
        assert (outcome.status, outcome.stderr) == (0, "")
        if outcome.stdout:
            said.append((payload["hook_event_name"], json.loads(outcome.stdout)))
    return said


def test_an_empty_prompt_is_no_prompt() -> None:
    # Qwen Code fires UserPromptSubmit before every request, with an empty prompt after a result.
    prompts = [p for p in _inputs("loop.hooks.jsonl") if p["hook_event_name"] == "UserPromptSubmit"]
    read = [hook_input_or_reason(QWEN_CODE, json.dumps(p).encode()) for p in prompts]
    session = prompts[0]["session_id"]
    assert [r.action for r in read if not isinstance(r, str)] == [
        AgentEvent(session, PromptSubmitted(session)),
        *[Unused()] * (len(prompts) - 1),
    ]
    missing = {k: v for k, v in prompts[0].items() if k != "prompt"}
    parsed = hook_input_or_reason(QWEN_CODE, json.dumps(missing).encode())
    assert not isinstance(parsed, str)
    assert parsed.action == Unused()


def test_the_reminder_waits_for_the_calls_post_tool_use(tmp_path: Path) -> None:
    said = _answers("loop.hooks.jsonl", tmp_path)
    # Four calls (Qwen Code halted the fifth): the third's reminder comes with its result, and
    # its PreToolUse says nothing (Qwen Code would drop it).
    assert said == [
        (
            "PostToolUse",
            {
                "hookSpecificOutput": {
                    "hookEventName": "PostToolUse",
                    "additionalContext": f"{QWEN_LABEL}{_gentle().body}",
                }
            },
        )
    ]
    assert "<" not in _gentle().body


def _gentle() -> Reminder:
    state = GuardState.initial()
    fired: list[Reminder] = []
    for _ in range(3):
        state, reminders = reduce(
            state, ToolCallFinished("a", "run_shell_command", {"command": "ls"})
        )
        fired.extend(reminders)
    (gentle,) = fired
    return gentle


def test_a_subagents_calls_are_its_own(tmp_path: Path) -> None:
    inputs = _inputs("subagent.hooks.jsonl")
    calls = [p for p in inputs if p["hook_event_name"] == "PreToolUse"]
    agents = set()
    for payload in calls:
        read = hook_input_or_reason(QWEN_CODE, json.dumps(payload).encode())
        assert not isinstance(read, str)
        assert isinstance(read.action, AgentEvent)
        event = read.action.event
        assert isinstance(event, ToolCallFinished)
        agents.add(event.agent)
    session = calls[0]["session_id"]
    assert f"{session}/general-purpose-call_002_0" in agents
    assert session in agents


def test_a_call_its_permission_check_refuses_fires_no_hook() -> None:
    events = [p["hook_event_name"] for p in _inputs("permission-refused.hooks.jsonl")]
    assert "PreToolUse" not in events
    assert "PostToolUse" not in events


def test_what_the_model_read_of_a_post_tool_use_answer_and_a_refusal() -> None:
    messages = json.loads((FIXTURES / "answers.request.json").read_text())
    results = [m["content"][0]["text"] for m in messages if m["role"] == "tool"]
    # A PostToolUse answer's additionalContext after a blank line, its tags escaped; a refused
    # call's result is the deny reason alone (the PreToolUse additionalContext is dropped).
    assert results[0].endswith("\n\n&lt;system-reminder&gt;\nPOSTCTX\n&lt;/system-reminder&gt;")
    assert results[1] == "DENYREASON"
    assert "PRECTX" not in json.dumps(messages)


def test_a_refusal_carries_the_reminder_in_its_reason() -> None:
    both = labelled_answer("PreToolUse", "stop", "refused: enough")
    assert both == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"refused: enough\n\n{QWEN_LABEL}stop",
        }
    }
    alone = labelled_answer("PreToolUse", None, "refused: enough")
    assert alone == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "refused: enough",
        }
    }
    context = labelled_answer("PostToolUse", "stop", None)
    assert context == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "[repeat-guard] stop",
        }
    }
