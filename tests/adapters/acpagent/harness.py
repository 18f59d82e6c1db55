"""Run the ACP agent in this process over a socket pair, recording with the real recorder."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Mapping

import acp

from repeat_guard import GuardConfig
from repeat_guard_acp_agent import (
    AgentScript,
    ClientPlan,
    GuardedAgent,
    Recording,
    as_acp_agent,
    parse_script,
    record_streams,
)
from repeat_guard_agentloop import Event


def script_of(raw: Mapping[str, object]) -> AgentScript:
    """Return the parsed script ``raw`` (the test fails if it is invalid)."""
    return parse_script(dict(raw)).unwrap()


async def _run(agent: GuardedAgent, plan: ClientPlan) -> Recording:
    agent_side, client_side = socket.socketpair()
    agent_out_reader, agent_writer = await asyncio.open_connection(sock=agent_side)
    reader, writer = await asyncio.open_connection(sock=client_side)
    server = asyncio.create_task(acp.run_agent(as_acp_agent(agent), agent_writer, agent_out_reader))
    try:
        return await record_streams(reader, writer, plan)
    finally:
        await server
        agent_writer.close()
        writer.close()


def run_in_process(
    script: AgentScript, config: GuardConfig | None = None, plan: ClientPlan | None = None
) -> tuple[Recording, list[Event], GuardedAgent]:
    """Serve ``script`` in process, drive it with ``plan`` (the script's own by default)."""
    events: list[Event] = []
    agent = GuardedAgent(script, config, log=events.append)
    recording = asyncio.run(_run(agent, plan or ClientPlan.from_script(script)))
    return recording, events, agent


def messages(recording: Recording) -> list[tuple[str, dict[str, object]]]:
    """Return each frame's direction and decoded message."""
    return [(frame.direction, json.loads(frame.data)) for frame in recording.frames]


def updates(recording: Recording) -> list[dict[str, object]]:
    """Return the ``update`` of every ``session/update`` the agent sent, in order."""
    found: list[dict[str, object]] = []
    for direction, message in messages(recording):
        if direction == "a2c" and message.get("method") == "session/update":
            params = message["params"]
            assert isinstance(params, dict)
            found.append(params["update"])
    return found
