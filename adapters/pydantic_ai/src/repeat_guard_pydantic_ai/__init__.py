"""repeat-guard for pydantic-ai: the repeat-tool-call guard as an agent capability.

Add it to an agent; each run gets its own chain, and a reminder rides into the model's next
request as its own ``SystemPromptPart`` right after the repeated call's return::

    from pydantic_ai import Agent
    from repeat_guard_pydantic_ai import RepeatGuard

    agent = Agent("test", capabilities=[RepeatGuard({"thresholds": [3, 5]})])

See the package README for the mapping from pydantic-ai's hooks to the guard's events.
"""

from ._capability import (
    METADATA_KEY,
    PLUGIN_NAME,
    GuardConfigError,
    Reducer,
    RepeatGuard,
    call_arguments,
    reminder_part,
    resolve_config,
)

__all__ = [
    "METADATA_KEY",
    "PLUGIN_NAME",
    "GuardConfigError",
    "Reducer",
    "RepeatGuard",
    "call_arguments",
    "reminder_part",
    "resolve_config",
]
