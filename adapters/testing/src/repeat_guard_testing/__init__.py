"""repeat-guard-testing: model-check a harness that embeds the repeat-guard reducer.

The project's own Hypothesis strategies (configs, events), its reference model (the guard's
rules written the dumb way) and a state machine that compares the two. A harness subclasses
``HarnessMachine`` with ``start(config)`` and ``deliver(event) -> reminders``; see the README.
"""

from ._machine import HarnessMachine
from ._model import Fired, ReferenceGuard, fired
from ._strategies import (
    AGENTS,
    ARGUMENTS,
    FAILED,
    KNOWN_RESULTS,
    PATTERNS,
    RESULTS,
    TOOLS,
    configs,
    events,
    failure_events,
    policy_configs,
    tool_calls,
)

__all__ = [
    "AGENTS",
    "ARGUMENTS",
    "FAILED",
    "KNOWN_RESULTS",
    "PATTERNS",
    "RESULTS",
    "TOOLS",
    "Fired",
    "HarnessMachine",
    "ReferenceGuard",
    "configs",
    "events",
    "failure_events",
    "fired",
    "policy_configs",
    "tool_calls",
]
