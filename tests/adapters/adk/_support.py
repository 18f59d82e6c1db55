"""A scripted ADK model (a ``BaseLlm`` of its own, as ADK's own tests write one), and runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.adk.sessions import Session
from google.genai import types
from pydantic import PrivateAttr

GENTLE_MARK = "You are repeating the exact same tool call"
DETAILED_MARK = "times in a row with identical arguments"


def texts(content: types.Content) -> list[str]:
    return [part.text for part in content.parts or () if part.text]


def reminders(contents: Sequence[types.Content]) -> list[str]:
    """The reminder texts in a request's contents, in order."""
    return [t for c in contents for t in texts(c) if t.startswith("<system-reminder>")]


def calls_made(contents: Sequence[types.Content]) -> int:
    return sum(1 for c in contents for p in c.parts or () if p.function_call)


class LoopingModel(BaseLlm):
    """Calls ``calls`` in turn (cycling) until the latest content holds ``stop_at``, then
    answers. Its turn is the number of its own function calls in the request, so runs sharing
    it keep their own count; ``seen`` records every request's contents; ``lockstep`` (a
    barrier) makes every turn wait for as many runs as it has parties."""

    model: str = "looping"
    calls: Sequence[tuple[str, dict[str, Any]]] = (("grep", {"pattern": "TODO"}),)
    stop_at: str | None = GENTLE_MARK
    limit: int = 30
    _seen: list[list[types.Content]] = PrivateAttr(default_factory=list)
    _lockstep: asyncio.Barrier | None = PrivateAttr(default=None)

    @property
    def seen(self) -> list[list[types.Content]]:
        return self._seen

    def lockstep(self, parties: int) -> None:
        self._lockstep = asyncio.Barrier(parties)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        if self._lockstep is not None:
            await self._lockstep.wait()
        contents = list(llm_request.contents)
        self._seen.append(contents)
        turn = calls_made(contents)
        fresh = " ".join(texts(contents[-1])) if contents else ""
        if turn >= self.limit or (self.stop_at is not None and self.stop_at in fresh):
            text = types.Part(text=f"stopped after {turn} calls")
            yield LlmResponse(content=types.Content(role="model", parts=[text]))
            return
        tool, arguments = self.calls[turn % len(self.calls)]
        call = types.Part(function_call=types.FunctionCall(name=tool, args=arguments))
        yield LlmResponse(content=types.Content(role="model", parts=[call]))


def looping_agent(
    model: LoopingModel, ran: list[str], name: str = "main", **options: Any
) -> LlmAgent:
    def grep(pattern: str) -> str:
        """Search the tree for a pattern."""
        ran.append("grep")
        return f"no match for {pattern}"

    def read(path: str) -> str:
        """Read a file."""
        ran.append("read")
        return f"{path} is empty"

    options.setdefault("tools", [grep, read])
    return LlmAgent(name=name, model=model, **options)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run_once(
    runner: InMemoryRunner, session_id: str, message: types.Content | None
) -> list[Any]:
    events = []
    async for event in runner.run_async(user_id="u", session_id=session_id, new_message=message):
        events.append(event)
    return events


def runner_for(agent: LlmAgent, plugins: Sequence[BasePlugin]) -> InMemoryRunner:
    """A runner of an app holding ``agent`` with ``plugins``."""
    return InMemoryRunner(app=App(name="demo", root_agent=agent, plugins=list(plugins)))


def run(agent: LlmAgent, plugins: Sequence[BasePlugin], *prompts: str) -> Session:
    """Run ``agent`` on each prompt in turn in one new session; return the session as stored."""
    runner = runner_for(agent, plugins)

    async def go() -> Session:
        session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
        for prompt in prompts:
            await run_once(runner, session.id, user(prompt))
        return await stored(runner, session.id)

    return asyncio.run(go())


async def stored(runner: InMemoryRunner, session_id: str) -> Session:
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id=session_id
    )
    assert session is not None
    return session


def final_text(session: Session) -> str:
    last = session.events[-1]
    assert last.content is not None
    return " ".join(texts(last.content))
