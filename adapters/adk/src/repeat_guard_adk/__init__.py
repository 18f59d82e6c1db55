"""repeat-guard for Google ADK: the repeat-tool-call guard as a runner-wide plugin.

Add it to the runner; each agent's chain is folded from the session's events, and a reminder
reaches the model's next request as a text part of its own right after the tool's result::

    from google.adk.runners import InMemoryRunner
    from repeat_guard_adk import RepeatGuard

    runner = InMemoryRunner(agent=agent, plugins=[RepeatGuard({"thresholds": [3, 5]})])

See the package README for the mapping from ADK's events to the guard's events.
"""

from ._plugin import (
    ERROR_KEY,
    FAILED_KEY,
    PLUGIN_NAME,
    REFUSED_BY,
    STATE_KEY,
    GuardConfigError,
    Reducer,
    RepeatGuard,
    reminder_part,
    resolve_config,
)

__all__ = [
    "ERROR_KEY",
    "FAILED_KEY",
    "PLUGIN_NAME",
    "REFUSED_BY",
    "STATE_KEY",
    "GuardConfigError",
    "Reducer",
    "RepeatGuard",
    "reminder_part",
    "resolve_config",
]
