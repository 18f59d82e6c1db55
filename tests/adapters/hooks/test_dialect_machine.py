"""The testing kit's state machine over each host's dialect: every event is written as the hook
input that host sends (its event name and fields, from the dialect's own table), read back by
the dialect, and applied to the store in a transaction of its own, as a hook process does,
call for call against the reference model. Each of the kit's agents is a session of its own
(the host's main agent), so a prompt is the host's prompt event and a disposal its session's
end; a host with no prompt event or no session end (Crush, Cursor, Kiro) is checked on the events
it has. A call with no agent is one no host can send: it changes nothing, in the model too.

A call is counted before it runs, so the calls are drawn without results (see
``test_machine``)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
)
from repeat_guard_hooks import (
    DIALECTS,
    Dialect,
    StoreResult,
    Unused,
    apply_action,
    hook_input_or_reason,
    open_store,
)
from repeat_guard_testing import HarnessMachine, events, policy_configs, tool_calls

AGENTS = ("s1", "s2")
CHECKED = sorted(name for name, dialect in DIALECTS.items() if "call" in dialect.events.values())
# The role each kind of drawn event needs the host to have.
_ROLES = {ToolCallFinished: "call", PromptSubmitted: "prompt", AgentDisposed: "session-end"}


def _event_name(dialect: Dialect, role: str) -> str:
    # A call goes through an event that names its tool (Cursor's shell event is always "Shell").
    return next(
        name
        for name, given in dialect.events.items()
        if given == role and name not in dialect.event_tools
    )


def _events_of(dialect: Dialect) -> st.SearchStrategy[Event]:
    """The kit's events, as ``events()`` draws them, of the kinds ``dialect``'s host can say."""
    agent = st.sampled_from(AGENTS)
    others = (st.builds(PromptSubmitted, agent), st.builds(AgentDisposed, agent))
    kinds: tuple[Event, Event] = (PromptSubmitted(AGENTS[0]), AgentDisposed(AGENTS[0]))
    sayable = [other for other, kind in zip(others, kinds, strict=True) if _sendable(dialect, kind)]
    return st.one_of(*[tool_calls(AGENTS)] * 6, *sayable)


def _sendable(dialect: Dialect, event: Event) -> bool:
    """Whether ``dialect``'s host has an event that says ``event``."""
    return _ROLES[type(event)] in dialect.events.values()


def _put(payload: dict[str, object], path: str, value: object) -> None:
    """Write ``value`` at the dialect's field ``path`` (dotted; each of ``|`` alternatives)."""
    for alternative in path.split("|"):
        *parents, last = alternative.split(".")
        into = payload
        for part in parents:
            child = into.setdefault(part, {})
            assert isinstance(child, dict)
            into = child
        into[last] = value


def hook_input(dialect: Dialect, event: Event) -> bytes:
    """``event`` (of an agent that is a session's main agent) as ``dialect``'s host sends it."""
    assert event.agent is not None
    payload: dict[str, object] = {"cwd": "/"}
    _put(payload, dialect.session_field, event.agent)
    match event:
        case ToolCallFinished():
            _put(payload, dialect.event_field, _event_name(dialect, "call"))
            _put(payload, dialect.tool_field, event.tool)
            _put(payload, dialect.arguments_field, event.arguments)
        case PromptSubmitted():
            _put(payload, dialect.event_field, _event_name(dialect, "prompt"))
            _put(payload, dialect.prompt_field or "prompt", "go on")
        case AgentDisposed():
            _put(payload, dialect.event_field, _event_name(dialect, "session-end"))
        case _:  # no results are drawn
            raise AssertionError(event)
    return json.dumps(payload).encode()


class DialectHarness(HarnessMachine):
    configs = policy_configs()
    events = events(agents=AGENTS)
    dialect = DIALECTS["claude-code"]

    def start(self, config: GuardConfig) -> None:
        self.config = config
        self.directory = tempfile.mkdtemp()
        self.path = str(Path(self.directory) / "state.sqlite3")
        self.result = StoreResult(())
        self.now = 1_000.0

    def _apply(self, event: Event) -> StoreResult:
        if event.agent is None:
            return StoreResult(())
        read = hook_input_or_reason(self.dialect, hook_input(self.dialect, event))
        assert not isinstance(read, str), read
        assert not isinstance(read.action, Unused), event
        self.now += 1.0
        connection = open_store(self.path)  # a new process: nothing kept in memory
        try:
            return apply_action(connection, self.config, read.action, self.now)
        finally:
            connection.close()

    def admit(self, call: ToolCallFinished) -> bool:
        self.result = self._apply(call)
        return self.result.denied is None

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if isinstance(event, ToolCallFinished):
            return self.result.reminders
        return self._apply(event).reminders

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.mark.parametrize("name", CHECKED)
def test_each_dialect_against_the_model(name: str) -> None:
    class Machine(DialectHarness):
        dialect = DIALECTS[name]
        events = _events_of(DIALECTS[name])

    Machine.TestCase.settings = settings(max_examples=15, stateful_step_count=30, deadline=None)
    Machine.TestCase().runTest()


def test_the_hosts_checked() -> None:
    assert set(CHECKED) == set(DIALECTS)
    # what a host without a prompt or a session's end is never sent
    crush, cursor = DIALECTS["crush"], DIALECTS["cursor"]
    assert not _sendable(crush, PromptSubmitted("s1"))
    assert not _sendable(cursor, AgentDisposed("s1"))
    assert _sendable(cursor, PromptSubmitted("s1"))
    assert _event_name(cursor, "call") == "beforeMCPExecution"
