"""CrewAI's own hook contexts, as its executors build them, and a scripted model for crews."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any, cast

from crewai import Agent, Crew, Task
from crewai.hooks.llm_hooks import LLMCallHookContext
from crewai.hooks.tool_hooks import ToolCallHookContext
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool
from crewai.tools.structured_tool import CrewStructuredTool
from pydantic import PrivateAttr

GENTLE_MARK = "You are repeating the exact same tool call"
DETAILED_MARK = "times in a row with identical arguments"


class Run:
    """One agent's execution of one task, as the hooks see it: the same agent and task objects
    and one message list."""

    def __init__(self) -> None:
        self.agent = object()
        self.task = object()
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": "Do the task."}]
        self.iterations = 0

    def tool_call(
        self, name: str, arguments: dict[str, Any], result: str | None = None
    ) -> ToolCallHookContext:
        return ToolCallHookContext(
            tool_name=name,
            tool_input=arguments,
            tool=cast(CrewStructuredTool, None),  # the guard never reads the tool
            agent=cast(Any, self.agent),
            task=cast(Any, self.task),
            tool_result=result,
        )

    def model_call(self) -> LLMCallHookContext:
        context = LLMCallHookContext(
            messages=cast(Any, self.messages), agent=self.agent, task=self.task, llm="scripted"
        )
        context.iterations = self.iterations  # an executor's context carries its count
        self.iterations += 1
        return context


def reminders(messages: Sequence[Any]) -> list[str]:
    return [
        str(m["content"])
        for m in messages
        if m.get("role") == "user" and str(m.get("content")).startswith("<system-reminder>")
    ]


class LoopingLLM(BaseLLM):
    """Calls ``calls`` in turn (cycling) until its latest message holds ``stop_at``, then
    answers; ``seen`` records every message list it was sent (copied)."""

    calls: Sequence[tuple[str, dict[str, Any]]] = (("grep", {"pattern": "TODO"}),)
    stop_at: str | None = GENTLE_MARK
    limit: int = 30
    _seen: list[list[dict[str, Any]]] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def seen(self) -> list[list[dict[str, Any]]]:
        return self._seen

    def supports_function_calling(self) -> bool:
        return True

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self._seen.append([dict(m) for m in messages])
        turn = sum(1 for m in messages if m.get("role") == "tool")
        latest = str(messages[-1].get("content"))
        if turn >= self.limit or (self.stop_at is not None and self.stop_at in latest):
            return f"stopped after {turn} calls"
        name, arguments = self.calls[turn % len(self.calls)]
        call = {"name": name, "arguments": json.dumps(arguments)}
        return [{"id": f"call-{turn + 1}", "type": "function", "function": call}]


def crew_with(llm: LoopingLLM, ran: list[str], role: str = "searcher") -> Crew:
    @tool("grep")
    def grep(pattern: str) -> str:
        """Search the tree for a pattern."""
        ran.append("grep")
        return f"no match for {pattern}"

    @tool("read")
    def read(path: str) -> str:
        """Read a file."""
        ran.append("read")
        return f"{path} is empty"

    agent = Agent(role=role, goal="Find things.", backstory="Careful.", llm=llm, tools=[grep, read])
    task = Task(description="Find the TODOs.", expected_output="An answer.", agent=agent)
    return Crew(agents=[agent], tasks=[task])
