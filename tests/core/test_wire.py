"""The core's one codec for events and reminders: JSON-ready mappings, and back."""

from __future__ import annotations

import json

import pytest
from returns.pipeline import is_successful

from repeat_guard import (
    SOURCE,
    AgentDisposed,
    CodecError,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    event_from_json,
    event_to_json,
    json_type_name,
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
    ("change", "error"),
    [
        ({"count": 0}, CodecError("reminder.count", 0, "'count' must be an integer of 1 or more")),
        (
            {"count": True},
            CodecError("reminder.count", True, "'count' must be an integer of 1 or more"),
        ),
        (
            {"count": "2"},
            CodecError("reminder.count", "2", "'count' must be an integer of 1 or more"),
        ),
        (
            {"form": "loud"},
            CodecError(
                "reminder.form",
                "loud",
                "'form' must be one of gentle, detailed, cycle, budget, retry",
            ),
        ),
        ({"agent": None}, CodecError("reminder.agent", None, "'agent' must be a string")),
        ({"tool": 3}, CodecError("reminder.tool", 3, "'tool' must be a string")),
        ({"arguments": []}, CodecError("reminder.arguments", [], "'arguments' must be a string")),
        ({"text": b"x"}, CodecError("reminder.text", b"x", "'text' must be a string")),
        (
            {"source": {"kind": "hook"}},
            CodecError("reminder.source", {"kind": "hook"}, f"the source must be {SOURCE!r}"),
        ),
        (
            {"zz": 1, "extra": 1},
            CodecError("reminder", None, "a reminder has unknown field 'extra'"),
        ),
    ],
)
def test_a_bad_reminder_mapping_names_the_problem(
    change: dict[str, object], error: CodecError
) -> None:
    raw = {**reminder_to_json(reminder()), **change}
    assert reminder_from_json(raw).failure() == error


def test_a_reminder_that_lacks_a_field_or_is_not_a_mapping_fails() -> None:
    raw = reminder_to_json(reminder())
    del raw["text"]
    assert reminder_from_json(raw).failure() == CodecError(
        "reminder", None, "a reminder lacks 'text'"
    )
    assert reminder_from_json([1]).failure() == CodecError(
        "reminder", [1], "expected a JSON object, got an array"
    )


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
    (
        ToolCallReturned("a", "poll", {"id": 1}, {"out": "x"}),
        {
            "type": "tool_result",
            "agent": "a",
            "tool": "poll",
            "arguments": {"id": 1},
            "result": {"out": "x"},
        },
    ),
    (
        ToolCallReturned(None, "poll", 1, None),
        {"type": "tool_result", "agent": None, "tool": "poll", "arguments": 1, "result": None},
    ),
    (
        ToolCallFinished("a", "Bash", {"c": "make"}, result="Error 2", failed=True),
        {
            "type": "tool_call",
            "agent": "a",
            "tool": "Bash",
            "arguments": {"c": "make"},
            "denied": False,
            "result": "Error 2",
            "failed": True,
        },
    ),
    (
        ToolCallReturned("a", "Bash", {"c": "make"}, "Error 2", failed=True),
        {
            "type": "tool_result",
            "agent": "a",
            "tool": "Bash",
            "arguments": {"c": "make"},
            "result": "Error 2",
            "failed": True,
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


KNOWN = "(known: 'tool_call', 'tool_result', 'prompt', 'dispose')"


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ([], CodecError("event", [], "expected a JSON object, got an array")),
        ({"type": "call"}, CodecError("event.type", "call", f"unknown event type 'call' {KNOWN}")),
        ({"type": 1}, CodecError("event.type", 1, f"unknown event type 1 {KNOWN}")),
        (
            {"type": "tool_call", "agent": "a"},
            CodecError("event.arguments", None, "tool_call event lacks 'arguments', 'tool'"),
        ),
        (
            {"type": "prompt", "agent": "a", "y": 1, "x": 1},
            CodecError("event.x", None, "prompt event has unknown field 'x'"),
        ),
        (
            {"type": "prompt", "agent": None},
            CodecError("event.agent", None, "'agent' must be a string, got None"),
        ),
        (
            {"type": "dispose", "agent": 5},
            CodecError("event.agent", 5, "'agent' must be a string, got 5"),
        ),
        (
            {"type": "tool_call", "agent": 1, "tool": "t", "arguments": 1},
            CodecError("event.agent", 1, "'agent' must be a string or null, got 1"),
        ),
        (
            {"type": "tool_call", "agent": "a", "tool": 2, "arguments": 1},
            CodecError("event.tool", 2, "'tool' must be a string, got 2"),
        ),
        (
            {"type": "tool_call", "agent": "a", "tool": "t", "arguments": 1, "denied": "no"},
            CodecError("event.denied", "no", "'denied' must be true or false, got 'no'"),
        ),
        (
            {"type": "tool_call", "agent": "a", "tool": "t", "arguments": 1, "failed": 1},
            CodecError("event.failed", 1, "'failed' must be true or false, got 1"),
        ),
        (
            {
                "type": "tool_result",
                "agent": "a",
                "tool": "t",
                "arguments": 1,
                "result": 1,
                "failed": None,
            },
            CodecError("event.failed", None, "'failed' must be true or false, got None"),
        ),
        (
            {"type": "tool_result", "agent": "a", "tool": "t", "arguments": 1},
            CodecError("event.result", None, "tool_result event lacks 'result'"),
        ),
        (
            {
                "type": "tool_result",
                "agent": "a",
                "tool": "t",
                "arguments": 1,
                "result": 1,
                "denied": False,
            },
            CodecError("event.denied", None, "tool_result event has unknown field 'denied'"),
        ),
        (
            {"type": "tool_result", "agent": 2, "tool": "t", "arguments": 1, "result": 1},
            CodecError("event.agent", 2, "'agent' must be a string or null, got 2"),
        ),
        (
            {"type": "tool_result", "agent": "a", "tool": None, "arguments": 1, "result": 1},
            CodecError("event.tool", None, "'tool' must be a string, got None"),
        ),
    ],
)
def test_a_bad_event_mapping_names_the_problem(raw: object, error: CodecError) -> None:
    result = event_from_json(raw)
    assert not is_successful(result)
    assert result.failure() == error


def test_a_value_that_is_no_event_is_a_programming_error() -> None:
    with pytest.raises(AssertionError, match="'not an event'"):
        event_to_json("not an event")  # type: ignore[arg-type]  # the misuse under test


def test_a_reminder_may_count_one() -> None:
    raw = {**reminder_to_json(reminder()), "count": 1}
    assert reminder_from_json(raw).unwrap().count == 1


def test_a_value_is_named_by_its_json_type() -> None:
    names = [json_type_name(v) for v in (None, True, 1, 1.5, "s", [1], {"a": 1}, (1,), b"x")]
    assert names == [
        "null", "a boolean", "a number", "a number with a fraction", "a string",
        "an array", "an object", "a Python tuple", "a Python bytes",
    ]  # fmt: skip
