"""The agent loop: agents, their turns, and the tool-call pipeline every call goes through.

Theory of operation. ``followup`` queues a user prompt for an agent; the agent's turn calls the
``agent_prompt_submit`` hook, then asks its model for a turn until the model answers with text.
A turn of tool calls is one step: the loop logs every ``ToolCall``, then runs the calls in order
through the pipeline, logging each ``ToolResult`` as its call finishes, and only after the last
result appends the context messages the post-execute decisions attached (so every result
still follows its call with nothing in between). The pipeline for one call:

1. ``pm.hook.tool_pre_execute(execution=...)`` (the guard's ``admit``), then the pre-execute
   listeners, in order; the first that gives a reason denies the call, which then gets an
   error result instead of running;
2. the tool itself (an unknown tool or a tool that raises gives an error result);
3. ``pm.hook.tool_post_execute(execution=..., result=...)``, denied calls included, whose
   decision (``None`` means ``Accept()``) says what the model sees.

Concurrency. Any number of agents run as tasks on one event loop and share one plugin manager,
so one guard plugin sees every agent's calls interleaved. The post-execute hook is called
synchronously: a plugin reads its state and writes the next one inside that one call, and
asyncio only switches tasks at an ``await``, so no other agent's call can run in between and no
update is lost. Each agent's own turns are serialised by a per-agent lock.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import pluggy

from repeat_guard import GuardConfig, canonical_arguments
from repeat_guard_pluggy import (
    Accept,
    Block,
    PostExecuteDecision,
    RepeatGuardPlugin,
    ToolExecution,
    install,
)
from repeat_guard_pluggy import ContextMessage as HookContext
from repeat_guard_pluggy import ToolResult as HookResult

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
from ._model import ModelAdapter, ModelTurn, ToolCallRequest
from ._tools import ToolRegistry

__all__ = [
    "Agent",
    "AgentDisposedError",
    "AgentLoop",
    "CallOutcome",
    "EventSink",
    "PreExecuteListener",
]

PreExecuteListener = Callable[[ToolExecution], Awaitable[str | None]]
"""Sees a call before it runs; returns a reason to deny it, or ``None`` to let it run."""

EventSink = Callable[[Event], Awaitable[None]]
"""Receives every session-log event right after it is appended, in log order per agent."""


class AgentDisposedError(RuntimeError):
    """A prompt was given to an agent that has been disposed."""


class Agent:
    """A live agent: a name, a model and a history. Created by ``AgentLoop.spawn``.

    Compared and hashed by identity, and weakly referenceable, so plugins can key state on the
    object itself.
    """

    __slots__ = ("__weakref__", "_disposed", "_history", "_lock", "_model", "_serial", "id", "name")

    def __init__(self, agent_id: str, name: str, model: ModelAdapter) -> None:
        self.id = agent_id
        self.name = name
        self._model = model
        self._history: list[Event] = []
        self._lock = asyncio.Lock()
        self._serial = 0
        self._disposed = False

    @property
    def history(self) -> tuple[Event, ...]:
        """This agent's events so far: exactly what its model is shown next."""
        return tuple(self._history)

    @property
    def disposed(self) -> bool:
        """Whether ``AgentLoop.dispose`` has run for this agent."""
        return self._disposed

    def _next_id(self) -> str:
        self._serial += 1
        return f"{self.id}/{self._serial}"

    def __repr__(self) -> str:
        return f"Agent({self.id!r})"


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One call after the whole pipeline: the tool's output and what the model is shown.

    ``content``/``is_error`` are the tool's own (or the denial); ``model_content``/
    ``model_is_error`` are what the decision shows the model; ``contexts`` are the context
    messages the decision attached, in order, each with its own source.
    """

    call_id: str
    tool: str
    arguments: object
    content: str
    is_error: bool
    denied: bool
    outcome: Outcome
    model_content: str
    model_is_error: bool
    contexts: tuple[HookContext, ...]


class AgentLoop:
    """Runs agents against one tool registry and the loop's own pluggy plugin manager.

    ``pm`` is made by the loop, named ``hookspecs.PROJECT_NAME``, holding the loop's hook
    specifications; plugins implement them with ``hookspecs.hookimpl`` and are added with
    ``loop.pm.register(plugin)``. ``guard``, when given (a ``GuardConfig``, a raw config
    mapping), installs the repeat guard's implementation; ``loop.guard`` is then that plugin
    (``None`` without one). ``pre_execute`` listeners run in order before every call.
    ``on_event`` receives every session-log event as it is appended.
    """

    def __init__(
        self,
        tools: ToolRegistry,
        *,
        guard: GuardConfig | Mapping[str, object] | None = None,
        pre_execute: Sequence[PreExecuteListener] = (),
        on_event: EventSink | None = None,
    ) -> None:
        pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        self.pm = pm
        self.guard: RepeatGuardPlugin | None = None if guard is None else install(pm, guard)
        self.tools = tools
        self.log = SessionLog()
        self._pre_execute = tuple(pre_execute)
        self._on_event = on_event
        self._agents: dict[str, Agent] = {}
        self._names: dict[str, int] = {}
        self._tasks: list[asyncio.Task[AssistantMessage]] = []
        self._direct_calls = 0

    @property
    def agents(self) -> tuple[Agent, ...]:
        """The agents not yet disposed, in spawn order."""
        return tuple(self._agents.values())

    def spawn(self, name: str, model: ModelAdapter) -> Agent:
        """Return a new agent called ``name`` that asks ``model`` for its turns.

        Its id is ``"<name>#<n>"``, ``n`` counting the agents this loop gave that name.
        """
        serial = self._names.get(name, 0) + 1
        self._names[name] = serial
        agent = Agent(f"{name}#{serial}", name, model)
        self._agents[agent.id] = agent
        return agent

    def followup(self, agent: Agent, text: str) -> asyncio.Task[AssistantMessage]:
        """Queue the user prompt ``text`` for ``agent`` and return the task running its turn.

        The task's result is the model's closing ``AssistantMessage``. Prompts to one agent run
        one after another in the order given; prompts to different agents run concurrently.
        Must be called with an event loop running. Raises ``AgentDisposedError`` for a disposed
        agent (the task raises it when the agent is disposed while the prompt waits).
        """
        _check_live(agent)
        task = asyncio.get_running_loop().create_task(self._turn(agent, text))
        self._tasks.append(task)
        return task

    async def idle(self) -> None:
        """Wait until every prompt given so far (and any they lead to) has finished.

        Raises an ``ExceptionGroup`` holding the error of every turn that failed since the last
        ``idle`` (also those already seen by awaiting their task); a cancelled turn is not an
        error.
        """
        failures: list[Exception] = []
        while self._tasks:
            tasks, self._tasks = self._tasks, []
            await asyncio.wait(tasks)
            for task in tasks:
                error = _failure(task)
                if error is not None:
                    failures.append(error)
        if failures:
            raise ExceptionGroup("agent turns failed", failures)

    async def dispose(self, agent: Agent) -> None:
        """Retire ``agent``: wait for its running turn, call ``agent_dispose``, forget it.

        Disposing an agent twice does nothing the second time.
        """
        async with agent._lock:
            if agent._disposed:
                return
            agent._disposed = True
            del self._agents[agent.id]
            self._call_hook("agent_dispose", agent=agent)

    async def execute_direct(self, tool: str, arguments: object) -> CallOutcome:
        """Run ``tool`` outside any agent, through the same pipeline, with ``agent=None``.

        Returns the call's outcome. Nothing is logged: no model will see it.
        """
        self._direct_calls += 1
        return await self._execute(None, f"direct_{self._direct_calls}", tool, arguments)

    async def _turn(self, agent: Agent, text: str) -> AssistantMessage:
        async with agent._lock:
            _check_live(agent)
            self._call_hook("agent_prompt_submit", agent=agent, prompt=text)
            await self._record(agent, UserMessage(agent._next_id(), agent.id, text))
            while True:
                turn = await agent._model.complete(agent.history, self.tools.specs)
                if isinstance(turn, str):
                    answer = AssistantMessage(agent._next_id(), agent.id, turn)
                    await self._record(agent, answer)
                    return answer
                await self._step(agent, turn)

    async def _step(self, agent: Agent, turn: ModelTurn) -> None:
        calls = _calls(turn)
        for request in calls:
            call = ToolCall(
                agent._next_id(), agent.id, request.call_id, request.tool, request.arguments
            )
            await self._record(agent, call)
        pending: list[tuple[str, HookContext]] = []
        for request in calls:
            outcome = await self._execute(agent, request.call_id, request.tool, request.arguments)
            await self._record(agent, _result_event(agent, outcome))
            pending.extend((outcome.call_id, context) for context in outcome.contexts)
        # Contexts wait until every result is in: a call and its result stay adjacent.
        for call_id, context in pending:
            message = ContextMessage(
                agent._next_id(), agent.id, call_id, context.text, context.source, context.reminder
            )
            await self._record(agent, message)

    async def _execute(
        self, agent: Agent | None, call_id: str, tool: str, arguments: object
    ) -> CallOutcome:
        execution = ToolExecution(agent, call_id, tool, arguments)
        reason = await self._denial(execution)
        if reason is None:
            result = await self._invoke(tool, arguments)
        else:
            execution = replace(execution, denied=True)
            result = HookResult(f"denied: {reason}", is_error=True)
        # No await from here to the end: the plugins' state changes inside this one call.
        decision = self._post_execute(execution, result)
        return _outcome(execution, result, decision)

    async def _denial(self, execution: ToolExecution) -> str | None:
        reason = self._call_hook("tool_pre_execute", execution=execution)
        if reason is not None:
            if not isinstance(reason, str):
                raise TypeError(f"tool_pre_execute returned {reason!r}; expected a str or None")
            return reason
        for listener in self._pre_execute:
            reason = await listener(execution)
            if reason is not None:
                return reason
        return None

    async def _invoke(self, tool: str, arguments: object) -> HookResult:
        handler = self.tools.handler(tool)
        if handler is None:
            return HookResult(f"unknown tool {tool!r}", is_error=True)
        try:
            content = await handler(arguments)
        except Exception as error:  # a failing tool is a result the model should see
            return HookResult(f"{type(error).__name__}: {error}", is_error=True)
        return HookResult(_as_text(content))

    def _post_execute(self, execution: ToolExecution, result: HookResult) -> PostExecuteDecision:
        answer = self._call_hook("tool_post_execute", execution=execution, result=result)
        if answer is None:
            return Accept()
        if isinstance(answer, Accept | Block):
            return answer
        raise TypeError(
            f"tool_post_execute returned {answer!r}; expected Accept, Block or None "
            "(is the hook specification registered with firstresult=True?)"
        )

    def _call_hook(self, name: str, **kwargs: object) -> object:
        caller: pluggy.HookCaller = getattr(self.pm.hook, name)
        result: object = caller(**kwargs)
        return result

    async def _record(self, agent: Agent, event: Event) -> None:
        agent._history.append(event)
        self.log.append(event)
        if self._on_event is not None:
            await self._on_event(event)


def _check_live(agent: Agent) -> None:
    if agent._disposed:
        raise AgentDisposedError(f"{agent.id} has been disposed and takes no more prompts")


def _calls(turn: ModelTurn) -> tuple[ToolCallRequest, ...]:
    if isinstance(turn, str) or not turn:
        raise ValueError(f"a step needs a non-empty tuple of tool calls, got {turn!r}")
    return turn


def _failure(task: asyncio.Task[AssistantMessage]) -> Exception | None:
    if task.cancelled():
        return None
    error = task.exception()
    return error if isinstance(error, Exception) else None


def _as_text(content: object) -> str:
    """What a tool returned, as the text the model is shown: itself if a string, else JSON;
    a value JSON cannot hold (keys that are not strings, a container holding itself, nesting
    past the interpreter's limit) in the core's canonical text, which takes any value."""
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, ensure_ascii=False, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return canonical_arguments(content)


def _outcome(
    execution: ToolExecution, result: HookResult, decision: PostExecuteDecision
) -> CallOutcome:
    """Apply ``decision`` to ``result``: what the model is shown, and the attached contexts."""
    outcome: Outcome
    if isinstance(decision, Block):
        outcome, shown, shown_error = "blocked", decision.feedback, True
    elif decision.replacement is not None:
        replacement = decision.replacement
        outcome, shown, shown_error = (
            "replaced",
            _as_text(replacement.content),
            replacement.is_error,
        )
    else:
        outcome, shown, shown_error = "accepted", _as_text(result.content), result.is_error
    return CallOutcome(
        call_id=execution.call_id,
        tool=execution.tool,
        arguments=execution.arguments,
        content=_as_text(result.content),
        is_error=result.is_error,
        denied=execution.denied,
        outcome=outcome,
        model_content=shown,
        model_is_error=shown_error,
        contexts=tuple(decision.contexts),
    )


def _result_event(agent: Agent, outcome: CallOutcome) -> ToolResult:
    return ToolResult(
        id=agent._next_id(),
        agent=agent.id,
        call_id=outcome.call_id,
        tool=outcome.tool,
        content=outcome.content,
        is_error=outcome.is_error,
        denied=outcome.denied,
        outcome=outcome.outcome,
        model_content=outcome.model_content,
        model_is_error=outcome.model_is_error,
    )
