"""Build ``fixtures/openhands/conversation/``: the events of ``fixtures/openhands/v1-events.jsonl``
as the software-agent-sdk persists a conversation, ``base_state.json`` and one file an event,
``events/event-NNNNN-<id>.json`` (one line of JSON, no newline at its end). Run from the
repository root::

    .venv/bin/python -m tests.adapters.transcripts.build_openhands_folder
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "openhands"
SOURCE = FIXTURES / "v1-events.jsonl"
TARGET = FIXTURES / "conversation"
STATE = {"id": "00000000-0000-4000-8000-0000000000aa", "execution_status": "finished"}


def main() -> None:
    shutil.rmtree(TARGET, ignore_errors=True)
    (TARGET / "events").mkdir(parents=True)
    (TARGET / "base_state.json").write_text(json.dumps(STATE, separators=(",", ":")))
    for number, line in enumerate(SOURCE.read_text().splitlines()):
        event = json.loads(line)
        name = f"event-{number:05d}-{event['id']}.json"
        (TARGET / "events" / name).write_text(json.dumps(event, separators=(",", ":")))


if __name__ == "__main__":
    main()
