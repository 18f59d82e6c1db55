"""Shared helpers for the pluggy adapter tests: agents, downstream plugins and a hook call."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pluggy

from repeat_guard import GuardConfig, reduce
from repeat_guard_pluggy import (
    PostExecuteDecision,
    Reducer,
    RepeatGuardPlugin,
    ToolExecution,
    ToolResult,
    hookspecs,
    install,
)

GREP = {"pattern": "TODO", "path": "src"}


class Agent:
    """A host's agent object: weakly referenceable and compared by identity."""

    def __init__(self, name: str = "agent") -> None:
        self.name = name


class SlottedAgent:
    """An agent object that cannot be weakly referenced (slots, no ``__weakref__``)."""

    __slots__ = ("name",)

    def __init__(self, name: str = "slotted") -> None:
        self.name = name


def guarded(
    *downstream: object,
    project: str = hookspecs.PROJECT_NAME,
    config: dict[str, object] | GuardConfig | None = None,
    reducer: Reducer = reduce,
) -> tuple[pluggy.PluginManager, RepeatGuardPlugin]:
    """A plugin manager named ``project`` with ``downstream`` plugins and the guard installed."""
    pm = pluggy.PluginManager(project)
    guard = install(pm, config, reducer=reducer)
    for plugin in downstream:
        pm.register(plugin)
    return pm, guard


def answering(
    decision: PostExecuteDecision | str | None, project: str = hookspecs.PROJECT_NAME
) -> object:
    """A downstream plugin whose post-execute hook always returns ``decision``."""

    @pluggy.HookimplMarker(project)
    def tool_post_execute(execution: ToolExecution, result: ToolResult) -> object:
        return decision

    return SimpleNamespace(tool_post_execute=tool_post_execute)


def raising(error: BaseException, project: str = hookspecs.PROJECT_NAME) -> object:
    """A downstream plugin whose post-execute hook raises ``error``."""

    @pluggy.HookimplMarker(project)
    def tool_post_execute(execution: ToolExecution, result: ToolResult) -> None:
        raise error

    return SimpleNamespace(tool_post_execute=tool_post_execute)


def execute(
    pm: pluggy.PluginManager,
    agent: object | None,
    tool: str = "grep",
    arguments: object = None,
    *,
    denied: bool = False,
) -> PostExecuteDecision | None:
    """Call the post-execute hook as a host does after one tool call; return the decision."""
    execution = ToolExecution(
        agent, "call-1", tool, GREP if arguments is None else arguments, denied
    )
    decision: PostExecuteDecision | None = pm.hook.tool_post_execute(
        execution=execution, result=ToolResult("src/a.py:1: TODO")
    )
    return decision


def summaries(decision: PostExecuteDecision | None) -> list[str]:
    """The summaries of the guard's contexts in ``decision`` (empty for ``None``)."""
    if decision is None:
        return []
    return [c.reminder.summary for c in decision.contexts if c.reminder is not None]


def repeat(times: int, call: Callable[[], PostExecuteDecision | None]) -> list[list[str]]:
    """Run ``call`` ``times`` times; return the guard's summaries after each call."""
    return [summaries(call()) for _ in range(times)]
