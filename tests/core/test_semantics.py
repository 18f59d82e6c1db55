"""The design note's rules, one scripted example each, through the public API only."""

from __future__ import annotations

import copy

from repeat_guard import (
    AgentDisposed,
    Chain,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    reduce,
)

GREP = ToolCallFinished("a", "grep", {"pattern": "TODO"})


def run(state: GuardState, *events: Event) -> tuple[GuardState, list[Reminder]]:
    fired: list[Reminder] = []
    for event in events:
        state, reminders = reduce(state, event)
        fired.extend(reminders)
    return state, fired


def counts(fired: list[Reminder]) -> list[tuple[int, str]]:
    return [(r.count, r.form) for r in fired]


def test_identical_calls_count_and_fire_at_each_threshold() -> None:
    state, fired = run(GuardState.initial(), *[GREP] * 9)
    assert counts(fired) == [(3, "gentle"), (5, "detailed"), (8, "detailed")]
    chain = state.chain("a")
    assert chain is not None
    assert chain.repeats == 9


def test_a_different_tracked_call_starts_a_new_chain() -> None:
    other = ToolCallFinished("a", "grep", {"pattern": "FIXME"})
    state, fired = run(GuardState.initial(), GREP, GREP, other, GREP, GREP)
    assert fired == []
    chain = state.chain("a")
    assert chain is not None
    assert chain.repeats == 2


def test_same_arguments_under_another_tool_is_another_chain() -> None:
    read = ToolCallFinished("a", "read", {"pattern": "TODO"})
    _, fired = run(GuardState.initial(), GREP, GREP, read, read, read)
    assert [(r.tool, r.count) for r in fired] == [("read", 3)]


def test_gentle_is_keyed_to_the_first_threshold() -> None:
    state = GuardState.initial(GuardConfig(thresholds=(4, 2)))
    _, fired = run(state, *[GREP] * 5)
    assert counts(fired) == [(2, "gentle"), (4, "detailed")]


def test_nothing_fires_past_the_last_threshold() -> None:
    state = GuardState.initial(GuardConfig(thresholds=(2,)))
    state, fired = run(state, *[GREP] * 50)
    assert counts(fired) == [(2, "gentle")]
    assert state.chain("a") == ("grep", '{"pattern":"TODO"}', 50)


def test_gentle_text_quotes_no_arguments_and_detailed_names_everything() -> None:
    _, fired = run(GuardState.initial(), *[GREP] * 5)
    gentle, detailed = fired
    assert "exact same" in gentle.text
    assert "different" in gentle.text
    assert "TODO" not in gentle.text
    assert "grep" not in gentle.text
    assert "`grep`" in detailed.text
    assert "5 times" in detailed.text
    assert '{"pattern":"TODO"}' in detailed.text
    assert "no progress" in detailed.text
    assert "finish" in detailed.text


def test_reminder_summary_source_and_agent() -> None:
    _, fired = run(GuardState.initial(), *[GREP] * 3)
    (reminder,) = fired
    assert reminder.agent == "a"
    assert reminder.summary == "grep × 3"
    assert reminder.source == {"kind": "plugin", "plugin": "repeat-tool-guard"}
    reminder.source["kind"] = "changed"  # a fresh dict each time: the label cannot be corrupted
    assert reminder.source["kind"] == "plugin"
    assert reminder.arguments == '{"pattern":"TODO"}'


def test_preview_is_cut_and_marked_while_detection_uses_the_full_text() -> None:
    config = GuardConfig(thresholds=(2, 3), arguments_preview_chars=24)
    body = "x" * 400
    call = ToolCallFinished("a", "write", {"body": body})
    almost = ToolCallFinished("a", "write", {"body": body[:-1] + "y"})
    state, fired = run(GuardState.initial(config), call, call, call)
    assert counts(fired) == [(2, "gentle"), (3, "detailed")]
    canonical = '{"body":"' + body + '"}'
    assert f"{canonical[:24]}… (+{len(canonical) - 24} more chars)" in fired[1].text
    # the preview is identical for both bodies, yet they are different calls
    _, fired = run(state, almost, almost)
    assert counts(fired) == [(2, "gentle")]


def test_preview_is_not_marked_when_it_fits() -> None:
    config = GuardConfig(thresholds=(2, 3), arguments_preview_chars=18)
    _, fired = run(GuardState.initial(config), *[GREP] * 3)
    assert '{"pattern":"TODO"}\n' in fired[1].text
    assert "more chars" not in fired[1].text


def test_excluded_calls_are_transparent() -> None:
    config = GuardConfig(exclude=("todo_write",))
    todo = ToolCallFinished("a", "todo_write", {"items": [1]})
    _, fired = run(GuardState.initial(config), GREP, todo, GREP, todo, todo, GREP)
    assert counts(fired) == [(3, "gentle")]
    _, fired = run(GuardState.initial(config), *[todo] * 5)
    assert fired == []


def test_include_tracks_only_matching_tools() -> None:
    config = GuardConfig(thresholds=(2,), include=("pro*",))
    probe = ToolCallFinished("a", "probe", {})
    grep_twice = [GREP, GREP]
    _, fired = run(GuardState.initial(config), probe, *grep_twice, probe)
    assert [(r.tool, r.count) for r in fired] == [("probe", 2)]


def test_exclude_wins_over_include() -> None:
    config = GuardConfig(thresholds=(2,), include=("*",), exclude=("grep",))
    _, fired = run(GuardState.initial(config), GREP, GREP)
    assert fired == []


def test_a_dot_in_a_pattern_is_literal_and_star_spans_any_run() -> None:
    config = GuardConfig(thresholds=(2,), exclude=("mcp.*", "a*b"))
    for tool, tracked in [
        ("mcp.fs", False),
        ("mcpXfs", True),
        ("mcp.", False),
        ("ab", False),
        ("a.x.b", False),
        ("abc", True),
        ("xmcp.fs", True),
    ]:
        call = ToolCallFinished("a", tool, {})
        _, fired = run(GuardState.initial(config), call, call)
        assert bool(fired) is tracked, tool
        assert config.tracks(tool) is tracked


def test_a_pattern_matching_no_tool_is_valid() -> None:
    config = GuardConfig(exclude=("mcp_*",))
    _, fired = run(GuardState.initial(config), *[GREP] * 3)
    assert len(fired) == 1


def test_chains_are_per_agent() -> None:
    b_grep = ToolCallFinished("b", "grep", {"pattern": "TODO"})
    state, fired = run(GuardState.initial(), GREP, b_grep, GREP, b_grep, GREP)
    assert [(r.agent, r.count) for r in fired] == [("a", 3)]
    chain = state.chain("b")
    assert chain is not None
    assert chain.repeats == 2


def test_a_prompt_resets_that_agent_only() -> None:
    b_grep = ToolCallFinished("b", "grep", {"pattern": "TODO"})
    state, _ = run(GuardState.initial(), GREP, GREP, b_grep, b_grep)
    state, fired = run(state, PromptSubmitted("a"), GREP, b_grep)
    assert [(r.agent, r.count) for r in fired] == [("b", 3)]
    chain = state.chain("a")
    assert chain is not None
    assert chain.repeats == 1


def test_a_disposed_agent_is_dropped_and_its_id_starts_over() -> None:
    state, _ = run(GuardState.initial(), GREP, GREP)
    assert len(state) == 1
    state, _ = run(state, AgentDisposed("a"))
    assert len(state) == 0
    assert state == GuardState.initial()
    state, _ = run(state, GREP)
    chain = state.chain("a")
    assert chain is not None
    assert chain.repeats == 1


def test_denied_calls_count_like_any_other() -> None:
    denied = ToolCallFinished("a", "rm", {"path": "/"}, denied=True)
    allowed = ToolCallFinished("a", "rm", {"path": "/"})
    _, fired = run(GuardState.initial(), denied, allowed, denied)
    assert counts(fired) == [(3, "gentle")]


def test_agentless_calls_are_ignored() -> None:
    state, _ = run(GuardState.initial(), GREP, GREP)
    nobody = ToolCallFinished(None, "grep", {"pattern": "TODO"})
    after, fired = run(state, *[nobody] * 10)
    assert fired == []
    assert after is state


def test_malformed_argument_json_compares_as_its_raw_string() -> None:
    raw = ToolCallFinished("a", "grep", '{"pattern": "TO')
    _, fired = run(GuardState.initial(), raw, raw, raw)
    assert counts(fired) == [(3, "gentle")]


def test_key_order_is_irrelevant_at_any_depth() -> None:
    one = ToolCallFinished("a", "edit", {"b": {"y": 1, "x": [{"q": 1, "p": 2}]}, "a": 0})
    two = ToolCallFinished("a", "edit", {"a": 0, "b": {"x": [{"p": 2, "q": 1}], "y": 1}})
    _, fired = run(GuardState.initial(), one, two, one)
    assert counts(fired) == [(3, "gentle")]


def test_states_compare_by_value_however_they_were_reached() -> None:
    start = GuardState.initial()
    direct, _ = run(start, GREP)
    detour, _ = run(start, ToolCallFinished("a", "ls", {}), PromptSubmitted("a"), GREP)
    assert direct == detour
    assert hash(direct) == hash(detour)
    assert run(direct, PromptSubmitted("zzz"))[0] == direct
    assert run(direct, AgentDisposed("zzz"))[0] == direct
    assert direct != start
    assert direct != GuardState.initial(GuardConfig(thresholds=(2,)))
    assert direct.__eq__("not a state") is NotImplemented
    assert "grep" in repr(direct)
    assert repr(start) == f"GuardState(config={start.config!r}, chains={{}})"


def test_many_agents_spill_out_of_the_recent_slots_and_back() -> None:
    agents = [f"agent-{n}" for n in range(20)]
    state = GuardState.initial()
    fired: list[Reminder] = []
    for _ in range(3):
        for agent in agents:
            state, reminders = reduce(state, ToolCallFinished(agent, "grep", {"n": agent}))
            fired.extend(reminders)
    assert sorted(r.agent for r in fired) == sorted(agents)
    assert len(state) == 20
    assert set(state.chains) == set(agents)
    for agent in agents[::2]:
        state, _ = reduce(state, AgentDisposed(agent))
    assert set(state.chains) == set(agents[1::2])
    same = GuardState.initial()
    for agent in reversed(agents[1::2]):
        for _ in range(3):
            same, _ = reduce(same, ToolCallFinished(agent, "grep", {"n": agent}))
    assert same == state


def test_thousands_of_agents_pass_through_every_layer_of_the_state() -> None:
    agents = [f"agent-{n}" for n in range(8_300)]  # more than the two dicts hold
    state = GuardState.initial()
    for agent in agents:
        state, _ = reduce(state, ToolCallFinished(agent, "grep", {"n": 1}))
    for agent in agents[:10]:
        state, reminders = reduce(state, ToolCallFinished(agent, "grep", {"n": 1}))
        assert reminders == ()
        assert state.chain(agent) == Chain("grep", '{"n":1}', 2)
    assert len(state) == len(state.chains) == 8_300
    assert state.chain(agents[-1]) == Chain("grep", '{"n":1}', 1)
    assert state.chain("nobody") is None
    for agent in (agents[0], agents[1_000], agents[-1]):
        state, _ = reduce(state, AgentDisposed(agent))
        assert state.chain(agent) is None
    assert len(state) == 8_297
    rebuilt = GuardState.from_chains(state.config, dict(state.chains))
    assert rebuilt == state
    assert hash(rebuilt) == hash(state)


def test_reduce_never_mutates_its_inputs() -> None:
    arguments = {"b": [3, {"z": 1, "y": 2}], "a": 1.0}
    pristine = copy.deepcopy(arguments)
    event = ToolCallFinished("a", "edit", arguments)
    state, _ = run(GuardState.initial(), event, event)
    before = state.chains
    after, _ = run(state, event, PromptSubmitted("b"), AgentDisposed("c"))
    assert arguments == pristine
    assert list(arguments) == ["b", "a"]
    assert state.chains == before
    assert after != state


def test_default_config() -> None:
    config = GuardConfig()
    assert config.thresholds == (3, 5, 8)
    assert config.include == ()
    assert config.exclude == ()
    assert config.arguments_preview_chars == 500
    assert GuardState.initial().config == config
