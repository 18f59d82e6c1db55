"""The guard as CrewAI hooks: tool-call hooks that count and refuse, an LLM-call hook that
delivers.

Theory of operation: CrewAI runs every registered ``before_tool_call`` and ``after_tool_call``
hook around each tool call of every agent, and every ``before_llm_call`` hook before each model
call, with the executor's own message list, which the hook may append to. One task executed by
one agent is one run: its messages start with the task's prompt and grow with every call, and
the hooks of both kinds see the same agent and task objects. The guard keeps one state per run
(keyed by those two objects) and maps:

* ``before_llm_call``: first the calls that finished since the last model call are counted, in
  the order they finished, each failed if CrewAI recorded a tool failure for it (below); at the
  run's first iteration, a new run, whose task prompt is the user's message: the run's state
  gets ``PromptSubmitted``, so the chain starts over (and, with ``budgetScope = "session"``, the
  same agent's budgets go on counting across its task's kickoffs); at every iteration, the
  reminders the run's calls produced are appended to the messages, each a user message of its
  own, after the tool's result the executor appended before it;
* ``before_tool_call``: the core's ``attempt``, with the run's calls admitted and not yet
  finished (``Running``) counted in; a ``Deny`` counts the refused attempt at once, returns
  ``False`` (CrewAI does not run the tool) and remembers the reason;
* ``after_tool_call``: the finished call, with the tool's result for ``progress = "result"``,
  kept to be counted at the next model call; for a call the guard refused (its result is
  CrewAI's fixed "Tool execution blocked by hook." text, and the guard kept a reason for it)
  that result is replaced with the core's reason, so the model reads why. Calls are matched by
  tool and arguments, so parallel calls of one response pair up whichever finishes first.

CrewAI records a call's failure (a ``ToolFailureRecord``: the tool raised, returned a
``ToolFailure``, was unknown or used up) after the ``after_tool_call`` hooks, in the
execution's collector (``active_tool_failures()``, what ``TaskOutput.tool_failures`` is made
of), before its next model call. That is why a call is counted at the next ``before_llm_call``:
each record of the run's agent and task not read before marks the earliest call waiting with
its tool and arguments failed.

Fail open: an exception from the guard's own code is logged in one line; the call runs, its
result is kept, the model call goes ahead with its messages as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Protocol

from crewai.hooks import (
    register_after_tool_call_hook,
    register_before_llm_call_hook,
    register_before_tool_call_hook,
    unregister_after_tool_call_hook,
    unregister_before_llm_call_hook,
    unregister_before_tool_call_hook,
)
from crewai.tools.tool_failure import ToolFailureRecord, active_tool_failures

from repeat_guard import (
    PLUGIN_NAME,
    Deny,
    GuardConfig,
    GuardConfigError,
    GuardState,
    PromptSubmitted,
    Reducer,
    Reminder,
    Running,
    ToolCallFinished,
    attempt,
    canonical_arguments,
    reduce,
    resolve_config,
)

__all__ = [
    "AGENT",
    "PLUGIN_NAME",
    "GuardConfigError",
    "ModelCall",
    "Reducer",
    "RepeatGuard",
    "ToolCall",
    "reminder_message",
    "resolve_config",
]

AGENT = "agent"
"""The core's id for the agent of a run: each run has its own state, so one suffices."""

_BLOCKED = "Tool execution blocked by hook."
_log = logging.getLogger("repeat_guard_crewai")


class ToolCall(Protocol):
    """What the guard reads of CrewAI's ``ToolCallHookContext``."""

    tool_name: str
    tool_input: dict[str, Any]
    agent: Any
    task: Any
    tool_result: str | None


class ModelCall(Protocol):
    """What the guard reads of CrewAI's ``LLMCallHookContext``."""

    messages: Any
    agent: Any
    task: Any
    iterations: int


def reminder_message(reminder: Reminder) -> dict[str, str]:
    """Return the message carrying ``reminder``: a user message of its own."""
    return {"role": "user", "content": reminder.text}


def _fail_open(error: Exception, consequence: str) -> None:
    _log.error("%s failed (%s: %s); %s", PLUGIN_NAME, type(error).__name__, error, consequence)


@dataclass
class _Run:
    """One agent's execution of one task: its state, and what its calls left to do."""

    state: GuardState
    running: Running = field(default_factory=Running)
    # CrewAI's hooks carry no call id: admitted calls get one here, and a finished call is the
    # earliest admitted one with its tool and arguments (likewise a refusal's reason).
    waiting: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    refused: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    pending: list[Reminder] = field(default_factory=list)
    admitted: int = 0
    # Finished calls (with their ids among the running ones), counted at the next model call,
    # once CrewAI has recorded their failures; the ids of the failure records already read.
    finished: list[tuple[ToolCallFinished, str | None]] = field(default_factory=list)
    read: set[int] = field(default_factory=set)


class RepeatGuard:
    """The repeat-tool-call guard as CrewAI hooks: ``RepeatGuard().register()``, or ``with
    RepeatGuard():`` around the kickoff.

    ``config`` is a ``repeat_guard.GuardConfig``, a mapping in the core's keys (parsed with the
    core's ``resolve_config``, raising ``GuardConfigError`` when invalid) or ``None`` for the
    defaults. CrewAI's hooks are process-wide: a registered guard sees every crew's and agent's
    calls, and keeps each run apart. ``reducer`` is the transition function, injectable for
    tests.
    """

    def __init__(
        self,
        config: GuardConfig | Mapping[str, object] | None = None,
        *,
        reducer: Reducer = reduce,
    ) -> None:
        self.config = resolve_config(config)
        self.reducer = reducer
        self._runs: dict[tuple[int, int], _Run] = {}

    def register(self) -> None:
        """Register the guard's three hooks with CrewAI (after those already registered)."""
        register_before_llm_call_hook(self.before_llm_call)
        register_before_tool_call_hook(self.before_tool_call)
        register_after_tool_call_hook(self.after_tool_call)

    def unregister(self) -> None:
        """Remove the guard's hooks; the runs it kept are forgotten."""
        unregister_before_llm_call_hook(self.before_llm_call)
        unregister_before_tool_call_hook(self.before_tool_call)
        unregister_after_tool_call_hook(self.after_tool_call)
        self._runs.clear()

    def __enter__(self) -> RepeatGuard:
        self.register()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.unregister()

    def before_llm_call(self, context: ModelCall) -> None:
        """Start a run at its first iteration; append the run's new reminders to the messages."""
        try:
            key = _key(context)
            self._count(self._run(key), context)
            if context.iterations == 0:  # a kickoff: the task's prompt reaches the agent
                earlier = self._run(key)
                state, _ = self.reducer(earlier.state, PromptSubmitted(AGENT))
                # records already read stay read, should the execution's collector hold them
                self._runs[key] = _Run(state, read=earlier.read)
            run = self._run(key)
            context.messages.extend(reminder_message(reminder) for reminder in run.pending)
            run.pending.clear()
        except Exception as error:
            _fail_open(error, "the model is called with its messages as they are")

    def before_tool_call(self, context: ToolCall) -> bool | None:
        """``False`` (CrewAI does not run the tool) when the core refuses the call."""
        try:
            run = self._run(_key(context))
            call = ToolCallFinished(AGENT, context.tool_name, dict(context.tool_input))
            # A refused attempt counts at once; an admitted call counts when it finishes.
            verdict, run.state, reminders = attempt(
                run.state, call, run.running, reducer=self.reducer
            )
            if isinstance(verdict, Deny):
                run.pending.extend(reminders)
                run.refused.setdefault(_call_key(call), []).append(verdict.reason)
                return False
            run.admitted += 1
            call_id = str(run.admitted)
            run.running = run.running.admitted(call_id, call)
            run.waiting.setdefault(_call_key(call), []).append(call_id)
        except Exception as error:
            _fail_open(error, "the call runs unguarded")
        return None

    def after_tool_call(self, context: ToolCall) -> str | None:
        """Count the finished call; a refused call's result becomes the core's reason."""
        try:
            run = self._run(_key(context))
            call = ToolCallFinished(AGENT, context.tool_name, dict(context.tool_input))
            reason = _earliest(run.refused, call) if _was_blocked(context) else None
            if reason is not None:
                return reason  # counted when it was refused
            call_id = _earliest(run.waiting, call)
            run.finished.append((replace(call, result=context.tool_result), call_id))
        except Exception as error:
            _fail_open(error, "the call's result is kept as it is")
        return None

    def _count(self, run: _Run, context: ModelCall) -> None:
        """Count the run's finished calls, failed where CrewAI recorded a failure for them."""
        failures = _new_failures(run, context)
        finished, run.finished = run.finished, []  # counted once, even if the reducer raises
        for call, call_id in finished:
            if call_id is not None:
                run.running = run.running.finished(AGENT, call_id)
            failed = _call_key(call) in failures
            if failed:
                failures.remove(_call_key(call))
            run.state, reminders = self.reducer(run.state, replace(call, failed=failed))
            run.pending.extend(reminders)

    def _run(self, key: tuple[int, int]) -> _Run:
        run = self._runs.get(key)
        if run is None:
            run = self._runs[key] = _Run(GuardState.initial(self.config))
        return run


def _key(context: ToolCall | ModelCall) -> tuple[int, int]:
    # The executor's agent and task are the same objects in both kinds of hooks for a run.
    return id(context.agent), id(context.task)


def _call_key(call: ToolCallFinished) -> tuple[str, str]:
    return call.tool, canonical_arguments(call.arguments)


def _new_failures(run: _Run, context: ModelCall) -> list[tuple[str, str]]:
    """The calls (tool, arguments) of the failure records of the run's agent and task that the
    run has not read yet; they are read now."""
    failures = []
    for record in active_tool_failures() or ():
        if id(record) not in run.read and _is_of(record, context):
            run.read.add(id(record))
            failures.append((record.tool_name, canonical_arguments(record.tool_args)))
    return failures


def _is_of(record: ToolFailureRecord, context: ModelCall) -> bool:
    # CrewAI writes the agent's role and the task's id into each record (the collector may
    # hold a delegated coworker's too).
    task_id = getattr(context.task, "id", None)
    return record.agent_role == getattr(context.agent, "role", None) and record.task_id == (
        None if task_id is None else str(task_id)
    )


def _was_blocked(context: ToolCall) -> bool:
    # CrewAI's own result for a call a before hook refused; the same for every executor.
    return (context.tool_result or "").startswith(_BLOCKED)


def _earliest(entries: dict[tuple[str, str], list[str]], call: ToolCallFinished) -> str | None:
    """Take the earliest entry kept for calls like ``call`` (none: another hook refused it, or
    the guard was registered while it ran)."""
    kept = entries.get(_call_key(call))
    return kept.pop(0) if kept else None
