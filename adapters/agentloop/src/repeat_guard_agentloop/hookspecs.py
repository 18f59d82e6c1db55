"""The agent loop's hook specifications: what the loop calls, and when.

The loop is the host, so it owns these (pluggy's own ``eggsample`` shape): plugins implement
them with ``hookimpl``, and the guard's implementation comes from ``repeat_guard_pluggy``,
registered by ``AgentLoop(..., guard=config)``. The names and arguments match the guard's
harness-neutral specs, so the same implementation serves both.
"""

from __future__ import annotations

from typing import Final

import pluggy

from repeat_guard_pluggy import PostExecuteDecision, ToolExecution, ToolResult

PROJECT_NAME: Final = "repeat_guard_agentloop"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec(firstresult=True)
def tool_pre_execute(execution: ToolExecution) -> str | None:
    """Decide, before a call runs, whether it may: a reason refuses it, ``None`` lets it run.

    Called before the loop's ``pre_execute`` listeners; the first reason wins. A refused call
    gets an error result and still goes through ``tool_post_execute`` with ``denied=True``.
    """


@hookspec(firstresult=True)
def tool_post_execute(execution: ToolExecution, result: ToolResult) -> PostExecuteDecision | None:
    """Decide what the model sees for a finished call (denied calls included).

    One answer: the first implementation that returns a decision wins; ``None`` from every
    implementation means ``Accept()``. Wrappers see that decision from ``yield`` and may return
    an enriched one. Called synchronously, with no ``await`` between state read and write.
    """


@hookspec
def agent_prompt_submit(agent: object, prompt: str) -> None:
    """A user's message reached ``agent`` (called before it is logged)."""


@hookspec
def agent_dispose(agent: object) -> None:
    """``agent`` has been disposed and will make no more calls."""


HOOK_NAMES: Final = tuple(
    name for name, value in tuple(globals().items()) if hasattr(value, f"{PROJECT_NAME}_spec")
)
"""Every hook the loop calls, in definition order, derived from the specs above."""
