"""The guard's behaviour matrix, each rule driven through the real loop and a scripted model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence

import pytest

from repeat_guard import reminder_to_json
from repeat_guard_agentloop import (
    AgentLoop,
    ContextMessage,
    ModelTurn,
    PreExecuteListener,
    ScriptedModel,
    SessionLog,
    ToolRegistry,
    hookspecs,
)
from repeat_guard_pluggy import (
    Accept,
    Block,
    GuardConfigError,
    PostExecuteDecision,
    RepeatGuardPlugin,
    ToolExecution,
    install,
)
from repeat_guard_pluggy import ContextMessage as HookContext
from repeat_guard_pluggy import ToolResult as HookResult

from ._support import GUARD, call, contexts, echo, reminders, results, tools

host_impl = hookspecs.hookimpl


def guarded(
    registry: ToolRegistry,
    config: Mapping[str, object] | None = None,
    pre_execute: Sequence[PreExecuteListener] = (),
) -> tuple[AgentLoop, RepeatGuardPlugin]:
    """A loop with the guard installed by the loop itself."""
    loop = AgentLoop(registry, guard=config or {}, pre_execute=pre_execute)
    assert loop.guard is not None
    return loop, loop.guard


def script(*turns: ModelTurn) -> ScriptedModel:
    """A scripted model that plays ``turns`` and then says ``"done"``."""
    return ScriptedModel([*turns, "done"])


def run_one(
    registry: ToolRegistry, turns: Sequence[ModelTurn], config: Mapping[str, object] | None = None
) -> SessionLog:
    """Run one agent through ``turns`` with one prompt; return the session log."""

    async def scenario() -> SessionLog:
        loop, _ = guarded(registry, config)
        agent = loop.spawn("main", script(*turns))
        await loop.followup(agent, "go")
        return loop.log

    return asyncio.run(scenario())


GREP_X = call("grep", {"q": "x"})


def test_default_escalation_gentle_at_3_then_detailed_naming_tool_count_and_arguments() -> None:
    log = run_one(tools("grep"), [GREP_X] * 8)
    assert reminders(log) == [(3, "grep × 3"), (5, "grep × 5"), (8, "grep × 8")]
    gentle, detailed, last = contexts(log)
    assert gentle.text.startswith("<system-reminder>")
    assert "repeating" in gentle.text
    assert "grep" not in gentle.text
    assert "`grep` 5 times in a row" in detailed.text
    assert '{"q":"x"}' in detailed.text
    assert "no progress" in detailed.text
    assert "`grep` 8 times" in last.text
    assert gentle.source == {"kind": "plugin", "plugin": GUARD}
    assert detailed.reminder is not None
    assert (detailed.reminder.tool, detailed.reminder.count) == ("grep", 5)
    assert detailed.reminder.form == "detailed"
    assert detailed.reminder.arguments == '{"q":"x"}'
    assert detailed.reminder.text == detailed.text


def test_the_log_writes_the_reminder_with_the_cores_codec() -> None:
    log = run_one(tools("grep"), [GREP_X] * 3)
    (context,) = contexts(log)
    assert context.reminder is not None
    assert json.loads(context.to_json())["reminder"] == reminder_to_json(context.reminder)


def test_the_guard_can_be_installed_into_the_loops_own_plugin_manager() -> None:
    async def scenario() -> SessionLog:
        loop = AgentLoop(tools("grep"))
        assert loop.guard is None
        install(loop.pm)
        agent = loop.spawn("main", script(*[GREP_X] * 3))
        await loop.followup(agent, "go")
        return loop.log

    assert reminders(asyncio.run(scenario())) == [(3, "grep × 3")]


def test_the_gentle_text_is_keyed_to_the_first_threshold() -> None:
    log = run_one(tools("grep"), [GREP_X] * 4, {"thresholds": [4, 2]})
    assert reminders(log) == [(2, "grep × 2"), (4, "grep × 4")]
    gentle, detailed = contexts(log)
    assert "grep" not in gentle.text
    assert "`grep` 4 times" in detailed.text


def test_the_preview_cap_cuts_the_quote_but_not_the_comparison() -> None:
    body = "b" * 400
    near = "b" * 399 + "c"  # differs only far beyond the 24 quoted characters
    turns = [call("write", {"body": body})] * 5 + [call("write", {"body": near})] * 3
    log = run_one(tools("write"), turns, {"argumentsPreviewChars": 24})
    assert reminders(log) == [(3, "write × 3"), (5, "write × 5"), (8, "write × 3")]
    detailed = contexts(log)[1]
    canonical = '{"body":"' + body + '"}'
    assert f"{canonical[:24]}… (+{len(canonical) - 24} more chars)" in detailed.text
    assert body not in detailed.text


def test_a_different_tracked_call_resets_the_chain() -> None:
    turns = [GREP_X, GREP_X, call("grep", {"q": "y"}), GREP_X, GREP_X, call("find", {"q": "x"})]
    turns += [GREP_X, GREP_X, GREP_X]
    log = run_one(tools("grep", "find"), turns)
    assert reminders(log) == [(9, "grep × 3")]


def test_excluded_calls_are_transparent_to_the_chain() -> None:
    todo = call("todo_write", {"items": ["a"]})
    turns = [GREP_X, todo, GREP_X, todo, todo, todo, GREP_X]
    log = run_one(tools("grep", "todo_write"), turns, {"exclude": ["todo_write"]})
    assert reminders(log) == [(7, "grep × 3")]


def test_include_tracks_only_the_matching_tools() -> None:
    probe = call("probe", {"n": 1})
    turns = [probe, GREP_X, probe, GREP_X, probe, GREP_X]
    log = run_one(tools("probe", "grep"), turns, {"include": ["pro*"]})
    assert reminders(log) == [(5, "probe × 3")]


def test_a_dot_in_a_pattern_is_literal() -> None:
    dotted, plain = call("a.c"), call("abc")
    turns = [dotted] * 3 + [plain] * 3
    log = run_one(tools("a.c", "abc"), turns, {"exclude": ["a.c"]})
    assert reminders(log) == [(6, "abc × 3")]


def test_argument_key_order_is_irrelevant_at_any_depth() -> None:
    orders = [
        {"a": 1, "b": {"x": [{"p": 1, "q": {"s": 1, "t": 2}}], "y": 2}},
        {"b": {"y": 2, "x": [{"q": {"t": 2, "s": 1}, "p": 1}]}, "a": 1},
        {"b": {"x": [{"p": 1, "q": {"t": 2, "s": 1}}], "y": 2}, "a": 1},
    ]
    log = run_one(tools("grep"), [call("grep", order) for order in orders])
    assert reminders(log) == [(3, "grep × 3")]


def test_malformed_argument_json_is_compared_as_its_raw_text() -> None:
    raw = call("grep", '{"q": "x"')  # the model's argument JSON did not parse
    turns = [raw, raw, GREP_X, raw, raw, raw]
    log = run_one(tools("grep"), turns)
    assert reminders(log) == [(6, "grep × 3")]
    assert '\\"q\\": \\"x\\"' in log.to_jsonl()  # logged as the string it was


async def yielding(arguments: object) -> str:
    """A tool that gives other agents a turn before answering."""
    await asyncio.sleep(0)
    return await echo(arguments)


def test_two_concurrent_agents_keep_separate_chains() -> None:
    registry = ToolRegistry()
    registry.register("grep", yielding)

    async def scenario() -> AgentLoop:
        loop, _ = guarded(registry)
        first = loop.spawn("first", script(*[GREP_X] * 3))
        second = loop.spawn("second", script(*[GREP_X] * 2))
        loop.followup(first, "go")
        loop.followup(second, "go")
        await loop.idle()
        return loop

    loop = asyncio.run(scenario())
    owners = [event.agent for event in loop.log if event.kind == "tool_result"]
    assert owners[:4] == ["first#1", "second#1", "first#1", "second#1"]  # they interleaved
    assert reminders(loop.log.for_agent("first#1")) == [(3, "grep × 3")]
    assert reminders(loop.log.for_agent("second#1")) == []


def test_a_new_user_prompt_resets_the_chain() -> None:
    async def scenario() -> SessionLog:
        loop, _ = guarded(tools("grep"))
        agent = loop.spawn("main", ScriptedModel([GREP_X, GREP_X, "one", *[GREP_X] * 3, "two"]))
        await loop.followup(agent, "first")
        await loop.followup(agent, "second")
        return loop.log

    assert reminders(asyncio.run(scenario())) == [(5, "grep × 3")]


def test_a_disposed_agents_chain_is_dropped() -> None:
    async def scenario() -> tuple[SessionLog, list[int]]:
        loop, plugin = guarded(tools("grep"))
        old = loop.spawn("main", script(GREP_X, GREP_X))
        await loop.followup(old, "go")
        sizes = [len(plugin.state)]
        await loop.dispose(old)  # ``old`` stays referenced: the hook, not collection, drops it
        sizes.append(len(plugin.state))
        fresh = loop.spawn("main", script(*[GREP_X] * 3))
        await loop.followup(fresh, "go")
        assert old.disposed
        return loop.log, sizes

    log, sizes = asyncio.run(scenario())
    assert sizes == [1, 0]
    assert reminders(log.for_agent("main#1")) == []
    assert reminders(log.for_agent("main#2")) == [(3, "grep × 3")]


def test_denied_calls_count() -> None:
    async def deny_rm(execution: ToolExecution) -> str | None:
        return "not here" if execution.tool == "rm" else None

    async def scenario() -> SessionLog:
        loop, _ = guarded(tools("rm"), pre_execute=[deny_rm])
        agent = loop.spawn("main", script(*[call("rm", {"path": "/"})] * 3))
        await loop.followup(agent, "go")
        return loop.log

    log = asyncio.run(scenario())
    assert all(result.denied for result in results(log))
    assert reminders(log) == [(3, "rm × 3")]


def test_direct_executions_with_no_agent_neither_fail_nor_count() -> None:
    registry = tools("grep")
    loop, plugin = guarded(registry, {"exclude": ["relay"]})
    direct: list[object] = []

    async def relay(arguments: object) -> str:
        for _ in range(5):
            outcome = await loop.execute_direct("grep", {"q": "x"})
            direct.append((outcome.content, outcome.is_error, outcome.contexts))
        return "relayed"

    registry.register("relay", relay)

    async def scenario() -> SessionLog:
        agent = loop.spawn("main", script(GREP_X, call("relay"), GREP_X, GREP_X))
        await loop.followup(agent, "go")
        return loop.log

    log = asyncio.run(scenario())
    assert direct == [('{"q": "x"}', False, ())] * 5
    assert reminders(log) == [(4, "grep × 3")]
    assert plugin.known_agents == 1


class Downstream:
    """A post-execute plugin downstream of the guard: blocks grep, replaces cat."""

    @host_impl
    def tool_post_execute(
        self, execution: ToolExecution, result: HookResult
    ) -> PostExecuteDecision:
        own = (HookContext("downstream note", {"kind": "hook", "plugin": "downstream"}),)
        if execution.tool == "grep":
            return Block("grep is blocked", own)
        return Accept(HookResult("replaced content"), own)


def folded(tool: str) -> SessionLog:
    async def scenario() -> SessionLog:
        loop, _ = guarded(tools(tool))
        loop.pm.register(Downstream())
        agent = loop.spawn("main", script(*[call(tool, {"q": "x"})] * 3))
        await loop.followup(agent, "go")
        return loop.log

    return asyncio.run(scenario())


def _sources(messages: list[ContextMessage]) -> list[str]:
    return [message.source["plugin"] for message in messages]


def test_the_reminder_folds_onto_a_downstream_block() -> None:
    log = folded("grep")
    third = results(log)[2]
    assert (third.outcome, third.model_content, third.content) == (
        "blocked",
        "grep is blocked",
        '{"q": "x"}',
    )
    assert _sources(contexts(log)) == ["downstream", "downstream", GUARD, "downstream"]
    assert contexts(log)[3].source == {"kind": "hook", "plugin": "downstream"}
    assert reminders(log) == [(3, "grep × 3")]


def test_the_reminder_folds_onto_a_downstream_replacement() -> None:
    log = folded("cat")
    third = results(log)[2]
    assert (third.outcome, third.model_content, third.content) == (
        "replaced",
        "replaced content",
        '{"q": "x"}',
    )
    assert _sources(contexts(log)) == ["downstream", "downstream", GUARD, "downstream"]
    assert reminders(log) == [(3, "cat × 3")]


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"thresholds": []}, "thresholds"),
        ({"thresholds": [3, 1]}, "thresholds"),
        ({"thresholds": [3, 3]}, "thresholds"),
        ({"thresholds": [2.5]}, "thresholds"),
        ({"exclude": "todo_write"}, "exclude"),
        ({"argumentsPreviewChars": 0}, "argumentsPreviewChars"),
        ({"threshold": [3]}, "threshold"),
    ],
)
def test_an_invalid_config_fails_at_load_naming_the_key(
    config: Mapping[str, object], key: str
) -> None:
    with pytest.raises(GuardConfigError, match=key) as caught:
        AgentLoop(tools(), guard=config)
    assert caught.value.key == key
