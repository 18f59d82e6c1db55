"""The testing kit's state machine over the hook store, across simulated processes: every event
opens the store file anew, applies one action in its transaction and closes it, as a hook
process does, call for call against the reference model.

A call is counted before it runs (``PreToolUse``), so a refused call is counted as refused:
the calls are drawn without results, which a refusal could not carry."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from hypothesis import settings

from repeat_guard import Event, GuardConfig, Reminder, ToolCallFinished
from repeat_guard_hooks import AgentEvent, StoreResult, apply_action, open_store
from repeat_guard_testing import HarnessMachine, events, policy_configs

SESSION = "session"


class HookStoreHarness(HarnessMachine):
    configs = policy_configs()
    events = events(agents=["main", "helper"])  # a session's main agent and a subagent

    def start(self, config: GuardConfig) -> None:
        self.config = config
        self.directory = tempfile.mkdtemp()
        self.path = str(Path(self.directory) / "state.sqlite3")
        self.result = StoreResult(())
        self.now = 1_000.0

    def _apply(self, event: Event) -> StoreResult:
        self.now += 1.0
        connection = open_store(self.path)  # a new process: nothing kept in memory
        try:
            return apply_action(connection, self.config, AgentEvent(SESSION, event), self.now)
        finally:
            connection.close()

    def admit(self, call: ToolCallFinished) -> bool:
        # the hook asks and counts in one transaction: apply it here, report in deliver
        self.result = self._apply(call)
        return self.result.denied is None

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if isinstance(event, ToolCallFinished):
            return self.result.reminders
        return self._apply(event).reminders

    def check(self) -> None:
        assert self.result.dropped == 0

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


HookStoreHarness.TestCase.settings = settings(
    max_examples=30, stateful_step_count=30, deadline=None
)
test_hook_store_harness = HookStoreHarness.TestCase
