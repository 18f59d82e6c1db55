"""A scripted model for the Agents SDK tests (the SDK's own ``ScriptedModel``), and what it saw."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, FunctionTool, RunContextWrapper, function_tool
from agents.items import TResponseOutputItem
from agents.run_config import CallModelData, CallModelInputFilter, ModelInputData
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

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

    async def respond(self, call: ModelCall) -> list[TResponseOutputItem]:
        if self.lockstep is not None:
            await self.lockstep.wait()
        items = list(call.input) if isinstance(call.input, list) else []
        self.seen.append(items)
        turn = sum(_kind(item) == "function_call" for item in items)
        fresh = " ".join(reminder_texts(latest_turn(items)))
        if turn >= self.limit or (self.stop_at is not None and self.stop_at in fresh):
            return [assistant_message(f"stopped after {turn} calls")]
        tool, arguments = self.calls[turn % len(self.calls)]
        return [function_call(tool, arguments, call_id=f"call-{turn + 1}")]

    def model(self, turns: int = 40) -> ScriptedModel:
        return ScriptedModel([ModelStep.respond(self.respond)] * turns)


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
