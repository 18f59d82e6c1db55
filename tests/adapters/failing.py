"""What the frameworks' model checks draw to check failures: calls with results, failing or not.

A framework adapter sees a call's result when the call finishes, never later, so a result the
testing kit draws as reported later (``ToolCallReturned``) is drawn as a call with its result.
One agent's calls of two tools with one argument each make the same call come back often,
failing or not, so progress and the retry window decide most steps. Refusals are left out
(``without_refusals``): an adapter refuses before the call's result exists, and a refused call's
result is the refusal, so a drawn result could not be read; the adapters' other model checks
cover refusals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st

from repeat_guard import Event, GuardConfig, ToolCallFinished, ToolCallReturned
from repeat_guard_testing import AGENTS, ARGUMENTS, FAILED, RESULTS, TOOLS, events

KNOWN_RESULTS: tuple[object, ...] = tuple(result for result in RESULTS if result is not None)
"""The kit's results but ``None``: a framework's call always has one."""


def with_its_call(event: Event) -> Event:
    """``event`` as a framework reports it: a late result as a call with it."""
    if isinstance(event, ToolCallReturned):
        return ToolCallFinished(
            event.agent, event.tool, event.arguments, result=event.result, failed=event.failed
        )
    return event


def unrefused(event: Event) -> Event:
    """``event``, never drawn refused (with ``without_refusals``, nothing is)."""
    return replace(event, denied=False) if isinstance(event, ToolCallFinished) else event


def without_refusals(config: GuardConfig) -> GuardConfig:
    """``config`` with nothing that refuses a call (``denyAt``, cycles' and tools' too, budgets)."""
    tools = tuple((pattern, replace(policy, deny_at=None)) for pattern, policy in config.tools)
    return replace(config, deny_at=None, cycle_deny_at=None, budgets=(), tools=tools)


def failing_events(arguments: Sequence[object] = ARGUMENTS[:1]) -> st.SearchStrategy[Event]:
    """One agent's calls of two tools with ``arguments``, with results, some failed; prompts
    and disposals between."""
    drawn = events(
        agents=AGENTS[:1],
        tools=TOOLS[:2],
        arguments=arguments,
        results=KNOWN_RESULTS,
        failed=FAILED,
    )
    return drawn.map(with_its_call).map(unrefused)
