"""A scripted model for the Agents SDK tests (a ``Model`` of its own, as the SDK's own tests
write one), and what it saw."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, FunctionTool, ModelResponse, RunContextWrapper, Usage, function_tool
from agents.items import TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from agents.models.interface import Model
from agents.run_config import CallModelData, CallModelInputFilter, ModelInputData
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
)

Responder = Callable[[list[TResponseInputItem]], Awaitable[list[TResponseOutputItem]]]


def function_call(name: str, arguments: Mapping[str, Any], *, call_id: str) -> TResponseOutputItem:
    """One function-tool call, as a model's output item."""
    text = json.dumps(arguments, separators=(",", ":"))
    return ResponseFunctionToolCall(
        id=call_id, call_id=call_id, type="function_call", name=name, arguments=text
    )


def assistant_message(text: str) -> TResponseOutputItem:
    """One assistant text message, as a model's output item."""
    content: list[ResponseOutputText | ResponseOutputRefusal] = [
        ResponseOutputText(text=text, type="output_text", annotations=[])
    ]
    return ResponseOutputMessage(
        id="message", type="message", role="assistant", status="completed", content=content
    )


class ScriptedModel(Model):
    """A model whose every response is ``respond(input)``; ``inputs`` are what it was sent."""

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.inputs: list[list[TResponseInputItem]] = []

    async def _output(self, input: str | list[TResponseInputItem]) -> list[TResponseOutputItem]:
        items: list[TResponseInputItem] = (
            [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        )
        self.inputs.append(items)
        return await self.respond(items)

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        return ModelResponse(output=await self._output(input), usage=Usage(), response_id=None)

    async def stream_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> AsyncIterator[TResponseStreamEvent]:
        output = await self._output(input)
        response = Response(
            id="response",
            created_at=0,
            model="scripted",
            object="response",
            output=output,
            parallel_tool_calls=False,
            tool_choice="auto",
            tools=[],
        )
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=0
        )


GENTLE_MARK = "You are repeating the exact same tool call"
DETAILED_MARK = "times in a row with identical arguments"


def latest_turn(items: Sequence[Any]) -> list[Any]:
    """The input items after the model's latest turn (a function call or an answer): what is
    new to it."""
    last = max(
        (
            n
            for n, item in enumerate(items)
            if _kind(item) == "function_call"
            or (isinstance(item, Mapping) and item.get("role") == "assistant")
        ),
        default=-1,
    )
    return list(items[last + 1 :])


def reminder_texts(items: Sequence[Any]) -> list[str]:
    """The texts of the user messages in ``items`` that are reminders."""
    return [
        item["content"]
        for item in items
        if isinstance(item, Mapping)
        and item.get("role") == "user"
        and str(item.get("content", "")).startswith("<system-reminder>")
    ]


def _kind(item: Any) -> object:
    return item.get("type") if isinstance(item, Mapping) else None


@dataclass
class LoopingModel:
    """Calls ``calls`` in turn (cycling) until its latest input holds ``stop_at``, then answers.

    Its turn is the number of function calls in the input it is sent, so runs sharing it keep
    their own count. ``seen`` records every input it was sent; ``lockstep`` (a barrier) makes
    every turn wait for as many runs as it has parties.
    """

    calls: Sequence[tuple[str, dict[str, Any]]] = (("grep", {"pattern": "TODO"}),)
    stop_at: str | None = GENTLE_MARK
    limit: int = 30
    lockstep: asyncio.Barrier | None = None
    seen: list[list[Any]] = field(default_factory=list)

    async def respond(self, items: list[TResponseInputItem]) -> list[TResponseOutputItem]:
        if self.lockstep is not None:
            await self.lockstep.wait()
        self.seen.append(items)
        turn = sum(_kind(item) == "function_call" for item in items)
        fresh = " ".join(reminder_texts(latest_turn(items)))
        if turn >= self.limit or (self.stop_at is not None and self.stop_at in fresh):
            return [assistant_message(f"stopped after {turn} calls")]
        tool, arguments = self.calls[turn % len(self.calls)]
        return [function_call(tool, arguments, call_id=f"call-{turn + 1}")]

    def model(self) -> ScriptedModel:
        return ScriptedModel(self.respond)


def tools(calls: list[str], guardrails: Sequence[Any] = ()) -> list[FunctionTool]:
    """``grep`` and ``read``, each appending its name to ``calls`` when it runs."""

    @function_tool(tool_input_guardrails=list(guardrails))
    def grep(ctx: RunContextWrapper[Any], pattern: str) -> str:
        """Search the tree for a pattern."""
        calls.append("grep")
        return f"no match for {pattern}"

    @function_tool(tool_input_guardrails=list(guardrails))
    def read(ctx: RunContextWrapper[Any], path: str) -> str:
        """Read a file."""
        calls.append("read")
        return f"{path} is empty"

    return [grep, read]


def agent_with(
    script: LoopingModel, calls: list[str], guardrails: Sequence[Any] = (), name: str = "main"
) -> Agent[Any]:
    return Agent(name=name, model=script.model(), tools=list(tools(calls, guardrails)))


async def filtered(filter_: CallModelInputFilter, data: CallModelData[Any]) -> ModelInputData:
    """What a model input filter returns for ``data``, awaited when it is async."""
    result = filter_(data)
    return result if isinstance(result, ModelInputData) else await result
