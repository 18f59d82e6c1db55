"""repeat-guard: notice an LLM agent repeating the same tool call, and say so.

A pure, immutable reducer with no I/O. A harness owns one ``GuardState``, feeds each event to
``reduce`` and injects the returned reminders into the agent's next model request::

    from repeat_guard import GuardState, ToolCallFinished, reduce

    state = GuardState.initial()
    for _ in range(3):
        state, reminders = reduce(state, ToolCallFinished("a", "grep", {"pattern": "x"}))
    assert [r.summary for r in reminders] == ["grep × 3"]

What the guard saw, counted (``Tally`` and its fold and merge, for replays and audits), is the
module ``repeat_guard.tally``, which ``import repeat_guard`` does not load: a hook process,
a new one for every tool call, never counts a tally. Nor does it load ``repeat_guard.fingerprint``
(how ``progress = "result"`` compares results), which the reducer imports when it first
compares one.
"""

from __future__ import annotations

from ._canonical import argument_key, arguments_from_text, canonical_arguments
from ._codec import (
    CHAIN_VERSION,
    MEMORY_VERSION,
    STATE_VERSION,
    CodecError,
    decode_chain,
    decode_chain_or_error,
    decode_memory,
    decode_memory_or_error,
    decode_state,
    encode_chain,
    encode_memory,
    encode_memory_settings,
    encode_state,
    memory_under,
)
from ._config import (
    BudgetScope,
    ConfigError,
    ConfigFormat,
    GuardConfig,
    GuardConfigError,
    Policy,
    Progress,
    ToolPolicy,
    load_config,
    load_config_or_error,
    parse_config,
    parse_error_reason,
    resolve_config,
)
from ._events import AgentDisposed, Event, PromptSubmitted, ToolCallFinished, ToolCallReturned
from ._policies import Admit, Deny, Memory, memory_fits
from ._presets import HOST_PRESETS, NO_PRESET, PRESETS
from ._reminders import (
    FORMS,
    PLUGIN_NAME,
    SOURCE,
    Form,
    Reminder,
    preview_arguments,
    render_reminder,
)
from ._running import Reducer, Running, attempt
from ._state import Chain, GuardState, admit, reduce
from ._wire import (
    event_from_json,
    event_to_json,
    json_type_name,
    reminder_from_json,
    reminder_to_json,
)

__all__ = [
    "CHAIN_VERSION",
    "FORMS",
    "HOST_PRESETS",
    "MEMORY_VERSION",
    "NO_PRESET",
    "PLUGIN_NAME",
    "PRESETS",
    "SOURCE",
    "STATE_VERSION",
    "Admit",
    "AgentDisposed",
    "BudgetScope",
    "Chain",
    "CodecError",
    "ConfigError",
    "ConfigFormat",
    "Deny",
    "Event",
    "Form",
    "GuardConfig",
    "GuardConfigError",
    "GuardState",
    "Memory",
    "Policy",
    "Progress",
    "PromptSubmitted",
    "Reducer",
    "Reminder",
    "Running",
    "ToolCallFinished",
    "ToolCallReturned",
    "ToolPolicy",
    "admit",
    "argument_key",
    "arguments_from_text",
    "attempt",
    "canonical_arguments",
    "decode_chain",
    "decode_chain_or_error",
    "decode_memory",
    "decode_memory_or_error",
    "decode_state",
    "encode_chain",
    "encode_memory",
    "encode_memory_settings",
    "encode_state",
    "event_from_json",
    "event_to_json",
    "json_type_name",
    "load_config",
    "load_config_or_error",
    "memory_fits",
    "memory_under",
    "parse_config",
    "parse_error_reason",
    "preview_arguments",
    "reduce",
    "reminder_from_json",
    "reminder_to_json",
    "render_reminder",
    "resolve_config",
]
