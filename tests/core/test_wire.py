"""The core's one codec for events and reminders: JSON-ready mappings, and back."""

from __future__ import annotations

import json

import pytest
from returns.pipeline import is_successful

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    event_from_json,
    event_to_json,
    reduce,
    reminder_from_json,
    reminder_to_json,
)


def reminder() -> Reminder:
    state = GuardState.initial(GuardConfig(thresholds=(2,)))
    call = ToolCallFinished("a", "grep", {"q": "ü"})
    (fired,) = reduce(reduce(state, call)[0], call)[1]
    return fired


def test_a_reminder_maps_every_field_under_its_own_name_and_back() -> None:
    value = reminder()
    mapped = reminder_to_json(value)
    assert mapped == {
        "source": {"kind": "plugin", "plugin": "repeat-tool-guard"},
        "agent": "a",
        "tool": "grep",
        "count": 2,
        "form": "gentle",
        "arguments": '{"q":"ü"}',
        "text": value.text,
    }
    assert reminder_from_json(json.loads(json.dumps(mapped))).unwrap() == value
    mapped["source"]["kind"] = "changed"  # type: ignore[index]  # a fresh dict, proven here
    assert value.source["kind"] == "plugin"


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        ({"count": 0}, "reminder.count", "'count' must be an integer of 1 or more"),
        ({"count": True}, "reminder.count", "'count' must be an integer of 1 or more"),
        (
            {"form": "loud"},
            "reminder.form",
            "'form' must be one of gentle, detailed, cycle, budget",
        ),
        ({"tool": 3}, "reminder.tool", "'tool' must be a string"),
        ({"source": {"kind": "hook"}}, "reminder.source", "the source must be"),
        ({"extra": 1}, "reminder", "a reminder has unknown field 'extra'"),
    ],
)
def test_a_bad_reminder_mapping_names_the_problem(
    change: dict[str, object], path: str, message: str
) -> None:
    raw = {**reminder_to_json(reminder()), **change}
    error = reminder_from_json(raw).failure()
    assert error.path == path
    assert error.message.startswith(message)


def test_a_reminder_that_lacks_a_field_or_is_not_a_mapping_fails() -> None:
    raw = reminder_to_json(reminder())
    del raw["text"]
    assert reminder_from_json(raw).failure().message == "a reminder lacks 'text'"
    assert reminder_from_json([1]).failure().message == "expected a JSON object, got list"


EVENTS: list[tuple[Event, dict[str, object]]] = [
    (
        ToolCallFinished("a", "grep", {"q": 1}),
        {"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {"q": 1}, "denied": False},
    ),
    (
        ToolCallFinished(None, "ls", "raw{", denied=True, result=["x"]),
        {
            "type": "tool_call",
            "agent": None,
            "tool": "ls",
            "arguments": "raw{",
            "denied": True,
            "result": ["x"],
        },
    ),
    (PromptSubmitted("a"), {"type": "prompt", "agent": "a"}),
    (AgentDisposed("b"), {"type": "dispose", "agent": "b"}),
]


@pytest.mark.parametrize(("event", "mapped"), EVENTS)
def test_events_map_and_come_back(event: Event, mapped: dict[str, object]) -> None:
    assert event_to_json(event) == mapped
    assert event_from_json(json.loads(json.dumps(mapped))).unwrap() == event


def test_a_call_may_leave_out_denied() -> None:
    raw = {"type": "tool_call", "agent": "a", "tool": "t", "arguments": 1}
    assert event_from_json(raw).unwrap() == ToolCallFinished("a", "t", 1)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "expected a JSON object, got list"),
        ({"type": "call"}, "unknown event type 'call' (known: 'tool_call', 'prompt', 'dispose')"),
        ({"type": 1}, "unknown event type 1 (known: 'tool_call', 'prompt', 'dispose')"),
        ({"type": "tool_call", "agent": "a"}, "tool_call event lacks 'arguments', 'tool'"),
        ({"type": "prompt", "agent": "a", "x": 1}, "prompt event has unknown field 'x'"),
        ({"type": "prompt", "agent": None}, "'agent' must be a string, got None"),
        (
            {"type": "tool_call", "agent": 1, "tool": "t", "arguments": 1},
            "'agent' must be a string or null, got 1",
        ),
        (
            {"type": "tool_call", "agent": "a", "tool": None, "arguments": 1},
            "'tool' must be a string, got None",
        ),
        (
            {"type": "tool_call", "agent": "a", "tool": "t", "arguments": 1, "denied": "no"},
            "'denied' must be true or false, got 'no'",
        ),
    ],
)
def test_a_bad_event_mapping_names_the_problem(raw: object, message: str) -> None:
    result = event_from_json(raw)
    assert not is_successful(result)
    assert result.failure().message == message
