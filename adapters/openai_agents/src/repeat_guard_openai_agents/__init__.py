"""repeat-guard for the OpenAI Agents SDK: the repeat-tool-call guard as a run configuration.

Give each run the guard's ``run_config()``; its model input filter folds the conversation into
the chain and puts each reminder into the model's next request as a message of its own, right
after the tool output that reached the threshold::

    from agents import Runner
    from repeat_guard_openai_agents import RepeatGuard

    guard = RepeatGuard({"thresholds": [3, 5]})
    result = await Runner.run(agent, "Find the TODOs.", run_config=guard.run_config())

See the package README for the mapping from the SDK's input items to the guard's events.
"""

from ._guard import (
    AGENT,
    PLUGIN_NAME,
    GuardConfigError,
    Reducer,
    RepeatGuard,
    reminder_message,
    resolve_config,
)

__all__ = [
    "AGENT",
    "PLUGIN_NAME",
    "GuardConfigError",
    "Reducer",
    "RepeatGuard",
    "reminder_message",
    "resolve_config",
]
