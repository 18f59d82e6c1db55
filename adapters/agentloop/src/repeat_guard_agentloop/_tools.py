"""The tool registry: async tools by name, and the specs a model is shown."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["ToolHandler", "ToolRegistry", "ToolSpec"]

ToolHandler = Callable[[object], Awaitable[object]]
"""An async tool: takes the call's arguments, returns its content (text, or JSON data)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a model is told about a tool: its name, a description and a JSON Schema."""

    name: str
    description: str = ""
    parameters: Mapping[str, object] = field(default_factory=dict)


class ToolRegistry:
    """Async tools by name, in registration order."""

    __slots__ = ("_handlers", "_specs")

    def __init__(self) -> None:
        self._handlers: dict[str, ToolHandler] = {}
        self._specs: dict[str, ToolSpec] = {}

    def register(
        self,
        name: str,
        handler: ToolHandler,
        *,
        description: str = "",
        parameters: Mapping[str, object] | None = None,
    ) -> None:
        """Add the tool ``name``. Raises ``ValueError`` if a tool of that name exists."""
        if name in self._handlers:
            raise ValueError(f"a tool named {name!r} is already registered")
        self._handlers[name] = handler
        self._specs[name] = ToolSpec(name, description, dict(parameters or {}))

    def handler(self, name: str) -> ToolHandler | None:
        """Return the tool ``name``, or ``None`` when no such tool is registered."""
        return self._handlers.get(name)

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """Every tool's spec, in registration order."""
        return tuple(self._specs.values())
