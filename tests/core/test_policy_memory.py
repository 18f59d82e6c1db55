"""What the policies remember about an agent, against what ``Memory`` says each field means.

The testing kit's model checks what the policies say (their reminders and ``admit``); this
checks what they keep between calls, which a harness stores (``encode_state``) and which must
therefore mean the same thing in every state: ``recent`` the last ``cycle_period`` tracked calls,
``runs`` the longest suffix of the tracked calls with each period, ``result`` the last tracked
call's result key, ``spent`` the calls per budget since the prompt.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from repeat_guard import (
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    argument_key,
    canonical_arguments,
    reduce,
)

TOOLS = ("grep", "read", "todo")
configs = st.builds(
    GuardConfig,
    cycle_period=st.integers(2, 4),
    progress=st.sampled_from(["off", "result"]),
    budgets=st.sampled_from([(), (("gr*", 3),), (("todo", 2), ("*", 4))]),
    exclude=st.just(("todo",)),
)
calls = st.builds(
    ToolCallFinished,
    st.just("a"),
    st.sampled_from(TOOLS),
    st.sampled_from([1, 2]),
    result=st.sampled_from([None, "ok", "error"]),
)
scripts = st.lists(calls | st.builds(PromptSubmitted, st.just("a")), max_size=30)


def longest_periodic_suffix(calls: list[tuple[str, str]], period: int) -> int:
    """The length of the longest suffix of ``calls`` in which each call equals the one
    ``period`` before it, written out the slow way."""
    return max(
        length
        for length in range(min(period, len(calls)), len(calls) + 1)
        if all(
            calls[index] == calls[index + period]
            for index in range(len(calls) - length, len(calls) - period)
        )
    )


@given(configs, scripts)
def test_the_memory_means_what_its_fields_say(
    config: GuardConfig, script: list[ToolCallFinished | PromptSubmitted]
) -> None:
    state = GuardState.initial(config)
    tracked: list[tuple[str, str]] = []
    result: str | None = None
    spent = [0] * len(config.budgets)
    for event in script:
        state, _ = reduce(state, event)
        if isinstance(event, PromptSubmitted):
            tracked, result, spent = [], None, [0] * len(config.budgets)
            continue
        for index, (_pattern, _limit) in enumerate(config.budgets):
            spent[index] += config.budget_matches(index, event.tool)
        if config.tracks(event.tool):
            tracked.append((event.tool, argument_key(canonical_arguments(event.arguments))))
            given = event.result if config.progress == "result" else None
            result = None if given is None else argument_key(canonical_arguments(given))
        memory = state.memory("a")
        assert memory.recent == tuple(tracked[-config.cycle_period :])
        runs = [longest_periodic_suffix(tracked, p) for p in range(2, config.cycle_period + 1)]
        assert memory.runs == (tuple(runs) if tracked else ())
        assert memory.result == result
        assert memory.spent == (tuple(spent) if any(spent) else ())
