"""The reference model's policies, scripted: what the kit tells a harness to expect."""

from __future__ import annotations

from repeat_guard import GuardConfig, PromptSubmitted, ToolCallFinished, ToolCallReturned
from repeat_guard_testing import ReferenceGuard


def call(tool: str, arguments: object = 1, result: object = None) -> ToolCallFinished:
    return ToolCallFinished("a", tool, arguments, result=result)


def test_the_model_finds_a_cycle_by_scanning_the_history() -> None:
    model = ReferenceGuard(GuardConfig(cycle_period=3, cycle_thresholds=(2,)))
    fired = [model.apply(c) for c in [call("w"), call("r"), call("l")] * 2]
    assert fired[-1] == [("a", "l", 2, "cycle")]
    assert [r for step in fired for r in step] == [("a", "l", 2, "cycle")]


def test_the_model_treats_a_changed_known_result_as_progress() -> None:
    model = ReferenceGuard(GuardConfig(thresholds=(2,), progress="result"))
    assert model.apply(call("poll", result="a")) == []
    assert model.apply(call("poll", result="b")) == []
    assert model.apply(call("poll")) == [("a", "poll", 2, "gentle")]


def test_the_model_speaks_for_the_first_budget_reached_and_admits_by_budget() -> None:
    model = ReferenceGuard(GuardConfig(budgets=(("g*", 1), ("*", 1)), deny_at=2))
    assert model.apply(call("grep")) == [("a", "grep", 1, "budget")]
    assert model.spent == {"a": [1, 1]}
    assert not model.admits(call("grep", 2))
    assert model.admits(ToolCallFinished(None, "grep", 1))
    model.apply(PromptSubmitted("a"))
    assert model.admits(call("grep", 2))
    model = ReferenceGuard(GuardConfig(deny_at=2))
    model.apply(call("grep"))
    assert not model.admits(call("grep"))
    assert model.admits(call("grep", 2))


def test_the_model_takes_a_result_reported_after_its_call_as_progress_when_it_changed() -> None:
    def returned(result: object) -> ToolCallReturned:
        return ToolCallReturned("a", "poll", 1, result)

    for second, expected in (("b", [("a", "poll", 2, "gentle")]), ("a", [])):
        model = ReferenceGuard(GuardConfig(thresholds=(2,), progress="result"))
        assert model.apply(call("poll")) == []
        assert model.apply(returned("a")) == []
        assert model.apply(call("poll")) == [("a", "poll", 2, "gentle")]
        assert model.apply(returned(second)) == []
        # A changed result started the chain over, so this call is the second again; the same
        # result left it at three, past the only threshold.
        assert model.apply(call("poll")) == expected
