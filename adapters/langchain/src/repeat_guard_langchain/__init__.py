"""repeat-guard for LangChain v1 agents: the repeat-tool-call guard as agent middleware.

Add it to ``create_agent``; the chain is part of the agent state, so each thread (and each
subagent) has its own, and a checkpointed thread keeps it across invocations::

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from repeat_guard_langchain import RepeatGuardMiddleware

    agent = create_agent(model, tools=[grep], middleware=[RepeatGuardMiddleware()],
                         checkpointer=InMemorySaver())

See the package README for the mapping from LangChain's messages to the guard's events.
"""

from ._middleware import (
    AGENT,
    PLUGIN_NAME,
    STATE_KEY,
    GuardConfigError,
    Reducer,
    RepeatGuardMiddleware,
    RepeatGuardState,
    reminder_in_result,
    reminder_message,
    resolve_config,
)

__all__ = [
    "AGENT",
    "PLUGIN_NAME",
    "STATE_KEY",
    "GuardConfigError",
    "Reducer",
    "RepeatGuardMiddleware",
    "RepeatGuardState",
    "reminder_in_result",
    "reminder_message",
    "resolve_config",
]
