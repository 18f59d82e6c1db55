"""The events a harness feeds the reducer. Frozen values, named as nouns; ``Event`` is closed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["AgentDisposed", "Event", "PromptSubmitted", "ToolCallFinished", "ToolCallReturned"]


@dataclass(frozen=True, slots=True, init=False)
class ToolCallFinished:
    """One finished tool-call attempt.

    ``arguments`` is the parsed JSON arguments, or the raw string when the model sent malformed
    argument JSON. ``agent=None`` marks a call made outside any agent (ignored). ``denied``
    marks an attempt a permission check refused; it counts like any other. ``result`` is what
    the tool returned, for ``progress = "result"`` (only its fixed-size key is kept); ``None``
    means not reported, and is never evidence of progress; nor is the result of a denied
    attempt (the refusal's text, not the tool's output), which counts as not reported.
    ``failed`` is the host's own flag that the tool failed (an error result, a raised tool):
    under ``progress = "result"`` a failure never counts as progress over an earlier failure
    of the same call, whatever either one's text (unless ``errors_are_progress``).
    """

    agent: str | None
    tool: str
    arguments: object
    denied: bool = False
    result: object = None
    failed: bool = False

    # A harness builds one of these per tool call: setting the slots directly costs half of
    # the frozen dataclass's generated __init__, which goes through object.__setattr__.
    def __init__(
        self,
        agent: str | None,
        tool: str,
        arguments: object,
        denied: bool = False,
        result: object = None,
        failed: bool = False,
    ) -> None:
        _set_agent(self, agent)
        _set_tool(self, tool)
        _set_arguments(self, arguments)
        _set_denied(self, denied)
        _set_result(self, result)
        _set_failed(self, failed)


_SetSlot = Callable[[ToolCallFinished, object], None]
_set_agent: _SetSlot = vars(ToolCallFinished)["agent"].__set__
_set_tool: _SetSlot = vars(ToolCallFinished)["tool"].__set__
_set_arguments: _SetSlot = vars(ToolCallFinished)["arguments"].__set__
_set_denied: _SetSlot = vars(ToolCallFinished)["denied"].__set__
_set_result: _SetSlot = vars(ToolCallFinished)["result"].__set__
_set_failed: _SetSlot = vars(ToolCallFinished)["failed"].__set__


@dataclass(frozen=True, slots=True)
class ToolCallReturned:
    """The result of a call already reported without one, for ``progress = "result"``.

    A harness that learns a call's result only after the call was counted (a hook that counts
    at ``PreToolUse`` and sees the result at ``PostToolUse``) reports the call with
    ``result=None`` and then this event with the same ``agent``, ``tool`` and ``arguments``.
    It fills in the result of the agent's last tracked call when that call is this one and its
    result is not yet known; the progress rule is then applied as it would have been had the
    result come with the call. Otherwise (another call since, a result already known, progress
    off, ``result=None``) it changes nothing. Under ``retry_window`` the call's place in the
    window, unknown until now, is filled in the same way, and the ``retry`` reminder that makes
    due comes back from this event: the only reminder it produces. ``failed`` is the host's flag
    that the tool failed, as on ``ToolCallFinished``.
    """

    agent: str | None
    tool: str
    arguments: object
    result: object
    failed: bool = False


@dataclass(frozen=True, slots=True)
class PromptSubmitted:
    """A user's message reached ``agent``: its chain starts over."""

    agent: str


@dataclass(frozen=True, slots=True)
class AgentDisposed:
    """``agent`` is gone: its chain is dropped."""

    agent: str


Event = ToolCallFinished | ToolCallReturned | PromptSubmitted | AgentDisposed
