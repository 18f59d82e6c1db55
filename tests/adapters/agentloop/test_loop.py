"""The loop's own mechanics, with plain plugins in the plugin manager and no guard."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pluggy
import pytest

from repeat_guard_agentloop import (
    Agent,
    AgentDisposedError,
    AgentLoop,
    AssistantMessage,
    ContextMessage,
    Event,
    ModelTurn,
    ScriptedModel,
    ScriptExhaustedError,
    SessionLog,
    ToolCall,
    ToolCallRequest,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    UserMessage,
    hookspecs,
)
from repeat_guard_pluggy import (
    Accept,
    Block,
    PostExecuteDecision,
    ToolExecution,
)
from repeat_guard_pluggy import ContextMessage as HookContext
from repeat_guard_pluggy import ToolResult as HookResult

from ._support import call, contexts, echo, kinds, results, tools

impl = hookspecs.hookimpl


def test_a_text_turn_ends_the_prompt() -> None:
    async def scenario() -> None:
        loop = AgentLoop(tools())
        agent = loop.spawn("main", ScriptedModel(["hello"]))
        answer = await loop.followup(agent, "hi")
        assert answer == AssistantMessage("main#1/2", "main#1", "hello")
        assert loop.log.events == (UserMessage("main#1/1", "main#1", "hi"), answer)
        assert agent.history == loop.log.events

    asyncio.run(scenario())


def test_a_step_logs_calls_then_results_and_the_model_sees_them() -> None:
    model = ScriptedModel(
        [
            (ToolCallRequest("grep", {"q": "a"}), ToolCallRequest("grep", {"q": "b"}, "mine")),
            "done",
        ]
    )

    async def scenario() -> None:
        loop = AgentLoop(tools("grep"))
        agent = loop.spawn("main", model)
        await loop.followup(agent, "go")
        assert kinds(loop.log) == [
            "user_message",
            "tool_call",
            "tool_call",
            "tool_result",
            "tool_result",
            "assistant_message",
        ]
        call_events = [event for event in loop.log if isinstance(event, ToolCall)]
        assert [c.call_id for c in call_events] == ["call_1", "mine"]
        assert [r.content for r in results(loop.log)] == ['{"q": "a"}', '{"q": "b"}']
        assert all(r.outcome == "accepted" for r in results(loop.log))

    asyncio.run(scenario())
    first, second = model.requests
    assert kinds(first[0]) == ["user_message"]
    assert first[1] == (ToolSpec("grep", "the grep tool", {}),)
    assert kinds(second[0])[-2:] == ["tool_result", "tool_result"]
    assert model.remaining == 0


def test_unknown_and_failing_tools_give_error_results() -> None:
    async def broken(arguments: object) -> str:
        raise OSError("disk gone")

    registry = ToolRegistry()
    registry.register("broken", broken)

    async def scenario() -> tuple[ToolResult, ...]:
        loop = AgentLoop(registry)
        agent = loop.spawn("main", ScriptedModel([call("broken"), call("missing"), "ok"]))
        await loop.followup(agent, "go")
        return tuple(results(loop.log))

    failing, missing = asyncio.run(scenario())
    assert (failing.content, failing.is_error, failing.model_is_error) == (
        "OSError: disk gone",
        True,
        True,
    )
    assert (missing.content, missing.is_error) == ("unknown tool 'missing'", True)


def test_non_text_tool_content_is_logged_as_json() -> None:
    async def stats(arguments: object) -> object:
        return {"b": 2, "a": [1, "é"]}

    registry = ToolRegistry()
    registry.register("stats", stats)

    async def scenario() -> ToolResult:
        loop = AgentLoop(registry)
        agent = loop.spawn("main", ScriptedModel([call("stats"), "ok"]))
        await loop.followup(agent, "go")
        return results(loop.log)[0]

    assert asyncio.run(scenario()).content == '{"a": [1, "é"], "b": 2}'


def _cyclic() -> object:
    holder: dict[str, object] = {}
    holder["self"] = holder
    return holder


def _deep() -> object:
    nested: list[object] = []
    for _ in range(100_000):
        nested = [nested]
    return nested


@pytest.mark.parametrize(
    ("content", "shown"),
    [
        ({(1, 2): "x"}, '{"[1,2]":"x"}'),  # a key JSON cannot hold
        ({1: "a", "b": 2}, '{"1":"a","b":2}'),  # keys that do not sort together
        (_cyclic(), '{"self":<cycle>}'),
        (_deep(), None),  # nesting past the interpreter's limit
    ],
    ids=["tuple-key", "mixed-keys", "cycle", "deep"],
)
def test_tool_content_json_cannot_hold_is_shown_in_canonical_text(
    content: object, shown: str | None
) -> None:
    async def odd(arguments: object) -> object:
        return content

    registry = ToolRegistry()
    registry.register("odd", odd)

    async def scenario() -> ToolResult:
        loop = AgentLoop(registry)
        agent = loop.spawn("main", ScriptedModel([call("odd"), "ok"]))
        await loop.followup(agent, "go")
        return results(loop.log)[0]

    result = asyncio.run(scenario())
    assert not result.is_error
    if shown is None:
        assert result.content.startswith("[[[[")
        assert result.content.endswith("]]]]")
    else:
        assert result.content == shown


def test_registering_a_tool_twice_fails() -> None:
    registry = tools("grep")
    with pytest.raises(ValueError, match="'grep' is already registered"):
        registry.register("grep", echo)


def test_a_denied_call_gets_an_error_and_still_reaches_post_execute() -> None:
    seen: list[ToolExecution] = []

    class Recorder:
        @impl
        def tool_post_execute(self, execution: ToolExecution, result: HookResult) -> None:
            seen.append(execution)

    async def deny_rm(execution: ToolExecution) -> str | None:
        return "rm is not allowed" if execution.tool == "rm" else None

    async def allow(execution: ToolExecution) -> str | None:
        return None

    async def scenario() -> list[ToolResult]:
        loop = AgentLoop(tools("rm", "ls"), pre_execute=[allow, deny_rm])
        loop.pm.register(Recorder())
        agent = loop.spawn("main", ScriptedModel([call("rm"), call("ls"), "ok"]))
        await loop.followup(agent, "go")
        return results(loop.log)

    denied, allowed = asyncio.run(scenario())
    assert (denied.content, denied.is_error, denied.denied) == (
        "denied: rm is not allowed",
        True,
        True,
    )
    assert not allowed.denied
    assert [(e.tool, e.denied) for e in seen] == [("rm", True), ("ls", False)]
    assert all(isinstance(e.agent, Agent) for e in seen)


class Downstream:
    """A post-execute plugin that blocks ``rm``, replaces ``cat`` and annotates everything."""

    @impl
    def tool_post_execute(
        self, execution: ToolExecution, result: HookResult
    ) -> PostExecuteDecision:
        note = (HookContext(f"note on {execution.tool}", {"kind": "test", "plugin": "down"}),)
        if execution.tool == "rm":
            return Block("rm is blocked here", note)
        if execution.tool == "cat":
            return Accept(HookResult({"redacted": True}), note)
        return Accept(contexts=note)


def test_block_and_replacement_change_what_the_model_sees_not_the_logged_output() -> None:
    model = ScriptedModel(
        [(ToolCallRequest("rm", {"p": 1}), ToolCallRequest("cat", {"p": 2})), "ok"]
    )

    async def scenario() -> SessionLog:
        loop = AgentLoop(tools("rm", "cat"))
        loop.pm.register(Downstream())
        agent = loop.spawn("main", model)
        await loop.followup(agent, "go")
        return loop.log

    log = asyncio.run(scenario())
    blocked, replaced = results(log)
    assert (blocked.content, blocked.outcome) == ('{"p": 1}', "blocked")
    assert (blocked.model_content, blocked.model_is_error) == ("rm is blocked here", True)
    assert (replaced.content, replaced.outcome) == ('{"p": 2}', "replaced")
    assert (replaced.model_content, replaced.model_is_error) == ('{"redacted": true}', False)
    # Contexts come after every result of the step, in call order, with their sources.
    assert kinds(log)[1:6] == [
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
        "context_message",
    ]
    assert [(c.call_id, c.text, dict(c.source)) for c in contexts(log)] == [
        ("call_1", "note on rm", {"kind": "test", "plugin": "down"}),
        ("call_2", "note on cat", {"kind": "test", "plugin": "down"}),
    ]
    assert model.requests[1][0] == log.events[:-1]


def test_the_loop_owns_its_hook_specifications_and_plugins_implement_them() -> None:
    seen: list[str] = []

    class Prompted:
        @impl
        def agent_prompt_submit(self, agent: object, prompt: str) -> None:
            seen.append(prompt)

    async def scenario() -> None:
        loop = AgentLoop(tools("ls"))
        assert loop.pm.project_name == hookspecs.PROJECT_NAME == "repeat_guard_agentloop"
        specified = [
            name for name in hookspecs.HOOK_NAMES if getattr(loop.pm.hook, name).has_spec()
        ]
        assert specified == [
            "tool_pre_execute",
            "tool_post_execute",
            "agent_prompt_submit",
            "agent_dispose",
        ]
        assert loop.guard is None
        loop.pm.register(Prompted())
        loop.pm.check_pending()
        agent = loop.spawn("main", ScriptedModel([call("ls"), "ok"]))
        await loop.followup(agent, "first")
        await loop.dispose(agent)

    asyncio.run(scenario())
    assert seen == ["first"]


def test_a_plugin_marked_for_another_project_is_not_called() -> None:
    class Foreign:
        @pluggy.HookimplMarker("myharness")
        def agent_prompt_submit(self, agent: object, prompt: str) -> None:
            raise AssertionError("never called")

    async def scenario() -> None:
        loop = AgentLoop(tools())
        loop.pm.register(Foreign())
        agent = loop.spawn("main", ScriptedModel(["ok"]))
        await loop.followup(agent, "hi")

    asyncio.run(scenario())


def test_a_post_execute_answer_that_is_not_a_decision_is_a_clear_error() -> None:
    class Wrong:
        @impl
        def tool_post_execute(self, execution: ToolExecution, result: HookResult) -> object:
            return "yes"

    async def scenario() -> None:
        loop = AgentLoop(tools("ls"))
        loop.pm.register(Wrong())
        agent = loop.spawn("main", ScriptedModel([call("ls"), "ok"]))
        await loop.followup(agent, "go")

    with pytest.raises(TypeError, match="expected Accept, Block or None"):
        asyncio.run(scenario())


def test_the_event_sink_sees_every_event_in_log_order() -> None:
    sunk: list[Event] = []

    async def sink(event: Event) -> None:
        sunk.append(event)

    async def scenario() -> SessionLog:
        loop = AgentLoop(tools("ls"), on_event=sink)
        loop.pm.register(Downstream())
        agent = loop.spawn("main", ScriptedModel([call("ls"), "ok"]))
        await loop.followup(agent, "go")
        return loop.log

    log = asyncio.run(scenario())
    assert tuple(sunk) == log.events
    assert len(log) == 5
    assert tuple(iter(log)) == log.events


def test_ids_are_per_agent_and_names_are_numbered() -> None:
    async def scenario() -> AgentLoop:
        loop = AgentLoop(tools("ls"))
        first = loop.spawn("worker", ScriptedModel([call("ls"), "a"]))
        second = loop.spawn("worker", ScriptedModel(["b"]))
        other = loop.spawn("main", ScriptedModel(["c"]))
        assert (first.id, second.id, other.id) == ("worker#1", "worker#2", "main#1")
        assert repr(second) == "Agent('worker#2')"
        loop.followup(first, "x")
        loop.followup(second, "y")
        loop.followup(other, "z")
        await loop.idle()
        assert loop.agents == (first, second, other)
        return loop

    loop = asyncio.run(scenario())
    assert [e.id for e in loop.log.for_agent("worker#1")] == [f"worker#1/{n}" for n in range(1, 5)]
    assert [e.id for e in loop.log.for_agent("worker#2")] == ["worker#2/1", "worker#2/2"]


def test_prompts_to_one_agent_run_in_order() -> None:
    async def scenario() -> list[str]:
        loop = AgentLoop(tools("ls"))
        agent = loop.spawn("main", ScriptedModel([call("ls"), "one", "two"]))
        first = loop.followup(agent, "1")
        second = loop.followup(agent, "2")
        await loop.idle()
        assert (first.result().text, second.result().text) == ("one", "two")
        return [e.text for e in agent.history if isinstance(e, UserMessage | AssistantMessage)]

    assert asyncio.run(scenario()) == ["1", "one", "2", "two"]


def test_a_script_that_runs_out_says_so() -> None:
    async def scenario() -> None:
        loop = AgentLoop(tools("ls"))
        agent = loop.spawn("main", ScriptedModel([call("ls")]))
        await loop.followup(agent, "go")

    with pytest.raises(ScriptExhaustedError, match="all 1 were played"):
        asyncio.run(scenario())


def test_an_empty_tool_call_turn_is_rejected() -> None:
    async def scenario() -> None:
        loop = AgentLoop(tools())
        agent = loop.spawn("main", ScriptedModel([()]))
        await loop.followup(agent, "go")

    with pytest.raises(ValueError, match="non-empty tuple of tool calls"):
        asyncio.run(scenario())


def test_idle_groups_the_failures_and_skips_cancelled_turns() -> None:
    async def scenario() -> None:
        loop = AgentLoop(tools())
        broken = loop.spawn("broken", ScriptedModel([]))
        fine = loop.spawn("fine", ScriptedModel(["ok"]))
        cancelled = loop.spawn("cancelled", ScriptedModel(["never"]))
        loop.followup(broken, "go")
        loop.followup(fine, "go")
        loop.followup(cancelled, "go").cancel()
        with pytest.raises(ExceptionGroup) as caught:
            await loop.idle()
        assert [type(e) for e in caught.value.exceptions] == [ScriptExhaustedError]
        await loop.idle()  # reported once: nothing left

    asyncio.run(scenario())


class GatedModel:
    """Answers ``"ok"`` once ``gate`` is set: a model call that really suspends."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def complete(self, messages: Sequence[Event], tools: Sequence[ToolSpec]) -> ModelTurn:
        await self.gate.wait()
        return "ok"


def test_a_disposed_agent_takes_no_prompts_and_disposal_is_idempotent() -> None:
    disposed: list[object] = []

    class Disposal:
        @impl
        def agent_dispose(self, agent: object) -> None:
            disposed.append(agent)

    async def scenario() -> None:
        loop = AgentLoop(tools())
        loop.pm.register(Disposal())
        model = GatedModel()
        agent = loop.spawn("main", model)
        running = loop.followup(agent, "running when disposal starts")
        await asyncio.sleep(0)  # the turn starts and waits for its model
        disposal = asyncio.get_running_loop().create_task(loop.dispose(agent))
        await asyncio.sleep(0)
        assert not disposal.done()  # disposal waits for the running turn
        model.gate.set()
        await disposal
        assert running.result().text == "ok"
        await loop.dispose(agent)
        assert agent.disposed
        assert disposed == [agent]
        assert agent not in loop.agents
        with pytest.raises(AgentDisposedError, match="main#1 has been disposed"):
            loop.followup(agent, "again")
        await loop.idle()

    asyncio.run(scenario())


def test_a_prompt_queued_behind_a_disposal_fails_in_its_task() -> None:
    async def scenario() -> None:
        loop = AgentLoop(tools())
        model = GatedModel()
        agent = loop.spawn("main", model)
        running = loop.followup(agent, "running")
        await asyncio.sleep(0)
        disposal = asyncio.get_running_loop().create_task(loop.dispose(agent))
        await asyncio.sleep(0)
        queued = loop.followup(agent, "queued behind the disposal")
        model.gate.set()
        await disposal
        assert running.result().text == "ok"
        with pytest.raises(AgentDisposedError):
            await queued
        with pytest.raises(ExceptionGroup) as caught:
            await loop.idle()
        assert [type(e) for e in caught.value.exceptions] == [AgentDisposedError]

    asyncio.run(scenario())


def test_direct_execution_runs_the_pipeline_without_an_agent_or_a_log() -> None:
    seen: list[ToolExecution] = []

    class Recorder:
        @impl
        def tool_post_execute(self, execution: ToolExecution, result: HookResult) -> None:
            seen.append(execution)

    async def scenario() -> None:
        loop = AgentLoop(tools("ls"))
        loop.pm.register(Recorder())
        first = await loop.execute_direct("ls", {"a": 1})
        second = await loop.execute_direct("ls", {"a": 1})
        assert (first.call_id, second.call_id) == ("direct_1", "direct_2")
        assert (first.content, first.outcome, first.contexts) == ('{"a": 1}', "accepted", ())
        assert len(loop.log) == 0

    asyncio.run(scenario())
    assert [e.agent for e in seen] == [None, None]


def test_events_serialise_to_json_lines() -> None:
    log = SessionLog()
    log.append(UserMessage("a#1/1", "a#1", "hé"))
    log.append(ToolCall("a#1/2", "a#1", "c1", "grep", {"q": "x"}))
    log.append(ContextMessage("a#1/3", "a#1", "c1", "note", {"kind": "plugin"}))
    lines = log.to_jsonl().splitlines(keepends=True)
    assert all(line.endswith("\n") for line in lines)
    assert [json.loads(line) for line in lines] == [
        {"type": "user_message", "id": "a#1/1", "agent": "a#1", "text": "hé"},
        {
            "type": "tool_call",
            "id": "a#1/2",
            "agent": "a#1",
            "call_id": "c1",
            "tool": "grep",
            "arguments": {"q": "x"},
        },
        {
            "type": "context_message",
            "id": "a#1/3",
            "agent": "a#1",
            "call_id": "c1",
            "text": "note",
            "source": {"kind": "plugin"},
            "reminder": None,  # another plugin's context carries no reminder
        },
    ]
    assert "hé" in lines[0]
    odd = ToolCall("x/1", "x", "c", "t", {1, 2}).to_json()  # not JSON data: still serialises
    assert json.loads(odd)["arguments"] == "{1, 2}"
    assert log.for_agent("nobody") == ()
