"""Scripted pydantic-ai models for the capability tests: what the model saw, and what it does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from repeat_guard import Reminder, reminder_from_json
from repeat_guard_pydantic_ai import METADATA_KEY

GENTLE_MARK = "You are repeating the exact same tool call"
DETAILED_MARK = "times in a row with identical arguments"


def seen_texts(message: ModelMessage) -> list[str]:
    """The texts of a request as the model received it (a guard part arrives as user text)."""
    if not isinstance(message, ModelRequest):
        return []
    return [
        part.content
        for part in message.parts
        if isinstance(part, UserPromptPart | SystemPromptPart) and isinstance(part.content, str)
    ]


@dataclass
class LoopingModel:
    """Calls ``calls`` in turn (cycling) until its latest input holds ``stop_at``, then answers.

    Its turn is the number of responses in the history it is sent, so runs sharing it keep their
    own count. ``seen`` records, per request, the texts the model received in that request;
    ``lockstep`` (a barrier) makes every turn wait for as many runs as it has parties, so
    concurrent runs take their turns together.
    """

    calls: Sequence[tuple[str, str | dict[str, Any]]] = (("grep", {"pattern": "TODO"}),)
    stop_at: str | None = GENTLE_MARK
    limit: int = 30
    lockstep: asyncio.Barrier | None = None
    seen: list[list[str]] = field(default_factory=list)

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if self.lockstep is not None:
            await self.lockstep.wait()
        texts = seen_texts(messages[-1])
        self.seen.append(texts)
        turn = sum(isinstance(message, ModelResponse) for message in messages)
        if turn >= self.limit or (
            self.stop_at is not None and any(self.stop_at in t for t in texts)
        ):
            return ModelResponse(parts=[TextPart(f"stopped after {turn} calls")])
        tool, arguments = self.calls[turn % len(self.calls)]
        return ModelResponse(parts=[ToolCallPart(tool, arguments)])

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        """The same turns, streamed: the text, or the tool call as one delta."""
        response = await self(messages, info)
        for part in response.parts:
            if isinstance(part, TextPart):
                yield part.content
            else:
                assert isinstance(part, ToolCallPart)
                yield {0: DeltaToolCall(part.tool_name, part.args_as_json_str())}

    def model(self) -> FunctionModel:
        return FunctionModel(self, stream_function=self.stream)


def agent_with(
    script: LoopingModel,
    capabilities: Sequence[AbstractCapability[Any]] = (),
    calls: list[str | None] | None = None,
) -> Agent[None, str]:
    """An agent on ``script`` with the tools ``grep`` and ``read`` and the given capabilities.

    Each tool call appends its run's id to ``calls`` when given.
    """
    agent = Agent(script.model(), capabilities=list(capabilities))
    log = [] if calls is None else calls

    @agent.tool
    def grep(ctx: RunContext[None], pattern: str, path: str = ".") -> str:
        log.append(ctx.run_id)
        return f"no match for {pattern}"

    @agent.tool
    def read(ctx: RunContext[None], path: str) -> str:
        log.append(ctx.run_id)
        return f"{path} is empty"

    return agent


def guard_parts(messages: Sequence[ModelMessage]) -> list[tuple[int, SystemPromptPart]]:
    """Every guard part in ``messages`` with the number of tool returns that precede it."""
    found: list[tuple[int, SystemPromptPart]] = []
    returns = 0
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                returns += 1
            elif isinstance(part, SystemPromptPart) and METADATA_KEY in (part.metadata or {}):
                found.append((returns, part))
    return found


def carried(part: SystemPromptPart) -> Reminder:
    """The reminder a guard part carries, decoded with the core's codec."""
    assert part.metadata is not None
    return reminder_from_json(part.metadata[METADATA_KEY]).unwrap()


def summaries(messages: Sequence[ModelMessage]) -> list[tuple[int, str, str]]:
    """``(returns before it, summary, escalation)`` for every guard part in ``messages``."""
    return [
        (returns, carried(part).summary, carried(part).form)
        for returns, part in guard_parts(messages)
        if part.metadata is not None
    ]


def run(agent: Agent[None, str], prompt: str, **options: Any) -> AgentRunResult[str]:
    """Run ``agent`` on a fresh event loop (``run_sync`` leaves its loop open)."""
    return asyncio.run(agent.run(prompt, **options))
