"""``budgetScope``: name budgets counted since the last prompt (the default) or over the
agent's whole session, scripted through the public API."""

from __future__ import annotations

from repeat_guard import (
    Admit,
    AgentDisposed,
    Deny,
    GuardConfig,
    GuardState,
    Memory,
    PromptSubmitted,
    ToolCallFinished,
    admit,
    parse_config,
    reduce,
)


def read(line: int) -> ToolCallFinished:
    return ToolCallFinished("a", "read_file", {"line": line})


def test_a_session_budget_counts_across_prompts_while_the_chains_start_over() -> None:
    state = GuardState.initial(GuardConfig(budgets=(("read_*", 3),), budget_scope="session"))
    for line in range(2):
        state, _ = reduce(state, read(line))
    state, _ = reduce(state, PromptSubmitted("a"))
    assert state.chain("a") is None
    assert state.memory("a") == Memory(spent=(2,))
    state, reminders = reduce(state, read(2))
    assert [(r.form, r.count) for r in reminders] == [("budget", 3)]
    assert "in this session, which is the budget for them" in reminders[0].text
    verdict = admit(state, read(3))
    assert isinstance(verdict, Deny)
    assert "matching `read_*` in this session is spent" in verdict.reason
    # A disposed agent is gone: its counts go with it.
    state, _ = reduce(state, AgentDisposed("a"))
    assert isinstance(admit(state, read(3)), Admit)
    assert state.memories == {}


def test_a_prompt_budget_starts_over_at_each_prompt_as_before() -> None:
    state = GuardState.initial(GuardConfig(budgets=(("read_*", 2),)))
    state, reminders = reduce(state, read(0))
    state, reminders = reduce(state, read(1))
    assert "since the user's last message, which is the budget" in reminders[0].text
    verdict = admit(state, read(2))
    assert isinstance(verdict, Deny)
    assert "since the user's last message is spent" in verdict.reason
    state, _ = reduce(state, PromptSubmitted("a"))
    assert state.memories == {}
    assert isinstance(admit(state, read(2)), Admit)


def test_under_a_session_scope_a_prompt_with_nothing_spent_leaves_no_memory() -> None:
    config = GuardConfig(budgets=(("grep", 2),), budget_scope="session", cycle_period=2)
    state, _ = reduce(GuardState.initial(config), read(0))
    assert state.memory("a").recent
    state, _ = reduce(state, PromptSubmitted("a"))
    assert state.memories == {}


def test_budget_scope_parses_round_trips_and_names_a_bad_value() -> None:
    config = parse_config({"budgets": {"Bash": 20}, "budgetScope": "session"}).unwrap()
    assert config.budget_scope == "session"
    assert config.to_mapping()["budgetScope"] == "session"
    assert parse_config(config.to_mapping()).unwrap() == config
    assert "budgetScope" not in GuardConfig().to_mapping()
    error = parse_config({"budget_scope": "turn"}).failure()
    assert (error.key, error.value) == ("budgetScope", "turn")
    assert error.message == "budgetScope must be 'prompt' or 'session', got 'turn'"
