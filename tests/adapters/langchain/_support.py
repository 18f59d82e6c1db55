"""A scripted LangChain chat model for the middleware tests: what it saw, and what it does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware.types import AgentMiddleware
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    ToolCall,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field

from repeat_guard import Reminder, reminder_from_json
from repeat_guard_langchain import PLUGIN_NAME

GENTLE_MARK = "You are repeating the exact same tool call"
DETAILED_MARK = "times in a row with identical arguments"

Call = tuple[str, dict[str, Any] | str]


class LoopingChatModel(BaseChatModel):
    """Calls ``calls`` in turn (cycling) until its latest input holds ``stop_at``, then answers.

    Its latest input is what follows its own last turn; its turn is the number of its turns in
    the history it is sent, so threads sharing it keep their own count. ``seen`` records, per
    request, the texts of the latest input, and ``turns`` the turn each request was for.
    ``lockstep`` (a barrier) makes every asynchronous turn wait for as many threads as it has
    parties, so concurrent threads take their turns together.
    """

    calls: Sequence[Call] = (("grep", {"pattern": "TODO"}),)
    stop_at: str | None = GENTLE_MARK
    limit: int = 30
    per_step: int = 1
    seen: list[list[str]] = Field(default_factory=list)
    turns: list[int] = Field(default_factory=list)
    lockstep: asyncio.Barrier | None = None

    @property
    def _llm_type(self) -> str:
        return "looping-test-model"

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = sum(isinstance(message, AIMessage) for message in messages)
        self.turns.append(turn)
        latest = latest_input(messages)
        self.seen.append([str(message.content) for message in latest])
        if turn >= self.limit or (
            self.stop_at is not None and any(self.stop_at in text for text in self.seen[-1])
        ):
            reply = AIMessage(content=f"stopped after {turn} turns")
        else:
            step = [
                self.calls[(turn * self.per_step + i) % len(self.calls)]
                for i in range(self.per_step)
            ]
            reply = turn_of(step, turn)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.lockstep is not None:
            await self.lockstep.wait()
        return self._generate(messages, stop, **kwargs)


def turn_of(step: Sequence[Call], turn: int) -> AIMessage:
    """The model turn making ``step``'s calls; text arguments are malformed JSON (invalid calls)."""
    valid: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for i, (name, args) in enumerate(step):
        if isinstance(args, str):
            invalid.append(
                InvalidToolCall(
                    name=name,
                    args=args,
                    id=f"call-{turn}-{i}",
                    error="bad JSON",
                    type="invalid_tool_call",
                )
            )
        else:
            valid.append(ToolCall(name=name, args=args, id=f"call-{turn}-{i}", type="tool_call"))
    return AIMessage(content="", tool_calls=valid, invalid_tool_calls=invalid)


def latest_input(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages after the last ``AIMessage``."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AIMessage):
            return list(messages[index + 1 :])
    return list(messages)


@tool
def grep(pattern: str, path: str = ".") -> str:
    """Search the tree for a pattern."""
    return f"no match for {pattern}"


@tool
def read(path: str) -> str:
    """Read a file."""
    return f"{path} is empty"


def agent_with(
    model: BaseChatModel,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    *,
    tools: Sequence[BaseTool] = (grep, read),
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    **options: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """An agent on ``model`` with ``tools`` and ``middleware``."""
    return create_agent(
        model, tools=list(tools), middleware=list(middleware), checkpointer=checkpointer, **options
    )


def guard_messages(messages: Sequence[AnyMessage]) -> list[tuple[int, HumanMessage]]:
    """Every reminder in ``messages`` with the number of tool results that precede it."""
    found: list[tuple[int, HumanMessage]] = []
    results = 0
    for message in messages:
        if isinstance(message, ToolMessage):
            results += 1
        elif (
            isinstance(message, HumanMessage)
            and message.additional_kwargs.get("lc_source") == PLUGIN_NAME
        ):
            found.append((results, message))
    return found


def carried(message: BaseMessage) -> Reminder:
    """The reminder a guard message carries, decoded with the core's codec."""
    return reminder_from_json(message.additional_kwargs["repeat_guard"]).unwrap()


def summaries(messages: Sequence[AnyMessage]) -> list[tuple[int, str, str]]:
    """``(tool results before it, summary, escalation)`` for every reminder in ``messages``."""
    return [
        (
            results,
            carried(message).summary,
            carried(message).form,
        )
        for results, message in guard_messages(messages)
    ]
