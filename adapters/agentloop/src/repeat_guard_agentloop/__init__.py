"""repeat-guard-agentloop: a small asyncio agent loop, the reference harness for the guard.

Agents ask a model for turns, run the tool calls it asks for through pre-execute listeners, the
tool registry and a pluggy ``tool_post_execute`` hook, and record everything in a shared,
append-only session log that serialises to JSONL::

    import asyncio
    from repeat_guard_agentloop import AgentLoop, ScriptedModel, ToolCallRequest, ToolRegistry

    async def main() -> None:
        tools = ToolRegistry()

        async def echo(arguments: object) -> str:
            return str(arguments)

        tools.register("echo", echo)
        loop = AgentLoop(tools)
        agent = loop.spawn("main", ScriptedModel([(ToolCallRequest("echo", {"x": 1}),), "done"]))
        answer = await loop.followup(agent, "go")
        assert answer.text == "done"

    asyncio.run(main())
"""

from . import hookspecs
from ._events import (
    AssistantMessage,
    ContextMessage,
    Event,
    Outcome,
    SessionLog,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ._loop import (
    Agent,
    AgentDisposedError,
    AgentLoop,
    CallOutcome,
    EventSink,
    PreExecuteListener,
)
from ._model import ModelAdapter, ModelTurn, ScriptedModel, ScriptExhaustedError, ToolCallRequest
from ._tools import ToolHandler, ToolRegistry, ToolSpec

__all__ = [
    "Agent",
    "AgentDisposedError",
    "AgentLoop",
    "AssistantMessage",
    "CallOutcome",
    "ContextMessage",
    "Event",
    "EventSink",
    "ModelAdapter",
    "ModelTurn",
    "Outcome",
    "PreExecuteListener",
    "ScriptExhaustedError",
    "ScriptedModel",
    "SessionLog",
    "ToolCall",
    "ToolCallRequest",
    "ToolHandler",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "UserMessage",
    "hookspecs",
]
