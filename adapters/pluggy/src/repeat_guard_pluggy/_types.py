"""Values carried by the hook specifications: a tool execution, its result, and the decision.

Harness-neutral: a host converts its own call objects to these at its seam. A decision is
either ``Accept`` (optionally replacing the result) or ``Block`` (with feedback for the model);
both carry the context messages that ride into the agent's next model request, each with its
own ``source`` so provenance survives when several plugins contribute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from repeat_guard import Reminder

__all__ = [
    "Accept",
    "Block",
    "ContextMessage",
    "PostExecuteDecision",
    "ToolExecution",
    "ToolResult",
]


@dataclass(frozen=True, slots=True)
class ToolExecution:
    """One tool call as the host ran it (or refused to).

    ``agent`` is the live agent object that issued the call, or ``None`` for a direct call
    outside any agent. ``denied`` is true when a pre-execute listener refused the call.
    """

    agent: object | None
    call_id: str
    tool: str
    arguments: object
    denied: bool = False


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What the tool returned (or the error a denied call got)."""

    content: object
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """Model-facing text attached to a finished call, labelled with who attached it.

    ``reminder`` is the guard's own ``Reminder`` when the guard attached the message (``text``
    is then its text), and ``None`` for any other plugin's context.
    """

    text: str
    source: Mapping[str, str] = field(default_factory=dict)
    reminder: Reminder | None = None


@dataclass(frozen=True, slots=True)
class Accept:
    """Let the result through; ``replacement``, when set, is what the model sees instead."""

    replacement: ToolResult | None = None
    contexts: tuple[ContextMessage, ...] = ()


@dataclass(frozen=True, slots=True)
class Block:
    """Refuse the result; the model sees ``feedback`` instead."""

    feedback: str
    contexts: tuple[ContextMessage, ...] = ()


PostExecuteDecision = Accept | Block
