"""The events a harness feeds the reducer. Frozen values, named as nouns; ``Event`` is closed."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AgentDisposed", "Event", "PromptSubmitted", "ToolCallFinished"]


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """One finished tool-call attempt.

    ``arguments`` is the parsed JSON arguments, or the raw string when the model sent malformed
    argument JSON. ``agent=None`` marks a call made outside any agent (ignored). ``denied``
    marks an attempt a permission check refused; it counts like any other. ``result`` is what
    the tool returned, for ``progress = "result"`` (only its fixed-size key is kept); ``None``
    means not reported, and is never evidence of progress.
    """

    agent: str | None
    tool: str
    arguments: object
    denied: bool = False
    result: object = None


@dataclass(frozen=True, slots=True)
class PromptSubmitted:
    """A user's message reached ``agent``: its chain starts over."""

    agent: str


@dataclass(frozen=True, slots=True)
class AgentDisposed:
    """``agent`` is gone: its chain is dropped."""

    agent: str


Event = ToolCallFinished | PromptSubmitted | AgentDisposed
