"""repeat-guard for CrewAI: the repeat-tool-call guard as CrewAI's tool-call and LLM-call hooks.

Register it around a kickoff; each agent's execution of a task has its own chain, and a reminder
reaches the model's next call as a user message of its own right after the tool's result::

    from repeat_guard_crewai import RepeatGuard

    with RepeatGuard({"thresholds": [3, 5]}):
        crew.kickoff()

See the package README for the mapping from CrewAI's hooks to the guard's events.
"""

from ._hooks import (
    AGENT,
    PLUGIN_NAME,
    GuardConfigError,
    ModelCall,
    Reducer,
    RepeatGuard,
    ToolCall,
    reminder_message,
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
