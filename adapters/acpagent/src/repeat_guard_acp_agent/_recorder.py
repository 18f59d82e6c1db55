"""The recorder: drive an ACP agent with the SDK's client side and keep every frame.

The client talks to one end of a socket pair; two pumps copy bytes between the other end and
the agent's stdio, and cut them into lines as they pass. So a recorded frame is exactly the
bytes that crossed the wire, in the order the client's side saw them, and a recorder line is
``{"dir": "c2a" | "a2c", "msg": <those bytes>}``. No timestamps: a scripted agent's recording
is the same on every run.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    PermissionOption,
    RequestPermissionResponse,
)

from ._script import AgentScript, PermissionAnswer
from ._version import VERSION

__all__ = ["ClientPlan", "Frame", "Recording", "agent_command", "record_agent", "record_streams"]

Direction = Literal["c2a", "a2c"]
_CLIENT_NAME = "repeat-guard-recorder"
_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class ClientPlan:
    """What the client does: a working directory, each session's prompts, and the answers it
    gives to permission requests in order (``allow_once`` once they run out)."""

    cwd: str
    sessions: tuple[tuple[str, ...], ...]
    permissions: tuple[PermissionAnswer, ...] = ()

    @classmethod
    def from_script(cls, script: AgentScript) -> ClientPlan:
        """Return the client's side of ``script``."""
        sessions = tuple(session.prompts for session in script.sessions)
        return cls(script.cwd, sessions, script.permissions)


@dataclass(frozen=True, slots=True)
class Frame:
    """One line that crossed the wire, without its newline."""

    direction: Direction
    data: bytes

    def record(self) -> bytes:
        """Return the recorder line for this frame (no newline)."""
        return b'{"dir": "' + self.direction.encode() + b'", "msg": ' + self.data + b"}"


@dataclass(frozen=True, slots=True)
class Recording:
    """Every frame of a run in order, and the session ids the agent gave."""

    frames: tuple[Frame, ...]
    session_ids: tuple[str, ...]

    def lines(self) -> list[bytes]:
        """Return the recorder lines, each ending in a newline."""
        return [frame.record() + b"\n" for frame in self.frames]


class _Splitter:
    """Cuts one direction's bytes into frames as they pass."""

    def __init__(self, direction: Direction, frames: list[Frame]) -> None:
        self._direction = direction
        self._frames = frames
        self._pending = b""

    def feed(self, data: bytes) -> None:
        *lines, self._pending = (self._pending + data).split(b"\n")
        for line in lines:
            self._add(line)

    def close(self) -> None:
        self._add(self._pending)
        self._pending = b""

    def _add(self, line: bytes) -> None:
        line = line.rstrip(b"\r")
        if line.strip():
            self._frames.append(Frame(self._direction, line))


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter, tap: _Splitter) -> None:
    try:
        while data := await source.read(_CHUNK):
            tap.feed(data)
            sink.write(data)
            await sink.drain()
    finally:
        tap.close()
        with contextlib.suppress(OSError, RuntimeError):  # the other side is already gone
            sink.write_eof()


class _Client:
    """The SDK client: answers permission requests from the plan, ignores updates."""

    def __init__(self, answers: Sequence[PermissionAnswer]) -> None:
        self._answers = list(answers)

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: Any, **_: Any
    ) -> RequestPermissionResponse:
        answer: PermissionAnswer = self._answers.pop(0) if self._answers else "allow_once"
        chosen = next((option for option in options if option.kind == answer), None)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        return None


async def record_streams(
    agent_out: asyncio.StreamReader, agent_in: asyncio.StreamWriter, plan: ClientPlan
) -> Recording:
    """Run ``plan`` against the agent whose output is ``agent_out`` and input ``agent_in``.

    Sends ``initialize``, then for each session ``session/new`` and its prompts one after
    another, answering permission requests; closes the agent's input at the end. Returns the
    recording. Raises ``acp.RequestError`` when the agent answers a request with an error.
    """
    frames: list[Frame] = []
    near, far = socket.socketpair()
    client_out, client_in = await asyncio.open_connection(sock=near)
    relay_out, relay_in = await asyncio.open_connection(sock=far)
    pumps = (
        asyncio.create_task(_pump(relay_out, agent_in, _Splitter("c2a", frames))),
        asyncio.create_task(_pump(agent_out, relay_in, _Splitter("a2c", frames))),
    )
    client = cast(acp.Client, _Client(plan.permissions))
    conn = acp.connect_to_agent(client, client_in, client_out)
    try:
        session_ids = await _run_plan(conn, plan)
    finally:
        await conn.close()
        client_in.close()
        await pumps[0]
        pumps[1].cancel()
        await asyncio.gather(pumps[1], return_exceptions=True)
        relay_in.close()
    return Recording(tuple(frames), session_ids)


async def _run_plan(conn: acp.ClientSideConnection, plan: ClientPlan) -> tuple[str, ...]:
    await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(),
        client_info=Implementation(name=_CLIENT_NAME, version=VERSION),
    )
    session_ids: list[str] = []
    for prompts in plan.sessions:
        session = await conn.new_session(cwd=plan.cwd, mcp_servers=[])
        session_ids.append(session.session_id)
        for text in prompts:
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(text)])
    return tuple(session_ids)


def agent_command(script: str, config: str | None = None, log: str | None = None) -> list[str]:
    """Return the command line that serves the agent for ``script`` with this interpreter,
    with the guard ``config`` file and the session ``log`` file when given."""
    command = [sys.executable, "-m", "repeat_guard_acp_agent", "--script", script]
    options = (("--config", config), ("--log", log))
    return command + [
        part for flag, value in options if value is not None for part in (flag, value)
    ]


async def record_agent(
    command: Sequence[str], plan: ClientPlan, *, env: Mapping[str, str] | None = None
) -> Recording:
    """Spawn the ACP agent ``command`` (its stderr passed through) and record ``plan`` with it.

    ``env`` is added to the SDK's trimmed default environment. Returns the recording; raises
    what ``record_streams`` raises.
    """
    transport = acp.spawn_stdio_transport(
        command[0], *command[1:], env=env, stderr=None, limit=1 << 26
    )
    async with transport as (agent_out, agent_in, _process):
        return await record_streams(agent_out, agent_in, plan)
