"""The ACP agent: each session is an agent of one guarded ``AgentLoop``, streamed to the client.

Theory of operation. ``session/new`` spawns a loop agent whose scripted model plays the next
session of the script; ``session/prompt`` runs ``followup`` and turns every session-log event
into ACP frames as it is appended, so the wire order is the log order:

* ``ToolCall`` -> a ``tool_call`` (status ``pending``, title, kind, ``rawInput`` = arguments),
  its id ``<tool>-<n>`` naming the tool, ``_meta.agentloop`` holding the tool and model call id;
* before the tool runs: ``session/request_permission`` for tools that need it (a reject or a
  cancelled answer denies the call), then a ``tool_call_update`` with status ``in_progress``;
* ``ToolResult`` -> a ``tool_call_update``, ``completed`` or ``failed`` (errors and denials);
* the guard's ``ContextMessage`` (after the step's results) carries the core's ``Reminder``;
  it goes out as exactly the notification ``repeat_guard_transcripts.reminder_notification``
  builds (the form ``--annotate`` writes), keyed to the agent ``session:<id>`` as a replay
  names it; other plugins' contexts stay in the log only;
* ``AssistantMessage`` -> an ``agent_message_chunk``; the prompt then ends with ``end_turn``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast

import acp
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    SessionNotification,
    TextContentBlock,
    ToolCallUpdate,
)

from repeat_guard import GuardConfig, Reminder, canonical_arguments, preview_arguments
from repeat_guard_agentloop import (
    Agent,
    AgentLoop,
    AssistantMessage,
    ContextMessage,
    Event,
    ScriptedModel,
    ToolCall,
    ToolRegistry,
    ToolResult,
)
from repeat_guard_pluggy import RepeatGuardPlugin, ToolExecution
from repeat_guard_transcripts import reminder_notification

from ._script import AgentScript, ToolScript
from ._version import VERSION

__all__ = ["AGENT_NAME", "GuardedAgent", "as_acp_agent", "session_reminder"]

AGENT_NAME = "repeat-guard-acp-agent"
_TITLE_CHARS = 120
_OPTIONS = (
    PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
)
_REJECTING = frozenset({"reject_once", "reject_always"})
_KIND_OF = {option.option_id: option.kind for option in _OPTIONS}


@dataclass(frozen=True, slots=True)
class _Call:
    acp_id: str
    tool: str
    arguments: object


class _Session:
    """One ACP session: its loop agent, its calls by model call id, its running turn."""

    __slots__ = ("agent", "calls", "id", "task")

    def __init__(self, session_id: str, agent: Agent) -> None:
        self.id = session_id
        self.agent = agent
        self.calls: dict[str, _Call] = {}
        self.task: asyncio.Task[AssistantMessage] | None = None


class GuardedAgent:
    """An ACP agent (serve it with ``acp.run_agent``) running the guarded agent loop.

    ``script`` gives the tools and each session's model turns; ``config`` is the guard's.
    ``log``, when given, receives every session-log event as it is appended.
    """

    def __init__(
        self,
        script: AgentScript,
        config: GuardConfig | None = None,
        *,
        log: Callable[[Event], None] | None = None,
    ) -> None:
        self._script = script
        self._log = log
        tools = ToolRegistry()
        for tool in script.tools:
            tools.register(tool.name, _handler(tool))
        self.loop = AgentLoop(
            tools,
            guard=GuardConfig() if config is None else config,
            pre_execute=[self._before_call],
            on_event=self._send,
        )
        assert self.loop.guard is not None  # installed just above
        self.guard: RepeatGuardPlugin = self.loop.guard
        self._client: acp.Client | None = None
        self._sessions: dict[str, _Session] = {}
        self._by_agent: dict[str, _Session] = {}

    def on_connect(self, conn: acp.Client) -> None:
        """Keep the connection to the client (the SDK calls this once)."""
        self._client = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        """Answer ``initialize`` with the protocol version and this agent's name."""
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name=AGENT_NAME, version=VERSION),
        )

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        """Start the script's next session. Raises ``RequestError`` when none is left."""
        serial = len(self._sessions)
        if serial >= len(self._script.sessions):
            raise acp.RequestError.invalid_request(
                {"details": f"the script has {len(self._script.sessions)} session(s)"}
            )
        model = ScriptedModel(self._script.sessions[serial].turns)
        session = _Session(f"session-{serial + 1}", self.loop.spawn("session", model))
        self._sessions[session.id] = session
        self._by_agent[session.agent.id] = session
        return NewSessionResponse(session_id=session.id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        """Run one turn of the session's agent, streaming it; return why it stopped.

        Raises ``RequestError`` for an unknown session or a turn that failed.
        """
        session = self._session(session_id)
        text = "".join(block.text for block in prompt if isinstance(block, TextContentBlock))
        task = self.loop.followup(session.agent, text)
        session.task = task
        await asyncio.wait({task})
        session.task = None
        if task.cancelled():
            return PromptResponse(stop_reason="cancelled")
        error = task.exception()
        if error is not None:
            details = f"{type(error).__name__}: {error}"
            raise acp.RequestError.internal_error({"details": details})
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        """Cancel the session's running turn, if any."""
        session = self._sessions.get(session_id)
        if session is not None and session.task is not None:
            session.task.cancel()

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise acp.RequestError.invalid_params({"sessionId": session_id})
        return session

    def _connection(self) -> acp.Client:
        if self._client is None:
            raise RuntimeError("the agent is not connected to a client")
        return self._client

    def _kind(self, tool: str) -> Any:
        spec = self._script.tool(tool)
        return "other" if spec is None else spec.kind

    async def _before_call(self, execution: ToolExecution) -> str | None:
        """Ask the client when the tool needs it; on yes, report the call as running."""
        assert isinstance(execution.agent, Agent)  # only the loop's agents reach this listener
        session = self._by_agent[execution.agent.id]
        call = session.calls[execution.call_id]
        client = self._connection()
        spec = self._script.tool(call.tool)
        if spec is not None and spec.permission:
            answer = await client.request_permission(
                session_id=session.id,
                tool_call=ToolCallUpdate(tool_call_id=call.acp_id, title=_title(call)),
                options=list(_OPTIONS),
            )
            reason = _refusal(answer.outcome)
            if reason is not None:
                return reason
        update = acp.update_tool_call(call.acp_id, status="in_progress")
        await client.session_update(session_id=session.id, update=update)
        return None

    async def _send(self, event: Event) -> None:
        if self._log is not None:
            self._log(event)
        session = self._by_agent[event.agent]
        client = self._connection()
        update: Any
        match event:
            case ToolCall():
                call = _Call(f"{event.tool}-{len(session.calls) + 1}", event.tool, event.arguments)
                session.calls[event.call_id] = call
                update = acp.start_tool_call(
                    call.acp_id,
                    _title(call),
                    kind=self._kind(call.tool),
                    status="pending",
                    raw_input=call.arguments,
                )
                update.field_meta = {"agentloop": {"toolName": call.tool, "callId": event.call_id}}
            case ToolResult():
                call = session.calls[event.call_id]
                update = acp.update_tool_call(
                    call.acp_id,
                    status="failed" if event.is_error else "completed",
                    content=[acp.tool_content(acp.text_block(event.content))],
                )
            case ContextMessage(reminder=Reminder() as reminder):
                notification = reminder_notification(
                    session.id, session_reminder(reminder, session.id)
                )
                await _send_notification(client, notification)
                return
            case AssistantMessage():
                update = acp.update_agent_message_text(event.text)
            case _:  # the user's own prompt (the client sent it), other plugins' contexts
                return
        await client.session_update(session_id=session.id, update=update)


def session_reminder(reminder: Reminder, session_id: str) -> Reminder:
    """Return ``reminder`` keyed to the agent ``session:<session_id>``, as a replay names it."""
    return replace(reminder, agent=f"session:{session_id}")


async def _send_notification(client: acp.Client, notification: dict[str, Any]) -> None:
    # Validated through the SDK's schema and sent through its typed call: the frame on the wire
    # is the notification itself (a test compares the two).
    params = SessionNotification.model_validate(notification["params"])
    await client.session_update(
        session_id=params.session_id, update=params.update, **(params.field_meta or {})
    )


def _refusal(outcome: object) -> str | None:
    if not isinstance(outcome, AllowedOutcome):
        return "the permission request was cancelled"
    kind = _KIND_OF.get(outcome.option_id)
    if kind is None:
        return f"the client chose an unknown option {outcome.option_id!r}"
    return "the client rejected the call" if kind in _REJECTING else None


def _title(call: _Call) -> str:
    return f"{call.tool} {preview_arguments(canonical_arguments(call.arguments), _TITLE_CHARS)}"


def _handler(tool: ToolScript) -> Callable[[object], Any]:
    played = 0

    async def run(arguments: object) -> object:
        nonlocal played
        if tool.error is not None:
            raise RuntimeError(tool.error)
        result = tool.results[min(played, len(tool.results) - 1)]
        played += 1
        return result

    return run


def as_acp_agent(agent: GuardedAgent) -> acp.Agent:
    """Return ``agent`` typed as the SDK's ``Agent``.

    The SDK routes only the methods an object has and answers the rest with method-not-found,
    so the agent implements just the ones it serves.
    """
    return cast(acp.Agent, agent)
