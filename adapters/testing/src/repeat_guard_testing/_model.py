"""The reference model: the guard's rules written the obvious way, over a mutable dict.

It shares nothing with the reducer but ``canonical_arguments`` (what "identical" means is the
canonicaliser's own contract, property-tested on its own): patterns are matched by a regular
expression built here, chains are a plain dict, escalation is a linear scan.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    canonical_arguments,
)

__all__ = ["Fired", "ReferenceGuard", "fired"]

Fired = tuple[str, str, int, str]
"""A reminder as the model sees it: (agent, tool, count, form)."""


def fired(reminders: Iterable[Reminder]) -> list[Fired]:
    """Return ``reminders`` as the model's tuples, to compare a harness's output with it."""
    return [(r.agent, r.tool, r.count, r.form) for r in reminders]


def _matches(pattern: str, tool: str) -> bool:
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), tool, re.DOTALL) is not None


class ReferenceGuard:
    """A dumb, mutable guard: ``apply`` one event, get the reminders it should produce.

    ``chains`` maps each agent with a chain to (tool, canonical arguments, count).
    """

    def __init__(self, config: GuardConfig) -> None:
        self.config = config
        self.chains: dict[str, tuple[str, str, int]] = {}

    def tracks(self, tool: str) -> bool:
        """Whether calls to ``tool`` count: included (or no include list) and not excluded."""
        config = self.config
        included = not config.include or any(_matches(p, tool) for p in config.include)
        return included and not any(_matches(p, tool) for p in config.exclude)

    def apply(self, event: Event) -> list[Fired]:
        """Apply ``event`` and return the reminders the guard must give for it."""
        if isinstance(event, PromptSubmitted | AgentDisposed):
            self.chains.pop(event.agent, None)
            return []
        return self._call(event)

    def _call(self, event: ToolCallFinished) -> list[Fired]:
        agent, tool = event.agent, event.tool
        if agent is None or not self.tracks(tool):
            return []
        key = canonical_arguments(event.arguments)
        last_tool, last_key, count = self.chains.get(agent, ("", "", 0))
        count = count + 1 if (last_tool, last_key) == (tool, key) else 1
        self.chains[agent] = (tool, key, count)
        thresholds = sorted(self.config.thresholds)
        if count not in thresholds:
            return []
        return [(agent, tool, count, "gentle" if count == thresholds[0] else "detailed")]
