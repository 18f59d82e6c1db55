"""Harness-neutral hook specifications for tool execution and prompts.

A host built on pluggy adds these specs to its plugin manager (``install`` does it for the
guard), calls ``pm.hook.tool_pre_execute(execution=...)`` before a call runs (a reason refuses
it), ``pm.hook.tool_post_execute(execution=..., result=...)`` after every attempt, denied ones
included, and ``pm.hook.agent_prompt_submit(agent=..., prompt=...)`` when a user's
message reaches an agent.
"""

from __future__ import annotations

from typing import Final

import pluggy

from ._types import PostExecuteDecision, ToolExecution, ToolResult

PROJECT_NAME: Final = "repeat_guard"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec(firstresult=True)
def tool_pre_execute(execution: ToolExecution) -> str | None:
    """Decide, before a call runs, whether it may: a reason refuses it, ``None`` lets it run.

    One answer: the first implementation that gives a reason wins. A refused call is still
    reported to ``tool_post_execute``, with ``denied=True``.
    """


@hookspec(firstresult=True)
def tool_post_execute(execution: ToolExecution, result: ToolResult) -> PostExecuteDecision | None:
    """Decide what the model sees for a finished call.

    One answer: the first implementation that returns a decision wins; ``None`` from every
    implementation means ``Accept()``. Wrappers see that decision from ``yield`` and may return
    an enriched one.
    """


@hookspec
def agent_prompt_submit(agent: object, prompt: str) -> None:
    """A user's message reached ``agent``."""


@hookspec
def agent_dispose(agent: object) -> None:
    """``agent`` has finished and will make no more calls."""


HOOK_NAMES: Final = tuple(
    name for name, value in tuple(globals().items()) if hasattr(value, f"{PROJECT_NAME}_spec")
)
"""Every hook specified above, in definition order: the one list of the guard's hook names."""
