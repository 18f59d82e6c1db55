"""A scripted Strands model (a ``Model`` of its own, streaming the events a provider would)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any

from strands import Agent, tool
from strands.hooks import HookProvider
from strands.models.model import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent

GENTLE_MARK = "You are repeating the exact same tool call"
DETAILED_MARK = "times in a row with identical arguments"


def texts(message: Any) -> list[str]:
    return [block["text"] for block in message.get("content", []) if "text" in block]


def reminders(messages: Messages) -> list[str]:
    """The reminder texts in the messages a model was sent, in order."""
    return [t for m in messages for t in texts(m) if t.startswith("<system-reminder>")]


def results(messages: Messages) -> list[dict[str, Any]]:
    return [dict(b["toolResult"]) for m in messages for b in m["content"] if "toolResult" in b]


@dataclass
class LoopingModel(Model):
    """Calls ``calls`` in turn (cycling) until its latest message holds ``stop_at``, then
    answers. Its turn is the number of tool uses in the conversation it is sent; ``seen``
    records every conversation; ``lockstep`` (a barrier) makes every turn wait for as many
    agents as it has parties."""

    calls: Sequence[tuple[str, dict[str, Any]]] = (("grep", {"pattern": "TODO"}),)
    stop_at: str | None = GENTLE_MARK
    limit: int = 30
    lockstep: asyncio.Barrier | None = None
    seen: list[Messages] = field(default_factory=list)

    def update_config(self, **model_config: Any) -> None:
        """Nothing to configure."""

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(
        self, messages: Messages, *args: Any, **kwargs: Any
    ) -> AsyncGenerator[StreamEvent, None]:
        if self.lockstep is not None:
            await self.lockstep.wait()
        self.seen.append(messages)
        turn = sum(1 for m in messages for b in m["content"] if "toolUse" in b)
        fresh = " ".join(texts(messages[-1])) if messages else ""
        yield {"messageStart": {"role": "assistant"}}
        if turn >= self.limit or (self.stop_at is not None and self.stop_at in fresh):
            yield {"contentBlockDelta": {"delta": {"text": f"stopped after {turn} calls"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        name, arguments = self.calls[turn % len(self.calls)]
        use = {"toolUseId": f"call-{turn + 1}", "name": name}
        yield {"contentBlockStart": {"start": {"toolUse": use}}}  # type: ignore[typeddict-item]  # toolUseId and name are what a start holds
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def looping_agent(
    model: LoopingModel, ran: list[str], hooks: Sequence[HookProvider] = (), **options: Any
) -> Agent:
    @tool
    def grep(pattern: str) -> str:
        """Search the tree for a pattern."""
        ran.append("grep")
        return f"no match for {pattern}"

    @tool
    def read(path: str) -> str:
        """Read a file."""
        ran.append("read")
        return f"{path} is empty"

    options.setdefault("tools", [grep, read])
    return Agent(model=model, hooks=list(hooks), callback_handler=None, **options)
