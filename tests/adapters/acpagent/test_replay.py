"""Live and replayed agree: record the agent as a subprocess, replay the recording, compare.

The live reminders are the notifications the agent injected (and the guard's context messages
in its session log); the replayed ones are what ``replay_transcript`` computes from the same
frames. They must agree on tool, count, form and text, each injected notification must be the
line right after its call's completion frame, and the replay must recognise the injected ones
as recorded reminders, not prompts.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from repeat_guard import GuardConfig
from repeat_guard_acp_agent import ClientPlan, agent_command, load_script, record_agent
from repeat_guard_transcripts import READERS, FileSummary, Fired, replay

from .test_agent import FIVE_TODO_WRITES, PERMISSIONS

DEMO = (
    Path(__file__).parents[3] / "adapters/acpagent/src/repeat_guard_acp_agent/data/demo_script.json"
)
Key = tuple[str, int, str]


def _write(tmp_path: Path, raw: Mapping[str, object]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def _live(lines: list[bytes]) -> list[tuple[int, Key, str]]:
    """Each injected reminder: its 1-based line, (tool, count, form) and text."""
    found = []
    for number, line in enumerate(lines, start=1):
        message = json.loads(line)["msg"]
        update = message.get("params", {}).get("update", {})
        guard = update.get("_meta", {}).get("repeatGuard")
        if guard is not None:
            key = (guard["tool"], guard["count"], guard["form"])
            found.append((number, key, update["content"]["text"]))
    return found


def _is_completion(line: bytes) -> bool:
    update = json.loads(line)["msg"].get("params", {}).get("update", {})
    if "status" not in update:
        return False
    return update["sessionUpdate"] == "tool_call_update" and update["status"] in (
        "completed",
        "failed",
    )


def _is_rejection(line: bytes) -> bool:
    record = json.loads(line)
    return record["dir"] == "c2a" and "outcome" in record["msg"].get("result", {})


@pytest.mark.parametrize(
    "source", ["five-todo-writes", "permissions", "demo"], ids=lambda name: name
)
def test_replaying_the_recording_reproduces_the_live_reminders(source: str, tmp_path: Path) -> None:
    raw_by_name: dict[str, Mapping[str, object]] = {
        "five-todo-writes": FIVE_TODO_WRITES,
        "permissions": PERMISSIONS,
    }
    path = DEMO if source == "demo" else _write(tmp_path, raw_by_name[source])
    log = tmp_path / "log.jsonl"
    plan = ClientPlan.from_script(load_script(path).unwrap())
    command = agent_command(str(path), log=str(log))
    recording = asyncio.run(record_agent(command, plan, env=dict(os.environ)))
    lines = recording.lines()

    live = _live(lines)
    assert live, "the script makes the guard fire"
    logged = [
        (event["reminder"]["tool"], event["reminder"]["count"], event["reminder"]["form"])
        for event in map(json.loads, log.read_text(encoding="utf-8").splitlines())
        if event["type"] == "context_message"
    ]
    assert logged == [key for _line, key, _text in live]

    items = list(replay(READERS["acp"].read(lines, "live.jsonl"), GuardConfig(), file="live.jsonl"))
    computed = [item for item in items if isinstance(item, Fired)]
    summaries = [item for item in items if isinstance(item, FileSummary)]
    assert len(summaries) == 1
    assert len(items) == len(computed) + len(summaries[0].recorded) + 1, "no diagnostics"
    summary = summaries[0]

    assert [(r.reminder.tool, r.reminder.count, r.reminder.form) for r in computed] == [
        key for _line, key, _text in live
    ]
    assert [r.reminder.text for r in computed] == [text for _line, _key, text in live]
    assert [(r.tool, r.count, r.form) for r in summary.recorded] == [k for _l, k, _t in live]
    assert [r.where.line for r in summary.recorded] == [line for line, _key, _text in live]
    for item, (line, _key, _text) in zip(computed, live, strict=True):
        # The replay fires where the call finished: its completion frame, or the client's
        # rejection of its permission request; the live reminder follows the call's last
        # completion frame, with only completion frames in between.
        fired = item.where.line
        assert fired < line
        assert _is_completion(lines[line - 2])
        assert all(_is_completion(lines[n - 1]) for n in range(fired + 1, line))
        assert _is_completion(lines[fired - 1]) or _is_rejection(lines[fired - 1])
    assert summary.tally.reminders == len(live)
