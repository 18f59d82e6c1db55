"""What the policies remember about an agent, against what ``Memory`` says each field means.

The testing kit's model checks what the policies say (their reminders and ``admit``); this
checks what they keep between calls, which a harness stores (``encode_state``) and which must
therefore mean the same thing in every state: ``recent`` the last ``cycle_period`` tracked calls,
``runs`` the longest suffix of the tracked calls with each period (under ``progress = "result"``,
a call repeats the one a period back only when it made no progress over it), ``result`` the
last tracked call's result key (reported with it or after it), ``earlier`` the one before while
both were the same call, ``spent`` the calls per budget since the prompt.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from repeat_guard import (
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    ToolCallReturned,
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
returns = st.builds(
    ToolCallReturned,
    st.just("a"),
    st.sampled_from(TOOLS),
    st.sampled_from([1, 2]),
    st.sampled_from([None, "ok", "error"]),
)
scripts = st.lists(calls | returns | st.builds(PromptSubmitted, st.just("a")), max_size=30)


def result_key(config: GuardConfig, result: object) -> str | None:
    if config.progress != "result" or result is None:
        return None
    return argument_key(canonical_arguments(result))


def made_progress(before: str | None, after: str | None) -> bool:
    """Progress by the run rule: both results known and different (no call here fails)."""
    return before is not None and after is not None and before != after


def longest_periodic_suffix(
    calls: list[tuple[str, str]], results: list[str | None], period: int
) -> int:
    """The length of the longest suffix of ``calls`` in which each call equals the one
    ``period`` before it and made no progress over it, written out the slow way."""
    return max(
        length
        for length in range(min(period, len(calls)), len(calls) + 1)
        if all(
            calls[index] == calls[index + period]
            and not made_progress(results[index], results[index + period])
            for index in range(len(calls) - length, len(calls) - period)
        )
    )


@given(configs, scripts)
def test_the_memory_means_what_its_fields_say(
    config: GuardConfig, script: list[ToolCallFinished | ToolCallReturned | PromptSubmitted]
) -> None:
    state = GuardState.initial(config)
    tracked: list[tuple[str, str]] = []
    results: list[str | None] = []  # each tracked call's result key, as known now
    result: str | None = None
    earlier: str | None = None
    spent = [0] * len(config.budgets)
    for event in script:
        state, _ = reduce(state, event)
        if isinstance(event, PromptSubmitted):
            tracked, results, result, earlier = [], [], None, None
            spent = [0] * len(config.budgets)
            continue
        call = (event.tool, argument_key(canonical_arguments(event.arguments)))
        if isinstance(event, ToolCallReturned):
            if tracked and tracked[-1] == call and result is None:
                result = results[-1] = result_key(config, event.result)
        else:
            for index, (_pattern, _limit) in enumerate(config.budgets):
                spent[index] += config.budget_matches(index, event.tool)
            if config.tracks(event.tool):
                earlier = result if tracked and tracked[-1] == call else None
                tracked.append(call)
                result = result_key(config, event.result)
                results.append(result)
        memory = state.memory("a")
        assert memory.recent == tuple(tracked[-config.cycle_period :])
        runs = [
            longest_periodic_suffix(tracked, results, p) for p in range(2, config.cycle_period + 1)
        ]
        assert memory.runs == (tuple(runs) if tracked else ())
        assert memory.result == result
        assert memory.earlier == earlier
        assert memory.spent == (tuple(spent) if any(spent) else ())
