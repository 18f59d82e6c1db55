"""The guard as a pluggy plugin: the only mutable cell around the pure reducer.

Theory of operation: ``RepeatGuardPlugin`` holds the current ``GuardState`` and a map from live
agent objects to the string ids the core keys chains by. Every hook turns its arguments into a
core event, runs the reducer once and stores the next state; no detection logic lives here.

* ``tool_pre_execute`` asks the core's pure ``admit`` whether a configured hard limit
  (``denyAt``, a spent budget) refuses the call, and returns its reason. A call it admits is
  counted only at ``tool_post_execute``; until then it is one of the core's ``Running`` calls,
  by agent and call id, counted in when the next is asked about; its ``tool_post_execute``,
  the agent's next prompt or its disposal ends its wait (the core decides all of that).
* ``tool_post_execute`` is a ``wrapper=True`` hook implementation: it advances the agent's
  chain first, delegates (``decision = yield``), then prepends its reminder, if any, as its own
  context message onto whatever decision came back.
* Agent objects are keyed weakly: a collected agent's chain is dropped through
  ``weakref.finalize``. Objects that cannot be weakly referenced are held strongly until
  ``agent_dispose`` names them.
* Fail open: an exception raised by the guard's own code is logged once and swallowed, and the
  host's call proceeds with the downstream decision. Exceptions from downstream hook
  implementations are the host's and propagate unchanged.

The plugin is meant to be driven from one thread (an asyncio loop, a synchronous harness).
Finalizers may run at any allocation, in any thread, so they never touch the state: they only
queue the collected agent's id, and the next hook call (or a read of ``state``) applies it.
"""

from __future__ import annotations

import logging
import weakref
from collections import deque
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, replace
from types import SimpleNamespace

import pluggy

from repeat_guard import (
    PLUGIN_NAME,
    AgentDisposed,
    Deny,
    Event,
    GuardConfig,
    GuardConfigError,
    GuardState,
    PromptSubmitted,
    Reducer,
    Reminder,
    Running,
    ToolCallFinished,
    admit,
    reduce,
    resolve_config,
)

from . import hookspecs
from ._types import Accept, ContextMessage, PostExecuteDecision, ToolExecution, ToolResult

__all__ = ["PLUGIN_NAME", "GuardConfigError", "Reducer", "RepeatGuardPlugin"]

PostExecuteWrapper = Generator[None, PostExecuteDecision | None, PostExecuteDecision | None]

_log = logging.getLogger("repeat_guard_pluggy")


@dataclass(frozen=True, slots=True)
class _Registration:
    """How an agent object is known: its id, and what ties the entry to the object's life.

    ``finalizer`` is set for weakly referenced agents; ``keepalive`` holds agents that cannot
    be weakly referenced (their ``id()`` must not be reused while the entry exists).
    """

    agent_id: str
    finalizer: weakref.finalize[[int, str], object] | None
    keepalive: object | None


class RepeatGuardPlugin:
    """The repeat-tool-call guard, holding the current state and the live agents' ids.

    ``config`` is a ``GuardConfig``, a raw mapping (parsed here; ``GuardConfigError`` when
    invalid) or ``None`` for the defaults. ``reducer`` is the transition function, injectable
    for tests. It is registered one way, whatever the plugin manager's project name:
    ``install(pm, config)``, which registers ``hook_implementations(pm.project_name)``.

    Agent objects should support weak references: a collected agent's chain and id are dropped
    automatically. An agent that cannot be weakly referenced is held until ``agent_dispose``.
    (Each live agent's finalizer refers to the plugin, so the plugin outlives its agents.)
    """

    def __init__(
        self,
        config: Mapping[str, object] | GuardConfig | None = None,
        *,
        reducer: Reducer = reduce,
    ) -> None:
        self._state = GuardState.initial(resolve_config(config))
        self._reducer = reducer
        self._agents: dict[int, _Registration] = {}
        self._collected: deque[str] = deque()
        self._next_agent = 0
        self._running = Running()

    # -- introspection -------------------------------------------------------------------

    @property
    def state(self) -> GuardState:
        """The current guard state, with every collected agent's chain already dropped."""
        self._advance(lambda: None)
        return self._state

    @property
    def config(self) -> GuardConfig:
        """The configuration the guard runs with."""
        return self._state.config

    @property
    def known_agents(self) -> int:
        """How many agent objects currently have an id."""
        return len(self._agents)

    def agent_id(self, agent: object) -> str | None:
        """Return the id the guard gave ``agent``, or ``None`` when it has none."""
        registration = self._agents.get(id(agent))
        return None if registration is None else registration.agent_id

    # -- the hooks' behaviour (marked for a project by hook_implementations) ----------------

    def tool_pre_execute(self, execution: ToolExecution) -> str | None:
        """Return why a configured hard limit refuses the call, or ``None`` to let it run.

        Fails open: an error in the guard's own code is logged once and the call runs.
        """
        try:
            self._advance(lambda: None)
            if execution.agent is None:
                return None
            agent_id = self._register(execution.agent)
            call = ToolCallFinished(agent_id, execution.tool, execution.arguments)
            # the host reports a refused attempt itself, at tool_post_execute
            verdict = admit(self._state, call, self._running.calls())
            if isinstance(verdict, Deny):
                return verdict.reason
            self._running = self._running.admitted(execution.call_id, call)
        except Exception:
            _log.exception("%s failed to check the call; it runs unguarded", PLUGIN_NAME)
        return None

    def tool_post_execute(self, execution: ToolExecution, result: ToolResult) -> PostExecuteWrapper:
        """Count the finished call, delegate, then prepend any reminder to the decision.

        Returns the downstream decision itself when there is no reminder; otherwise a copy
        (``Accept()`` when downstream gave ``None``) whose contexts start with the guard's.
        Exceptions raised downstream propagate unchanged.
        """
        reminders = self._advance(lambda: self._call_event(execution, result))
        decision = yield
        if not reminders:
            return decision
        try:
            return fold_reminders(decision, reminders)
        except Exception:
            _log.exception("%s failed to attach its reminder; the call proceeds", PLUGIN_NAME)
            return decision

    def agent_prompt_submit(self, agent: object, prompt: str) -> None:
        """Start ``agent``'s chain over (nothing happens for an agent without an id)."""
        self._advance(lambda: self._prompt_event(agent))

    def agent_dispose(self, agent: object) -> None:
        """Drop ``agent``'s chain and forget its id (nothing happens for an unknown agent)."""
        self._advance(lambda: self._dispose_event(agent))

    def hook_implementations(self, project_name: str = hookspecs.PROJECT_NAME) -> object:
        """Return an object whose functions implement the hooks for ``project_name``.

        pluggy matches implementations to a plugin manager by the marker's project name, so
        this is what ``install`` registers; it implements every hook in
        ``hookspecs.HOOK_NAMES``. Its ``guard`` attribute is this plugin, so
        ``pm.get_plugin("repeat-tool-guard").guard`` finds the guard again.
        """
        hookimpl = pluggy.HookimplMarker(project_name)
        guard = self

        @hookimpl
        def tool_pre_execute(execution: ToolExecution) -> str | None:
            return guard.tool_pre_execute(execution)

        @hookimpl(wrapper=True)
        def tool_post_execute(execution: ToolExecution, result: ToolResult) -> PostExecuteWrapper:
            return (yield from guard.tool_post_execute(execution, result))

        @hookimpl
        def agent_prompt_submit(agent: object, prompt: str) -> None:
            guard.agent_prompt_submit(agent, prompt)

        @hookimpl
        def agent_dispose(agent: object) -> None:
            guard.agent_dispose(agent)

        return SimpleNamespace(
            guard=guard,
            tool_pre_execute=tool_pre_execute,
            tool_post_execute=tool_post_execute,
            agent_prompt_submit=agent_prompt_submit,
            agent_dispose=agent_dispose,
        )

    # -- the mutable cell -------------------------------------------------------------------

    def _advance(self, event_of: Callable[[], Event | None]) -> tuple[Reminder, ...]:
        """Apply the event ``event_of`` builds, then queued disposals; return its reminders.

        Never raises: an exception from the guard's own code is logged once and the failing
        step leaves the state as it was. (The collected agents' ids are never the event's, so
        the order of the two does not matter.)
        """
        reminders: tuple[Reminder, ...] = ()
        try:
            event = event_of()
            if event is not None:
                self._state, reminders = self._reducer(self._state, event)
            while self._collected:
                collected = self._collected.popleft()
                self._running = self._running.ended(collected)
                self._state, _ = self._reducer(self._state, AgentDisposed(collected))
        except Exception:
            _log.exception("%s failed; the host's call proceeds unguarded", PLUGIN_NAME)
        return reminders

    def _call_event(self, execution: ToolExecution, result: ToolResult) -> Event:
        agent = execution.agent
        agent_id = None if agent is None else self._register(agent)
        self._running = self._running.finished(agent_id, execution.call_id)
        tool, arguments, denied = execution.tool, execution.arguments, execution.denied
        # A denied call's error is the refusal's, not the tool failing.
        failed = result.is_error and not denied
        return ToolCallFinished(agent_id, tool, arguments, denied, result.content, failed)

    def _prompt_event(self, agent: object) -> Event | None:
        agent_id = self.agent_id(agent)
        if agent_id is None:
            return None
        self._running = self._running.ended(agent_id)
        return PromptSubmitted(agent_id)

    def _dispose_event(self, agent: object) -> Event | None:
        registration = self._agents.pop(id(agent), None)
        if registration is None:
            return None
        if registration.finalizer is not None:
            registration.finalizer.detach()
        self._running = self._running.ended(registration.agent_id)
        return AgentDisposed(registration.agent_id)

    def _register(self, agent: object) -> str:
        """Return ``agent``'s id, giving it a fresh one (and a finalizer) on first sight."""
        key = id(agent)
        registration = self._agents.get(key)
        if registration is not None:
            return registration.agent_id
        self._next_agent += 1
        agent_id = f"agent-{self._next_agent}"
        try:
            finalizer = weakref.finalize(agent, self._on_collected, key, agent_id)
        except TypeError:  # not weakly referenceable: held until agent_dispose names it
            self._agents[key] = _Registration(agent_id, None, agent)
        else:
            finalizer.atexit = False
            self._agents[key] = _Registration(agent_id, finalizer, None)
        return agent_id

    def _on_collected(self, key: int, agent_id: str) -> None:
        # Runs inside garbage collection: touch only atomic container operations.
        self._agents.pop(key, None)
        self._collected.append(agent_id)


def reminder_context(reminder: Reminder) -> ContextMessage:
    """Return the context message carrying ``reminder``: its text, its source, the value itself.

    The ``Reminder`` rides along as itself, so a host that needs its tool, count or form reads
    them from ``context.reminder`` instead of parsing a label.
    """
    return ContextMessage(text=reminder.text, source=reminder.source, reminder=reminder)


def fold_reminders(
    decision: PostExecuteDecision | None, reminders: tuple[Reminder, ...]
) -> PostExecuteDecision:
    """Return ``decision`` (``Accept()`` for ``None``) with the reminders' contexts first.

    Everything else about the decision (a block's feedback, an accept's replacement, the
    downstream contexts and their sources) is kept as it was.
    """
    base: PostExecuteDecision = Accept() if decision is None else decision
    guard = tuple(reminder_context(reminder) for reminder in reminders)
    return replace(base, contexts=(*guard, *base.contexts))
