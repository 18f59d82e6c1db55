"""The guard plugin through a real plugin manager: counting, folding, agents and failing open."""

from __future__ import annotations

import gc
import logging
from dataclasses import FrozenInstanceError

import pluggy
import pytest

from repeat_guard import Event, GuardConfig, GuardState, Reminder, ToolCallFinished, reduce
from repeat_guard_pluggy import (
    Accept,
    Block,
    ContextMessage,
    GuardConfigError,
    RepeatGuardPlugin,
    ToolExecution,
    ToolResult,
    fold_reminders,
    hookspecs,
)

from ._support import (
    GREP,
    Agent,
    SlottedAgent,
    answering,
    execute,
    guarded,
    raising,
    repeat,
    summaries,
)

HOOK_CONTEXT = ContextMessage("hook says hi", {"kind": "hook", "hook": "post-tool-use"})


# -- escalation ---------------------------------------------------------------------------


def test_default_escalation_is_gentle_at_three_and_detailed_at_five() -> None:
    pm, _ = guarded()
    agent = Agent()
    decisions = [execute(pm, agent) for _ in range(5)]
    assert [d is None for d in decisions] == [True, True, False, True, False]
    third, fifth = decisions[2], decisions[4]
    assert isinstance(third, Accept)
    assert isinstance(fifth, Accept)
    (gentle,) = third.contexts
    (detailed,) = fifth.contexts
    assert gentle.reminder is not None
    assert gentle.reminder.form == "gentle"
    assert "grep" not in gentle.text
    assert detailed.reminder is not None
    assert detailed.reminder.form == "detailed"
    assert "`grep` 5 times" in detailed.text
    assert '{"path":"src","pattern":"TODO"}' in detailed.text


def test_the_context_carries_the_guard_label_and_the_reminder_itself() -> None:
    pm, guard = guarded()
    agent = Agent()
    decision = [execute(pm, agent) for _ in range(3)][-1]
    assert decision is not None
    (context,) = decision.contexts
    assert context.source == {"kind": "plugin", "plugin": "repeat-tool-guard"}
    assert context.reminder is not None
    assert context.reminder == Reminder(
        guard.agent_id(agent) or "",
        "grep",
        3,
        "gentle",
        context.text,
        '{"path":"src","pattern":"TODO"}',
    )


def test_thresholds_come_from_a_config_mapping() -> None:
    pm, guard = guarded(config={"thresholds": [4, 2]})
    agent = Agent()
    assert guard.config.thresholds == (2, 4)
    assert repeat(4, lambda: execute(pm, agent)) == [[], ["grep × 2"], [], ["grep × 4"]]


def test_a_different_call_resets_and_excluded_tools_are_transparent() -> None:
    pm, _ = guarded(config={"exclude": ["todo_*"]})
    agent = Agent()
    execute(pm, agent)
    execute(pm, agent, "todo_write", {"items": []})
    assert summaries(execute(pm, agent)) == []
    assert summaries(execute(pm, agent)) == ["grep × 3"]
    execute(pm, agent, "grep", {"pattern": "FIXME"})
    assert repeat(2, lambda: execute(pm, agent)) == [[], []]


def test_denied_calls_count() -> None:
    pm, _ = guarded()
    agent = Agent()
    assert repeat(3, lambda: execute(pm, agent, denied=True)) == [[], [], ["grep × 3"]]


def test_a_tool_error_is_a_failure_and_a_denial_is_not() -> None:
    # Under progress = "result", errors whose text changes are no progress over each other.
    pm, _ = guarded(config={"thresholds": [3], "progress": "result"})
    agent = Agent()
    decisions = []
    for line in range(3):
        execution = ToolExecution(agent, f"call-{line}", "make", {}, False)
        error = ToolResult(f"Makefile:{line}: *** missing separator", is_error=True)
        decisions.append(pm.hook.tool_post_execute(execution=execution, result=error))
    assert [d is None for d in decisions] == [True, True, False]
    seen: list[Event] = []

    def recording(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
        seen.append(event)
        return reduce(state, event)

    pm, _ = guarded(reducer=recording)
    refused = ToolExecution(agent, "call-9", "make", {}, True)
    pm.hook.tool_post_execute(execution=refused, result=ToolResult("refused", is_error=True))
    assert [(e.denied, e.failed) for e in seen if isinstance(e, ToolCallFinished)] == [
        (True, False)
    ]


def test_agents_keep_separate_chains() -> None:
    pm, guard = guarded()
    first, second = Agent("first"), Agent("second")
    seen = [(summaries(execute(pm, first)), summaries(execute(pm, second))) for _ in range(3)]
    assert seen == [([], []), ([], []), (["grep × 3"], ["grep × 3"])]
    assert guard.agent_id(first) != guard.agent_id(second)
    assert guard.known_agents == 2


# -- folding onto the downstream decision --------------------------------------------------


def test_no_reminder_passes_the_downstream_decision_through_unchanged() -> None:
    downstream = Block("denied by policy", (HOOK_CONTEXT,))
    pm, _ = guarded(answering(downstream))
    agent = Agent()
    assert execute(pm, agent) is downstream
    assert execute(pm, agent) is downstream


def test_reminder_folds_onto_a_downstream_block() -> None:
    pm, _ = guarded(answering(Block("denied by policy", (HOOK_CONTEXT,))))
    agent = Agent()
    decision = [execute(pm, agent) for _ in range(3)][-1]
    assert isinstance(decision, Block)
    assert decision.feedback == "denied by policy"
    guard_context, hook_context = decision.contexts
    assert guard_context.source["plugin"] == "repeat-tool-guard"
    assert hook_context is HOOK_CONTEXT


def test_reminder_folds_onto_a_downstream_replacement() -> None:
    replacement = ToolResult("[redacted]")
    pm, _ = guarded(answering(Accept(replacement, (HOOK_CONTEXT,))))
    agent = Agent()
    decision = [execute(pm, agent) for _ in range(3)][-1]
    assert isinstance(decision, Accept)
    assert decision.replacement is replacement
    assert [c.source.get("plugin", c.source["kind"]) for c in decision.contexts] == [
        "repeat-tool-guard",
        "hook",
    ]


def test_contexts_of_several_downstream_plugins_keep_their_order_after_the_guard() -> None:
    other = ContextMessage("second", {"kind": "plugin", "plugin": "other"})
    pm, _ = guarded(answering(Accept(contexts=(HOOK_CONTEXT, other))))
    agent = Agent()
    decision = [execute(pm, agent) for _ in range(3)][-1]
    assert decision is not None
    assert decision.contexts[1:] == (HOOK_CONTEXT, other)


def test_none_from_downstream_becomes_an_accept_carrying_the_reminder() -> None:
    pm, _ = guarded(answering(None))
    agent = Agent()
    decisions = [execute(pm, agent) for _ in range(3)]
    assert decisions[:2] == [None, None]
    assert isinstance(decisions[2], Accept)
    assert decisions[2].replacement is None
    assert summaries(decisions[2]) == ["grep × 3"]


def test_fold_reminders_copies_and_leaves_the_original_alone() -> None:
    _, reminders = reduce(GuardState.initial(GuardConfig(thresholds=(2,))), _call("a"))
    _, reminders = reduce(
        reduce(GuardState.initial(GuardConfig(thresholds=(2,))), _call("a"))[0], _call("a")
    )
    original = Block("no", (HOOK_CONTEXT,))
    folded = fold_reminders(original, reminders)
    assert original.contexts == (HOOK_CONTEXT,)
    assert [c.reminder for c in folded.contexts] == [reminders[0], None]
    assert isinstance(folded, Block)
    with pytest.raises(FrozenInstanceError):
        folded.feedback = "yes"  # type: ignore[misc]  # proving the value is frozen


def _call(agent: str) -> Event:
    return ToolCallFinished(agent, "grep", GREP)


# -- agents: no agent, prompts, disposal, collection ---------------------------------------


def test_agentless_executions_neither_fail_nor_count() -> None:
    pm, guard = guarded()
    assert repeat(6, lambda: execute(pm, None)) == [[]] * 6
    assert len(guard.state) == 0
    assert guard.known_agents == 0


def test_a_prompt_starts_the_chain_over() -> None:
    pm, guard = guarded()
    agent = Agent()
    execute(pm, agent)
    execute(pm, agent)
    pm.hook.agent_prompt_submit(agent=agent, prompt="try the tests instead")
    assert guard.state.chain(guard.agent_id(agent) or "") is None
    assert repeat(3, lambda: execute(pm, agent)) == [[], [], ["grep × 3"]]


def test_a_prompt_for_an_unknown_agent_changes_nothing() -> None:
    pm, guard = guarded()
    before = guard.state
    pm.hook.agent_prompt_submit(agent=Agent(), prompt="hello")
    assert guard.state is before
    assert guard.known_agents == 0


def test_a_disposed_agent_is_forgotten_and_starts_over() -> None:
    pm, guard = guarded()
    agent = Agent()
    execute(pm, agent)
    execute(pm, agent)
    first_id = guard.agent_id(agent)
    pm.hook.agent_dispose(agent=agent)
    assert guard.agent_id(agent) is None
    assert guard.known_agents == 0
    assert len(guard.state) == 0
    assert repeat(3, lambda: execute(pm, agent)) == [[], [], ["grep × 3"]]
    assert guard.agent_id(agent) not in {None, first_id}


def test_disposing_an_unknown_agent_changes_nothing() -> None:
    pm, guard = guarded()
    execute(pm, Agent("kept"))
    before = guard.state
    pm.hook.agent_dispose(agent=Agent("stranger"))
    assert guard.state is before


def test_a_collected_agent_leaves_no_chain_and_no_id() -> None:
    pm, guard = guarded()
    survivor, doomed = Agent("survivor"), Agent("doomed")
    doomed.cycle = doomed  # type: ignore[attr-defined]  # a cycle: only the collector frees it
    execute(pm, survivor)
    execute(pm, doomed)
    assert len(guard.state) == 2
    del doomed
    gc.collect()
    assert guard.known_agents == 1
    assert list(guard.state.chains) == [guard.agent_id(survivor)]


def test_a_disposed_then_collected_agent_is_dropped_once() -> None:
    seen: list[Event] = []

    def recording(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
        seen.append(event)
        return reduce(state, event)

    pm, guard = guarded(reducer=recording)
    agent = Agent()
    execute(pm, agent)
    pm.hook.agent_dispose(agent=agent)
    del agent
    gc.collect()
    assert len(guard.state) == 0
    assert [type(event).__name__ for event in seen] == ["ToolCallFinished", "AgentDisposed"]


def test_many_short_lived_agents_leave_nothing_behind() -> None:
    pm, guard = guarded()
    for n in range(100_000):
        agent = Agent()
        execute(pm, agent, arguments={"n": n % 7})
        if n % 3 == 0:
            agent.cycle = agent  # type: ignore[attr-defined]  # some are freed only by gc
    del agent
    gc.collect()
    assert guard.known_agents == 0
    assert len(guard.state) == 0
    assert guard.agent_id(Agent()) is None


def test_agents_without_weakref_support_are_held_until_disposed() -> None:
    pm, guard = guarded()
    agent = SlottedAgent()
    assert [summaries(execute(pm, agent)) for _ in range(3)] == [[], [], ["grep × 3"]]
    agent_id = guard.agent_id(agent)
    del agent
    gc.collect()
    assert guard.known_agents == 1
    assert agent_id in guard.state.chains
    (held,) = [a for a in gc.get_objects() if isinstance(a, SlottedAgent)]
    pm.hook.agent_dispose(agent=held)
    assert guard.known_agents == 0
    assert len(guard.state) == 0


# -- failing open, and downstream failures ------------------------------------------------


def _broken(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
    raise RuntimeError("reducer bug")


def test_a_failing_guard_logs_once_and_passes_the_downstream_decision(
    caplog: pytest.LogCaptureFixture,
) -> None:
    downstream = Accept(ToolResult("replaced"), (HOOK_CONTEXT,))
    pm, guard = guarded(answering(downstream), reducer=_broken)
    with caplog.at_level(logging.ERROR, logger="repeat_guard_pluggy"):
        decision = execute(pm, Agent())
    assert decision is downstream
    (record,) = caplog.records
    assert record.name == "repeat_guard_pluggy"
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == "reducer bug"
    assert len(guard.state) == 0


def test_a_failing_guard_never_breaks_prompts_or_disposal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pm, guard = guarded(reducer=_broken)
    agent = Agent()
    with caplog.at_level(logging.ERROR, logger="repeat_guard_pluggy"):
        assert execute(pm, agent) is None
        pm.hook.agent_prompt_submit(agent=agent, prompt="again")
        pm.hook.agent_dispose(agent=agent)
    assert len(caplog.records) == 3
    assert guard.known_agents == 0


def test_a_failing_disposal_of_a_collected_agent_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def no_disposals(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
        if type(event).__name__ == "AgentDisposed":
            raise RuntimeError("disposal bug")
        return reduce(state, event)

    pm, guard = guarded(reducer=no_disposals)
    doomed, survivor = Agent(), Agent()
    execute(pm, doomed)
    del doomed
    gc.collect()
    with caplog.at_level(logging.ERROR, logger="repeat_guard_pluggy"):
        execute(pm, survivor)
        assert repeat(2, lambda: execute(pm, survivor)) == [[], ["grep × 3"]]
    assert len(caplog.records) == 1
    assert guard.known_agents == 1


def test_a_decision_the_guard_cannot_fold_onto_passes_through_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pm, _ = guarded(answering("not a decision"))
    agent = Agent()
    with caplog.at_level(logging.ERROR, logger="repeat_guard_pluggy"):
        decisions: list[object] = [execute(pm, agent) for _ in range(3)]
    assert decisions == ["not a decision"] * 3
    assert len(caplog.records) == 1


def test_downstream_exceptions_propagate_unchanged(caplog: pytest.LogCaptureFixture) -> None:
    error = KeyError("host bug")
    pm, guard = guarded(raising(error))
    agent = Agent()
    with pytest.raises(KeyError) as raised:
        execute(pm, agent)
    assert raised.value is error
    assert caplog.records == []
    chain = guard.state.chain(guard.agent_id(agent) or "")
    assert chain is not None
    assert chain.repeats == 1


# -- construction -------------------------------------------------------------------------


def test_config_may_be_a_mapping_a_value_or_nothing() -> None:
    config = GuardConfig(thresholds=(2, 3), exclude=("todo_write",))
    assert RepeatGuardPlugin(config).config is config
    assert RepeatGuardPlugin().config == GuardConfig()
    parsed = RepeatGuardPlugin({"thresholds": [3, 2], "exclude": ["todo_write"]}).config
    assert parsed == config


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"thresholds": []}, "thresholds"),
        ({"thresholds": [3, 1]}, "thresholds"),
        ({"exclude": "todo_write"}, "exclude"),
        ({"argumentsPreviewChars": 0}, "argumentsPreviewChars"),
        ({"threshold": [3]}, "threshold"),
    ],
)
def test_an_invalid_config_raises_one_error_naming_the_key(
    raw: dict[str, object], key: str
) -> None:
    with pytest.raises(GuardConfigError) as raised:
        RepeatGuardPlugin(raw)
    assert isinstance(raised.value, ValueError)
    assert raised.value.key == key
    assert key in str(raised.value)
    assert str(raised.value).startswith("invalid repeat-tool-guard config: ")
    assert raised.value.value == raw[key]


def test_the_implementations_cover_every_specified_hook_and_nothing_else() -> None:
    guard = RepeatGuardPlugin()
    for project in (hookspecs.PROJECT_NAME, "myharness"):
        implementations = vars(guard.hook_implementations(project))
        assert implementations.pop("guard") is guard
        assert sorted(implementations) == sorted(hookspecs.HOOK_NAMES)
        marker = f"{project}_impl"
        assert all(hasattr(function, marker) for function in implementations.values())


def test_the_plugin_object_itself_carries_no_hook_markers() -> None:
    # Registered one way (install): a bare pm.register(guard) finds nothing to call.
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    guard = RepeatGuardPlugin({"thresholds": [2]})
    pm.register(guard)
    assert pm.get_hookcallers(guard) == []
