"""The model seam: what the loop asks a model, what a model answers, and a scripted model.

A model adapter turns an agent's history (its own session-log events) and the tool specs into
one turn: either text, which ends the agent's turn, or a tuple of tool calls, which the loop
runs before asking again. ``ScriptedModel`` plays a fixed list of turns, for tests and demos.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ._events import Event
from ._tools import ToolSpec

__all__ = ["ModelAdapter", "ModelTurn", "ScriptExhaustedError", "ScriptedModel", "ToolCallRequest"]


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """One tool call a model asked for.

    ``arguments`` is the model's argument JSON parsed, or the raw string when that JSON was
    malformed (a raw string is still a comparable value). ``call_id`` is the model's id for the
    call; ``ScriptedModel`` numbers calls left with an empty id.
    """

    tool: str
    arguments: object
    call_id: str = ""


ModelTurn = str | tuple[ToolCallRequest, ...]
"""A model's answer: text ends the turn; a non-empty tuple of calls asks the loop to run them."""


class ModelAdapter(Protocol):
    """Anything that can answer an agent's next model request."""

    async def complete(self, messages: Sequence[Event], tools: Sequence[ToolSpec]) -> ModelTurn:
        """Return the model's next turn for ``messages`` (the agent's history so far).

        A ``ToolResult`` in ``messages`` shows the model its ``model_content``; a
        ``ContextMessage`` is injected context the model should read as a synthetic user note.
        """
        ...


class ScriptExhaustedError(RuntimeError):
    """A ``ScriptedModel`` was asked for more turns than its script holds."""


class ScriptedModel:
    """A model that plays ``turns`` in order and records every request it was given."""

    __slots__ = ("_next", "_turns", "requests")

    def __init__(self, turns: Iterable[ModelTurn]) -> None:
        self._turns = tuple(_numbered(turns))
        self._next = 0
        self.requests: list[tuple[tuple[Event, ...], tuple[ToolSpec, ...]]] = []
        """Each request's messages and tool specs, in the order the loop asked."""

    @property
    def remaining(self) -> int:
        """How many scripted turns have not been played yet."""
        return len(self._turns) - self._next

    async def complete(self, messages: Sequence[Event], tools: Sequence[ToolSpec]) -> ModelTurn:
        """Return the next scripted turn.

        Raises ``ScriptExhaustedError`` when every turn has been played.
        """
        self.requests.append((tuple(messages), tuple(tools)))
        if self._next >= len(self._turns):
            raise ScriptExhaustedError(
                f"the scripted model has no turn left: all {len(self._turns)} were played "
                "and the loop asked for another (end the script with a text turn)"
            )
        turn = self._turns[self._next]
        self._next += 1
        return turn


def _numbered(turns: Iterable[ModelTurn]) -> Iterable[ModelTurn]:
    """Give every call without an id the id ``call_<n>``, ``n`` counting the script's calls."""
    count = 0
    for turn in turns:
        if isinstance(turn, str):
            yield turn
            continue
        numbered: list[ToolCallRequest] = []
        for request in turn:
            count += 1
            call_id = request.call_id or f"call_{count}"
            numbered.append(ToolCallRequest(request.tool, request.arguments, call_id))
        yield tuple(numbered)
