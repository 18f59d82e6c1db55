"""The agent's methods called directly: unknown sessions, failing turns, cancelling, sources."""

from __future__ import annotations

import asyncio
from typing import Any

import acp
import pytest
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
)

from repeat_guard import Reminder
from repeat_guard_acp_agent import GuardedAgent, session_reminder

from .harness import script_of

ONE_SESSION: dict[str, object] = {"sessions": [{"prompts": [], "turns": []}]}


class _WaitingClient:
    """Holds every permission request until released; records the updates it is sent."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.release = asyncio.Event()
        self.updates: list[Any] = []

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        self.asked.set()
        await self.release.wait()
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow")
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)


def test_unknown_sessions_and_sessions_beyond_the_script_are_request_errors() -> None:
    async def run() -> None:
        agent = GuardedAgent(script_of(ONE_SESSION))
        with pytest.raises(acp.RequestError) as unknown:
            await agent.prompt("session-9", [])
        assert unknown.value.data == {"sessionId": "session-9"}
        assert (await agent.new_session("/")).session_id == "session-1"
        with pytest.raises(acp.RequestError) as beyond:
            await agent.new_session("/")
        assert beyond.value.data == {"details": "the script has 1 session(s)"}
        await agent.cancel("session-9")  # nothing to cancel: no error

    asyncio.run(run())


def test_a_turn_that_fails_is_an_internal_error_naming_the_cause() -> None:
    async def run() -> None:
        agent = GuardedAgent(script_of(ONE_SESSION))
        agent.on_connect(_WaitingClient())  # type: ignore[arg-type]  # a test double
        session = await agent.new_session("/")
        with pytest.raises(acp.RequestError) as failed:
            await agent.prompt(session.session_id, [TextContentBlock(type="text", text="hi")])
        data = failed.value.data
        assert isinstance(data, dict)
        assert str(data["details"]).startswith("ScriptExhaustedError: ")

    asyncio.run(run())


def test_an_unconnected_agent_fails_its_turn() -> None:
    script = script_of({"sessions": [{"prompts": [], "turns": ["hello"]}]})

    async def run() -> None:
        agent = GuardedAgent(script)
        session = await agent.new_session("/")
        with pytest.raises(acp.RequestError) as failed:
            await agent.prompt(session.session_id, [])
        data = failed.value.data
        assert isinstance(data, dict)
        assert "not connected" in str(data["details"])

    asyncio.run(run())


def test_cancel_stops_the_running_turn() -> None:
    script = script_of(
        {
            "tools": {"Bash": {"permission": True}},
            "sessions": [{"prompts": [], "turns": [[{"tool": "Bash"}], "done"]}],
        }
    )

    async def run() -> None:
        agent = GuardedAgent(script)
        client = _WaitingClient()
        agent.on_connect(client)  # type: ignore[arg-type]  # a test double
        session = await agent.new_session("/")
        prompt = asyncio.create_task(agent.prompt(session.session_id, []))
        await client.asked.wait()
        await agent.cancel(session.session_id)
        response = await prompt
        assert response.stop_reason == "cancelled"
        assert [update.session_update for update in client.updates] == ["tool_call"]

    asyncio.run(run())


def test_session_reminder_rekeys_the_guards_reminder_and_keeps_the_rest() -> None:
    reminder = Reminder("agent-1", "grep", 3, "gentle", "text", '{"q":1}')
    keyed = session_reminder(reminder, "s1")
    assert keyed == Reminder("session:s1", "grep", 3, "gentle", "text", '{"q":1}')
    assert reminder.agent == "agent-1"
