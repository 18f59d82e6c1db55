"""repeat-guard for pluggy harnesses: hook specifications and the guard as a wrapper plugin.

Install the guard into a harness's plugin manager (any project name) and call the hooks::

    import pluggy
    from repeat_guard_pluggy import ToolExecution, ToolResult, install

    class Agent:  # any object that supports weak references
        pass

    pm = pluggy.PluginManager("myharness")
    guard = install(pm, {"thresholds": [3, 5]})
    agent = Agent()
    for _ in range(3):
        decision = pm.hook.tool_post_execute(
            execution=ToolExecution(agent, "c1", "grep", {"pattern": "x"}),
            result=ToolResult("no match"),
        )
    assert decision.contexts[0].reminder.summary == "grep × 3"

See the package README for the folding rules, agent keying and failing open.
"""

from repeat_guard import GuardConfigError, resolve_config

from . import hookspecs
from ._install import install, specs_for
from ._plugin import (
    PLUGIN_NAME,
    Reducer,
    RepeatGuardPlugin,
    fold_reminders,
    reminder_context,
)
from ._types import (
    Accept,
    Block,
    ContextMessage,
    PostExecuteDecision,
    ToolExecution,
    ToolResult,
)

__all__ = [
    "PLUGIN_NAME",
    "Accept",
    "Block",
    "ContextMessage",
    "GuardConfigError",
    "PostExecuteDecision",
    "Reducer",
    "RepeatGuardPlugin",
    "ToolExecution",
    "ToolResult",
    "fold_reminders",
    "hookspecs",
    "install",
    "reminder_context",
    "resolve_config",
    "specs_for",
]
