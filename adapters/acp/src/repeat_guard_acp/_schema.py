"""What the ACP SDK knows: its method names, its session update kinds, and its models.

Only the messages the replay reads are validated (tool calls and permission requests); the
rest are recognised by name, so payloads the guard never looks at cost no validation.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping

from acp import meta, schema
from pydantic import BaseModel, ValidationError

__all__ = ["CLIENT_SIDE_METHODS", "KNOWN_METHODS", "KNOWN_UPDATES", "validation_error"]

CLIENT_SIDE_METHODS = frozenset(meta.CLIENT_METHODS.values())
"""Methods the client implements: requests and notifications the agent sends."""

KNOWN_METHODS = frozenset(meta.AGENT_METHODS.values()) | CLIENT_SIDE_METHODS


def _update_kinds() -> frozenset[str]:
    union = schema.SessionNotification.model_fields["update"].annotation
    kinds: set[str] = set()
    for model in typing.get_args(union):
        kinds.update(typing.get_args(model.model_fields["session_update"].annotation))
    return frozenset(kinds)


KNOWN_UPDATES = _update_kinds()

_MODELS: Mapping[str, type[BaseModel]] = {
    "tool_call": schema.ToolCallStart,
    "tool_call_update": schema.ToolCallProgress,
    "session/request_permission": schema.RequestPermissionRequest,
}


def validation_error(kind: str, payload: Mapping[str, object]) -> str | None:
    """Return why ``payload`` is not a valid ``kind`` message under the SDK, or ``None``."""
    try:
        _MODELS[kind].model_validate(payload)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "<message>"
        return f"{where}: {first['msg']}"
    return None
