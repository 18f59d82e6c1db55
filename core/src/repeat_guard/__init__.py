"""repeat-guard: notice an LLM agent repeating the same tool call, and say so.

A pure, immutable reducer with no I/O. A harness owns one ``GuardState``, feeds each event to
``reduce`` and injects the returned reminders into the agent's next model request::

    from repeat_guard import GuardState, ToolCallFinished, reduce

    state = GuardState.initial()
    for _ in range(3):
        state, reminders = reduce(state, ToolCallFinished("a", "grep", {"pattern": "x"}))
    assert [r.summary for r in reminders] == ["grep × 3"]
"""

from ._canonical import argument_key, canonical_arguments
from ._codec import (
    CHAIN_VERSION,
    STATE_VERSION,
    CodecError,
    decode_chain,
    decode_state,
    encode_chain,
    encode_state,
)
from ._config import ConfigError, ConfigFormat, GuardConfig, load_config, parse_config
from ._events import AgentDisposed, Event, PromptSubmitted, ToolCallFinished
from ._reminders import SOURCE, Form, Reminder, preview_arguments, render_reminder
from ._state import Chain, GuardState, reduce
from ._tally import (
    UNKNOWN_DAY,
    DayTally,
    ProjectTally,
    Run,
    SessionWaste,
    Tally,
    ToolTally,
    Waste,
    merge_tallies,
    merge_waste,
    tally,
    tally_from_json,
    tally_to_json,
    waste_to_json,
    worst_runs,
    worst_sessions,
)
from ._wire import reminder_to_json

__all__ = [
    "CHAIN_VERSION",
    "SOURCE",
    "STATE_VERSION",
    "UNKNOWN_DAY",
    "AgentDisposed",
    "Chain",
    "CodecError",
    "ConfigError",
    "ConfigFormat",
    "DayTally",
    "Event",
    "Form",
    "GuardConfig",
    "GuardState",
    "ProjectTally",
    "PromptSubmitted",
    "Reminder",
    "Run",
    "SessionWaste",
    "Tally",
    "ToolCallFinished",
    "ToolTally",
    "Waste",
    "argument_key",
    "canonical_arguments",
    "decode_chain",
    "decode_state",
    "encode_chain",
    "encode_state",
    "load_config",
    "merge_tallies",
    "merge_waste",
    "parse_config",
    "preview_arguments",
    "reduce",
    "reminder_to_json",
    "render_reminder",
    "tally",
    "tally_from_json",
    "tally_to_json",
    "waste_to_json",
    "worst_runs",
    "worst_sessions",
]
