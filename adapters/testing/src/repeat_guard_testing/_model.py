"""The reference model: the guard's rules written the obvious way, over mutable dicts.

It shares nothing with the reducer but ``canonical_arguments`` (what "identical" means is the
canonicaliser's own contract, property-tested on its own): patterns are matched by a regular
expression built here, chains are a plain dict, escalation is a linear scan, cycles are found
by scanning the whole history since the last prompt, budgets are a dict of counters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    canonical_arguments,
)
from repeat_guard.fingerprint import fingerprint

__all__ = ["Fired", "ReferenceGuard", "fired"]

Fired = tuple[str, str, int, str]
"""A reminder as the model sees it: (agent, tool, count, form)."""


def fired(reminders: Iterable[Reminder]) -> list[Fired]:
    """Return ``reminders`` as the model's tuples, to compare a harness's output with it."""
    return [(r.agent, r.tool, r.count, r.form) for r in reminders]


def _matches(pattern: str, tool: str) -> bool:
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), tool, re.DOTALL) is not None


Shown = tuple[bool, str | None]
"""A result as progress compares it: whether it failed, and its canonical text (or ``None``)."""
Seen = tuple[str, str, Shown | None]
"""A tracked call as cycles compare it: tool, canonical arguments, result (``None``: unknown)."""


# A retry window's place for a call whose result is not reported yet: no canonical (JSON) text
# holds a raw NUL.
_UNKNOWN = "\x00unknown"


def _news(before: Shown | None, after: Shown | None) -> bool:
    """Progress: both results known and different, and not both failures."""
    if before is None or after is None or before == after:
        return False
    return not (before[0] and after[0])


class ReferenceGuard:
    """A dumb, mutable guard: ``apply`` one event, get the reminders it should produce.

    ``chains`` maps each agent with a chain to (tool, canonical arguments, count). The opt-in
    policies keep ``history`` (tracked calls since the prompt, for cycles, each with its
    result as progress compares it under ``progress = "result"``, else ``None``), ``results``
    (the last tracked call's result, for progress: whether it failed, and its canonical text),
    ``earlier`` (the one before it, while the chain was the same call, for a result reported
    later) and ``spent`` (calls per budget).
    ``admits(call)`` says whether ``admit`` must let ``call`` run.
    """

    def __init__(self, config: GuardConfig) -> None:
        self.config = config
        self.chains: dict[str, tuple[str, str, int]] = {}
        self.history: dict[str, list[Seen]] = {}
        self.results: dict[str, tuple[bool, str | None] | None] = {}
        self.earlier: dict[str, tuple[bool, str | None] | None] = {}
        self.spent: dict[str, list[int]] = {}
        self.failures: dict[str, list[tuple[str, str, str | None]]] = {}

    def tracks(self, tool: str) -> bool:
        """Whether calls to ``tool`` count: included (or no include list) and not excluded."""
        config = self.config
        included = not config.include or any(_matches(p, tool) for p in config.include)
        return included and not any(_matches(p, tool) for p in config.exclude)

    def apply(self, event: Event) -> list[Fired]:
        """Apply ``event`` and return the reminders the guard must give for it."""
        if isinstance(event, PromptSubmitted | AgentDisposed):
            for memory in (
                self.chains,
                self.history,
                self.results,
                self.earlier,
                self.spent,
                self.failures,
            ):
                if memory is not self.spent or not self._keeps_budgets(event):
                    memory.pop(event.agent, None)
            return []
        if isinstance(event, ToolCallReturned):
            return self._returned(event)
        return self._call(event)

    def _keeps_budgets(self, event: PromptSubmitted | AgentDisposed) -> bool:
        """Whether ``event`` leaves the budgets' counts: a prompt, under ``budget_scope =
        "session"``."""
        return isinstance(event, PromptSubmitted) and self.config.budget_scope == "session"

    def admits(self, call: ToolCallFinished) -> bool:
        """Whether ``admit`` must let ``call`` run (``deny_at`` and spent budgets refuse)."""
        agent, tool, config = call.agent, call.tool, self.config
        if agent is None:
            return True
        deny_at = self._setting(tool, "deny_at")
        if deny_at is not None and self.tracks(tool):
            key = canonical_arguments(call.arguments)
            last_tool, last_key, count = self.chains.get(agent, ("", "", 0))
            would = count + 1 if (last_tool, last_key) == (tool, key) else 1
            if would >= deny_at:
                return False
        if config.cycle_deny_at is not None and self.tracks(tool):
            call_key: Seen = (tool, canonical_arguments(call.arguments), None)
            history = [*self.history.get(agent, []), call_key]
            if self._cycle_length(history, config.cycle_deny_at) is not None:
                return False
        spent = self.spent.get(agent, [0] * len(config.budgets))
        return not any(
            _matches(pattern, tool) and spent[index] >= limit
            for index, (pattern, limit) in enumerate(config.budgets)
        )

    def _call(self, event: ToolCallFinished) -> list[Fired]:
        agent, tool = event.agent, event.tool
        if agent is None:
            return []
        out: list[Fired] = []
        if self.tracks(tool):
            # A denied attempt did not run: its result (the refusal) is not the tool's.
            result = None if event.denied else self._shown(tool, event.result, event.failed)
            key = canonical_arguments(event.arguments)
            out += self._chain(agent, tool, key, result)
            out += self._retry(agent, (tool, key), event.failed, event.result, event.denied)
        out += self._budgets(agent, tool)
        return out

    def _setting(self, tool: str, name: str) -> Any:
        """``tool``'s setting ``name``: the first per-tool entry whose pattern matches it
        (``tools``, then the preset's) decides, with the configuration's own where that entry
        gives none, as where none matches."""
        for pattern, given in self.config.tool_policies:
            if _matches(pattern, tool):
                value = getattr(given, name)
                return getattr(self.config, name) if value is None else value
        return getattr(self.config, name)

    def _shown(self, tool: str, result: object, failed: bool) -> tuple[bool, str | None] | None:
        """A result as progress compares it, ``(failed, canonical text or None)``; ``None``
        when not known (progress off, or no result and no failure)."""
        config = self.config
        if self._setting(tool, "progress") != "result":
            return None
        failed = failed and not config.errors_are_progress
        if result is None and not failed:
            return None
        return (failed, None if result is None else canonical_arguments(fingerprint(result)))

    def _chain(
        self, agent: str, tool: str, key: str, shown: tuple[bool, str | None] | None
    ) -> list[Fired]:
        last_tool, last_key, count = self.chains.get(agent, ("", "", 0))
        before = self.results.get(agent)
        progressed = _news(before, shown)
        same = (last_tool, last_key) == (tool, key)
        count = count + 1 if same and not progressed else 1
        self.chains[agent] = (tool, key, count)
        self.earlier[agent] = before if same else None
        self.results[agent] = shown
        out: list[Fired] = []
        thresholds = sorted(self._setting(tool, "thresholds"))
        if count in thresholds:
            out.append((agent, tool, count, "gentle" if count == thresholds[0] else "detailed"))
        history = self.history.setdefault(agent, [])
        history.append((tool, key, shown))
        repeats = self._cycle(history)
        if repeats is not None:
            out.append((agent, tool, repeats, "cycle"))
        return out

    def _returned(self, event: ToolCallReturned) -> list[Fired]:
        # The last tracked call's result, reported after it: compared as if it came with it,
        # and its place in the retry window filled in (whose reminder comes now).
        agent = event.agent
        tool, key = event.tool, canonical_arguments(event.arguments)
        if agent is None or self.chains.get(agent, ("", "", 0))[:2] != (tool, key):
            return []
        shown = self._shown(event.tool, event.result, event.failed)
        if shown is not None and self.results.get(agent) is None:
            self.results[agent] = shown
            # The same call is the last one the cycles saw: its result, now known.
            self.history[agent][-1] = (tool, key, shown)
            if _news(self.earlier.get(agent), shown):
                self.chains[agent] = (tool, key, 1)
        entries = self.failures.get(agent, [])
        if event.result is None and not event.failed:
            return []  # still not known
        if not entries or entries[-1] != (tool, key, _UNKNOWN):
            return []
        entries.pop()
        return self._retry(agent, (tool, key), event.failed, event.result)

    def _cycle(self, history: list[Seen]) -> int | None:
        for period in range(2, self.config.cycle_period + 1):
            length = self._periodic(history, period)
            if length % period == 0 and length // period in self.config.cycle_thresholds:
                return length // period
        return None

    def _cycle_length(self, history: list[Seen], repetitions: int) -> int | None:
        """The shortest period whose cycle ends ``history`` ``repetitions`` times or more."""
        for period in range(2, self.config.cycle_period + 1):
            if self._periodic(history, period) >= repetitions * period:
                return period
        return None

    @staticmethod
    def _periodic(history: list[Seen], period: int) -> int:
        """How many calls at the end of ``history`` repeat with ``period`` (0 unless its last
        ``period`` calls are distinct): each the same call as the one ``period`` back, and no
        progress over it (both results known and different)."""
        if len({(tool, key) for tool, key, _ in history[-period:]}) != period:
            return 0  # too short, or a call twice in the block
        length = period
        while length < len(history):
            tool, key, result = history[-length - 1]
            later_tool, later_key, later = history[-length - 1 + period]
            if (tool, key) != (later_tool, later_key) or _news(result, later):
                break
            length += 1
        return length

    def _retry(
        self, agent: str, call: tuple[str, str], failed: bool, result: object, denied: bool = False
    ) -> list[Fired]:
        # The agent's last retry_window tracked calls, each with its failure's fingerprint (or
        # None, or _UNKNOWN while its result is not reported); a success of a call forgets its
        # failures.
        window = self.config.retry_window
        if not window:
            return []
        entries = self.failures.setdefault(agent, [])
        if not failed and not denied and result is None:
            entries.append((*call, _UNKNOWN))  # neither failed nor worked, yet
            del entries[:-window]
            return []
        if not failed and not denied:
            entries[:] = [(t, k, None if (t, k) == call else f) for t, k, f in entries]
        fails = canonical_arguments(fingerprint(result)) if failed and not denied else None
        entries.append((*call, fails))
        del entries[:-window]
        times = entries.count((*call, fails))
        run = self.chains[agent][2]
        if fails is None or times not in self.config.retry_thresholds or run >= times:
            return []
        return [(agent, call[0], times, "retry")]

    def _budgets(self, agent: str, tool: str) -> list[Fired]:
        budgets = self.config.budgets
        spent = self.spent.setdefault(agent, [0] * len(budgets))
        out: list[Fired] = []
        for index, (pattern, limit) in enumerate(budgets):
            if _matches(pattern, tool):
                spent[index] += 1
                if spent[index] == limit and len(out) == 0:
                    out.append((agent, tool, limit, "budget"))
        return out
