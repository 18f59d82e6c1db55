"""The testing kit's state machine over the JSONL sidecar (``serve``), the Python side of the
pi, opencode and OpenClaw plugins: every event is written as one line on the sidecar's input
pipe and its answer read back from its output pipe, as the Node client does, call for call
against the reference model. A call is sent as an ``attempt`` line (admitted or refused, and
counted at once), which is what the client sends before a call runs; the rest as the events
they are. Once with the state in memory, once in a state file (one transaction a line).

The calls are drawn without results: a refused call runs nothing that could give one."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from hypothesis import settings

from repeat_guard import Event, GuardConfig, Reminder, ToolCallFinished, event_to_json
from repeat_guard_cli import StoredState, serve
from repeat_guard_testing import HarnessMachine, events, policy_configs


class SidecarHarness(HarnessMachine):
    configs = policy_configs()
    events = events()
    stored = False

    def start(self, config: GuardConfig) -> None:
        self.directory = tempfile.mkdtemp()
        state = StoredState(str(Path(self.directory) / "state.sqlite3"), config)
        read_in, self.input = _pipe()
        self.output, write_out = _pipe()
        self.sidecar = threading.Thread(
            target=_serve, args=(config, read_in, write_out, state if self.stored else None)
        )
        self.sidecar.start()
        self.reminders: list[Reminder] = []

    def _ask(self, line: dict[str, object]) -> dict[str, Any]:
        self.input.write(json.dumps(line).encode() + b"\n")
        self.input.flush()
        answer: dict[str, Any] = json.loads(self.output.readline())
        assert "error" not in answer, answer
        self.reminders = [_reminder(fields) for fields in answer.get("reminders", [])]
        return answer

    def admit(self, call: ToolCallFinished) -> bool:
        # The client asks and counts in one line: send it here, report in deliver.
        answer = self._ask({**event_to_json(call), "type": "attempt"})
        admitted: bool = answer["admit"]
        return admitted

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if not isinstance(event, ToolCallFinished):
            self._ask(event_to_json(event))
        return self.reminders

    def teardown(self) -> None:
        self.input.close()  # the sidecar's input ends: it returns
        self.sidecar.join()
        self.output.close()
        shutil.rmtree(self.directory, ignore_errors=True)


class StoredSidecarHarness(SidecarHarness):
    stored = True


def _pipe() -> tuple[BinaryIO, BinaryIO]:
    """A pipe's two ends as buffered files: (read, write)."""
    read, write = os.pipe()
    return open(read, "rb"), open(write, "wb")  # closed by teardown and _serve


def _serve(
    config: GuardConfig, source: BinaryIO, output: BinaryIO, state: StoredState | None
) -> None:
    with source, output:
        serve(config, source, output, state)
    if state is not None:
        state.close()


def _reminder(fields: dict[str, Any]) -> Reminder:
    # The sidecar's reminder lacks the full argument text, which the model does not compare.
    return Reminder(fields["agent"], fields["tool"], fields["count"], fields["form"], "", "")


for machine in (SidecarHarness, StoredSidecarHarness):
    machine.TestCase.settings = settings(max_examples=30, stateful_step_count=30, deadline=None)
test_sidecar_harness = SidecarHarness.TestCase
test_stored_sidecar_harness = StoredSidecarHarness.TestCase
