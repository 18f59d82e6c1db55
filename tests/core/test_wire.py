"""The core's JSON-ready mappings of its values."""

from __future__ import annotations

import json

from repeat_guard import GuardConfig, GuardState, ToolCallFinished, reduce, reminder_to_json


def test_a_reminder_maps_every_field_under_its_own_name() -> None:
    state = GuardState.initial(GuardConfig(thresholds=(2,)))
    call = ToolCallFinished("a", "grep", {"q": "ü"})
    (reminder,) = reduce(reduce(state, call)[0], call)[1]
    mapped = reminder_to_json(reminder)
    assert mapped == {
        "source": {"kind": "plugin", "plugin": "repeat-tool-guard"},
        "agent": "a",
        "tool": "grep",
        "count": 2,
        "form": "gentle",
        "arguments": '{"q":"ü"}',
        "text": reminder.text,
    }
    assert json.loads(json.dumps(mapped)) == mapped
    mapped["source"]["kind"] = "changed"  # type: ignore[index]  # a fresh dict, proven here
    assert reminder.source["kind"] == "plugin"
