"""The session log of the keyless scenario, pinned: five identical ``todo_write`` calls."""

from __future__ import annotations

import asyncio
import json

from syrupy.assertion import SnapshotAssertion

from repeat_guard import GuardConfig
from repeat_guard_agentloop import AgentLoop, ScriptedModel, ToolRegistry

from ._support import call, reminders

TODO = {"todos": [{"content": "Read the failing test", "status": "in_progress"}]}


async def todo_write(arguments: object) -> str:
    """A bookkeeping tool that accepts the list and says so."""
    return "Todos have been modified successfully."


def test_five_identical_todo_write_calls_log_the_gentle_and_detailed_reminders(
    snapshot: SnapshotAssertion,
) -> None:
    registry = ToolRegistry()
    registry.register("todo_write", todo_write, description="Write the todo list")

    async def scenario() -> str:
        # The default config: thresholds 3, 5, 8 and nothing excluded.
        loop = AgentLoop(registry, guard=GuardConfig())
        model = ScriptedModel([*[call("todo_write", TODO)] * 5, "Done."])
        agent = loop.spawn("main", model)
        await loop.followup(agent, "Plan the fix.")
        assert reminders(loop.log) == [(3, "todo_write × 3"), (5, "todo_write × 5")]
        return loop.log.to_jsonl()

    jsonl = asyncio.run(scenario())
    assert jsonl == asyncio.run(scenario())  # deterministic: nothing varies between runs
    assert [json.loads(line)["type"] for line in jsonl.splitlines()].count("context_message") == 2
    assert jsonl == snapshot
