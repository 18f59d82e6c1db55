"""OpenHands V1 events (the software-agent-sdk's ``Event`` models, each tagged with its
``kind``), as they appear in a JSON list of events, one event a line, or an evaluation's
``history``.

An ``ActionEvent`` is a call: the tool is its ``tool_name`` and the arguments its ``action``
(less its ``kind``), or, when the action was not executable, the tool call's own ``arguments``
less the ``security_risk`` and ``summary`` the model adds to every call. The call counts at the
line of the event answering its ``tool_call_id``: an ``ObservationEvent`` (its ``observation``
the result), an ``AgentErrorEvent`` (its ``error``) or a ``UserRejectObservation``, a denial
(by the user or a hook). An ``AgentErrorEvent`` failed, and so did an observation marked
``is_error`` or whose ``exit_code`` is a failing status (``exit_failed``). A ``MessageEvent``
from the ``user`` is a prompt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from ._reading import exit_failed

__all__ = ["ANSWERS", "KINDS", "arguments_of", "failed_of", "result_of"]

ANSWERS: Final = frozenset({"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"})
"""The kinds of event that answer a call."""

KINDS: Final = frozenset({"ActionEvent", "MessageEvent", *ANSWERS})
"""The kinds the reader acts on (the SDK's other events, state updates and the system prompt
among them, are not calls)."""

_ADDED_BY_THE_SDK = frozenset({"security_risk", "summary"})


def arguments_of(event: Mapping[str, object]) -> object:
    """The arguments of an ``ActionEvent``."""
    action = event.get("action")
    if isinstance(action, dict):
        return {key: value for key, value in action.items() if key != "kind"}
    call = event.get("tool_call")
    arguments = call.get("arguments") if isinstance(call, dict) else None
    if not isinstance(arguments, str):
        return arguments
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments
    if isinstance(parsed, dict):
        return {key: value for key, value in parsed.items() if key not in _ADDED_BY_THE_SDK}
    return parsed


def failed_of(event: Mapping[str, object], kind: str) -> bool:
    """Whether an answering event says its call failed: an ``AgentErrorEvent``, or an
    observation marked ``is_error`` or whose command exited with a failing status."""
    if kind == "AgentErrorEvent":
        return True
    observation = event.get("observation")
    if kind != "ObservationEvent" or not isinstance(observation, dict):
        return False
    return observation.get("is_error") is True or exit_failed(observation.get("exit_code"))


def result_of(event: Mapping[str, object], kind: str) -> object:
    """The result an answering event carries."""
    if kind == "AgentErrorEvent":
        return event.get("error")
    if kind == "UserRejectObservation":
        return event.get("rejection_reason")
    return event.get("observation")
