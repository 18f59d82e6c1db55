"""repeat-guard for Strands Agents: the repeat-tool-call guard as a hook provider.

Give it to an agent; each agent's chain is folded from its own conversation, and a reminder
reaches the model's next call as a text block of its own right after the tool's result::

    from strands import Agent
    from repeat_guard_strands import RepeatGuard

    agent = Agent(tools=[grep], hooks=[RepeatGuard({"thresholds": [3, 5]})])

See the package README for the mapping from Strands' messages to the guard's events.
"""

from ._hooks import (
    AGENT,
    PLUGIN_NAME,
    STATE_KEY,
    GuardConfigError,
    Reducer,
    RepeatGuard,
    reminder_block,
    resolve_config,
)

__all__ = [
    "AGENT",
    "PLUGIN_NAME",
    "STATE_KEY",
    "GuardConfigError",
    "Reducer",
    "RepeatGuard",
    "reminder_block",
    "resolve_config",
]
