"""The tally: a fold that counts what the guard saw, and a merge that adds tallies up."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyrsistent import pmap

import repeat_guard
from repeat_guard import (
    AgentDisposed,
    CodecError,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    reduce,
)
from repeat_guard.tally import (
    Tally,
    ToolTally,
    merge_tallies,
    tally,
    tally_from_json,
    tally_to_json,
)

CONFIG = GuardConfig(thresholds=(2, 4), exclude=("todo",))
AGENTS = ["a", "b", "c"]
calls = st.builds(
    ToolCallFinished,
    st.sampled_from([*AGENTS, None]),
    st.sampled_from(["grep", "read", "todo"]),
    st.sampled_from([1, 2]),
    st.booleans(),
)
events: st.SearchStrategy[Event] = (
    calls
    | st.builds(PromptSubmitted, st.sampled_from(AGENTS))
    | st.builds(AgentDisposed, st.sampled_from(AGENTS))
)


def fold(script: list[Event], config: GuardConfig = CONFIG) -> Tally:
    state, counts = GuardState.initial(config), Tally()
    for event in script:
        state, reminders = reduce(state, event)
        counts = tally(counts, state, event, reminders)
    return counts


def model(script: list[Event]) -> dict[str, object]:
    """The counts, computed the obvious way beside the guard's own reminders."""
    runs: dict[str, tuple[str, object, int]] = {}
    totals: Counter[str] = Counter()
    longest = 0
    for event in script:
        if isinstance(event, PromptSubmitted | AgentDisposed):
            runs.pop(event.agent, None)
            continue
        if not isinstance(event, ToolCallFinished) or event.agent is None:
            continue
        totals["calls"] += 1
        totals["denied"] += event.denied
        if event.tool == "todo":
            continue
        totals["tracked"] += 1
        tool, arguments, count = runs.get(event.agent, ("", None, 0))
        count = count + 1 if (tool, arguments) == (event.tool, event.arguments) else 1
        runs[event.agent] = (event.tool, event.arguments, count)
        totals["wasted"] += count >= 2
        totals["reminders"] += count in (2, 4)
        totals["gentle"] += count == 2
        totals["detailed"] += count == 4
        longest = max(longest, count)
    return {**totals, "longest_run": longest}


@given(st.lists(events, max_size=60))
def test_the_fold_agrees_with_a_model(script: list[Event]) -> None:
    counts = fold(script)
    expected = model(script)
    for name in ("calls", "denied", "tracked", "wasted", "reminders", "longest_run"):
        assert getattr(counts, name) == expected.get(name, 0), name
    assert sum(tool.calls for tool in counts.tools.values()) == counts.calls
    assert sum(tool.wasted for tool in counts.tools.values()) == counts.wasted
    forms = {form: expected[form] for form in ("gentle", "detailed") if expected.get(form)}
    assert dict(counts.reminders_by_form) == forms


def test_a_scripted_example() -> None:
    grep = ToolCallFinished("a", "grep", {"p": 1})
    script: list[Event] = [grep, grep, ToolCallFinished("a", "todo", {}), grep, grep]
    script += [ToolCallFinished("a", "read", 1, denied=True), ToolCallFinished(None, "grep", 1)]
    counts = fold(script)
    assert counts == Tally(
        calls=6,
        tracked=5,
        wasted=3,
        denied=1,
        reminders=2,
        longest_run=4,
        reminders_by_form=pmap({"gentle": 1, "detailed": 1}),
        tools=pmap(
            {
                "grep": ToolTally(4, 4, 3, 2, 4),
                "todo": ToolTally(1, 0, 0, 0, 0),
                "read": ToolTally(1, 1, 0, 0, 1),
            }
        ),
    )


def test_reminders_of_one_form_add_up() -> None:
    grep, read = ToolCallFinished("a", "grep", 1), ToolCallFinished("b", "read", 1)
    counts = fold([grep, read, grep, read, grep, grep])
    assert counts.reminders_by_form == pmap({"gentle": 2, "detailed": 1})


@st.composite
def sessions(draw: st.DrawFn) -> list[Event]:
    """A session of its own: events for agents no other session uses."""
    name = draw(st.uuids()).hex
    script = draw(st.lists(events, max_size=25))
    return [_renamed(event, name) for event in script]


def _renamed(event: Event, name: str) -> Event:
    if isinstance(event, ToolCallFinished):
        agent = None if event.agent is None else f"{name}/{event.agent}"
        return ToolCallFinished(agent, event.tool, event.arguments, event.denied)
    assert isinstance(event, PromptSubmitted | AgentDisposed)  # events() reports no results
    return type(event)(f"{name}/{event.agent}")


@given(sessions(), sessions())
def test_the_tally_of_independent_sessions_is_the_merge_of_theirs(
    first: list[Event], second: list[Event]
) -> None:
    assert fold(first + second) == merge_tallies(fold(first), fold(second))


tallies = st.lists(events, max_size=20).map(fold)


@given(tallies, tallies, tallies)
def test_merge_is_associative_and_commutative_with_an_identity(
    a: Tally, b: Tally, c: Tally
) -> None:
    assert merge_tallies(merge_tallies(a, b), c) == merge_tallies(a, merge_tallies(b, c))
    assert merge_tallies(a, b) == merge_tallies(b, a)
    assert merge_tallies(a, Tally()) == a == merge_tallies(Tally(), a)


@given(tallies)
def test_the_json_codec_round_trips(counts: Tally) -> None:
    encoded = json.loads(json.dumps(tally_to_json(counts)))
    assert tally_from_json(encoded).unwrap() == counts


GOOD = tally_to_json(fold([ToolCallFinished("a", "grep", 1)] * 2))


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"calls": -1}, "tally.calls"),
        ({"wasted": True}, "tally.wasted"),
        ({"reminders_by_form": []}, "tally.reminders_by_form"),
        ({"reminders_by_form": {"gentle": "1"}}, "tally.reminders_by_form['gentle']"),
        ({"tools": None}, "tally.tools"),
        ({"tools": {"grep": {"calls": 1}}}, "tally.tools['grep']"),
        ({"tools": {"grep": [1]}}, "tally.tools['grep']"),
    ],
)
def test_a_bad_tally_is_named(change: dict[str, object], path: str) -> None:
    error = tally_from_json({**GOOD, **change}).failure()
    assert isinstance(error, CodecError)
    assert error.path == path


def test_non_mappings_and_non_string_keys_are_refused() -> None:
    assert tally_from_json([]).failure().path == "tally"
    forms = {**GOOD, "reminders_by_form": {1: 1}}
    assert tally_from_json(forms).failure().message == "keys must be strings"
    tools = {**GOOD, "tools": {1: GOOD["tools"]["grep"]}}  # type: ignore[index]  # a dict
    assert tally_from_json(tools).failure().path == "tally.tools[1]"


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ([], CodecError("tally", [], "a tally must be a mapping")),
        (
            {**GOOD, "calls": -1},
            CodecError("tally.calls", -1, "a count must be an integer of 0 or more"),
        ),
        (
            {**GOOD, "reminders_by_form": ["gentle"]},
            CodecError("tally.reminders_by_form", ["gentle"], "must be a mapping"),
        ),
        (
            {**GOOD, "reminders_by_form": {"gentle": -2}},
            CodecError(
                "tally.reminders_by_form['gentle']", -2, "a count must be an integer of 0 or more"
            ),
        ),
        (
            {**GOOD, "reminders_by_form": {7: 1}},
            CodecError("tally.reminders_by_form", 7, "keys must be strings"),
        ),
        ({**GOOD, "tools": "grep"}, CodecError("tally.tools", "grep", "must be a mapping")),
        (
            {**GOOD, "tools": {"grep": {"calls": 1}}},
            CodecError(
                "tally.tools['grep']",
                {"calls": 1},
                f"a tool's counts are {ToolTally._fields}",
            ),
        ),
        (
            {**GOOD, "tools": {"grep": [1]}},
            CodecError("tally.tools['grep']", [1], "a tool's counts must map its fields"),
        ),
    ],
)
def test_each_problem_is_named_with_its_value_and_why(raw: object, error: CodecError) -> None:
    assert tally_from_json(raw).failure() == error


def test_the_json_shape_is_pinned() -> None:
    assert GOOD == {
        "calls": 2,
        "tracked": 2,
        "wasted": 1,
        "denied": 0,
        "reminders": 1,
        "longest_run": 2,
        "reminders_by_form": {"gentle": 1},
        "tools": {
            "grep": {"calls": 2, "tracked": 2, "wasted": 1, "reminders": 1, "longest_run": 2}
        },
    }


def test_the_tallies_are_a_module_the_package_does_not_import() -> None:
    probe = (
        "import sys, repeat_guard\n"
        "before = 'repeat_guard.tally' in sys.modules\n"
        "from repeat_guard.tally import Tally\n"
        "print(before, Tally.__module__, hasattr(repeat_guard, 'Tally'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert done.stdout.decode().split() == ["False", "repeat_guard.tally", "False"]


@pytest.mark.parametrize("name", ["Chain_", "_NO_TOOLS", "Tally"])
def test_a_name_the_package_does_not_export_is_an_attribute_error(name: str) -> None:
    # _NO_TOOLS is a private name of the tallies, and the tallies are their own module.
    with pytest.raises(AttributeError, match=rf"^module 'repeat_guard' has no attribute '{name}'$"):
        getattr(repeat_guard, name)
