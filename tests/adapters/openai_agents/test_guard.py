"""The guard driven by real Agents SDK runs and the SDK's own scripted model."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest
from agents import (
    Agent,
    FunctionTool,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
    Tool,
    default_tool_error_function,
    function_tool,
)
from agents.run_config import CallModelData, ModelInputData
from agents.tool import ToolErrorFunction
from agents.tool_context import ToolContext
from agents.tool_guardrails import ToolInputGuardrailData

from repeat_guard import Event, GuardConfig, GuardState, Reminder, reduce
from repeat_guard_openai_agents import GuardConfigError, RepeatGuard, reminder_message

from ._support import (
    DETAILED_MARK,
    GENTLE_MARK,
    LoopingModel,
    ScriptedModel,
    agent_with,
    assistant_message,
    filtered,
    function_call,
    latest_turn,
    reminder_texts,
    tools,
)

GREP = ("grep", {"pattern": "TODO"})
READ = ("read", {"path": "a.txt"})


def run(agent: Agent[Any], prompt: Any, guard: RepeatGuard, **options: Any) -> Any:
    options.setdefault("max_turns", 50)
    return asyncio.run(Runner.run(agent, prompt, run_config=guard.run_config(), **options))


def test_the_gentle_reminder_follows_the_third_call_and_the_model_stops() -> None:
    script, calls = LoopingModel(), list[str]()
    result = run(agent_with(script, calls), "Find the TODOs.", RepeatGuard())
    assert result.final_output == "stopped after 3 calls"
    assert calls == ["grep"] * 3
    # the model read the reminder in the request after the third call, and not before
    assert [reminder_texts(items) != [] for items in script.seen] == [False] * 3 + [True]
    *_, output, reminder = script.seen[-1]
    assert output == {
        "call_id": "call-3",
        "output": "no match for TODO",
        "type": "function_call_output",
    }
    assert reminder == {"type": "message", "role": "user", "content": reminder["content"]}
    assert reminder["content"].startswith("<system-reminder>\n" + GENTLE_MARK)
    # the run's own history holds the tool's output untouched, and no reminder
    assert reminder_texts(result.to_input_list()) == []


def test_the_detailed_reminder_follows_the_fifth_call_and_the_gentle_one_stays() -> None:
    script, calls = LoopingModel(stop_at=DETAILED_MARK), list[str]()
    result = run(agent_with(script, calls), "Find the TODOs.", RepeatGuard())
    assert result.final_output == "stopped after 5 calls"
    last = script.seen[-1]
    gentle, detailed = reminder_texts(last)
    assert GENTLE_MARK in gentle
    assert 'grep` 5 times in a row with identical arguments: {"pattern":"TODO"}' in detailed
    # each sits right after the output that reached its threshold, in every later request
    outputs = [n for n, item in enumerate(last) if item.get("type") == "function_call_output"]
    assert last[outputs[2] + 1]["content"] == gentle
    assert last[outputs[4] + 1]["content"] == detailed
    assert reminder_texts(script.seen[4]) == [gentle]


def test_a_model_that_alternates_tools_is_left_alone() -> None:
    script, calls = LoopingModel(calls=(GREP, READ), stop_at=None, limit=10), list[str]()
    result = run(agent_with(script, calls), "Look around.", RepeatGuard())
    assert result.final_output == "stopped after 10 calls"
    assert all(reminder_texts(items) == [] for items in script.seen)


def test_two_runs_at_once_never_share_a_chain() -> None:
    script, calls = LoopingModel(), list[str]()
    guard = RepeatGuard()
    agent = agent_with(script, calls)

    async def both() -> list[Any]:
        script.lockstep = asyncio.Barrier(2)
        runs = [Runner.run(agent, p, run_config=guard.run_config()) for p in ("one", "two")]
        return list(await asyncio.gather(*runs))

    results = asyncio.run(both())
    assert calls == ["grep"] * 6  # interleaved: each run made three
    assert [r.final_output for r in results] == ["stopped after 3 calls"] * 2
    # the first reminder reached each run after its own third call: the 7th and 8th requests
    assert [len(reminder_texts(items)) for items in script.seen] == [0] * 6 + [1, 1]


def test_a_new_message_in_a_session_starts_over_and_the_history_keeps_its_reminders() -> None:
    from agents import SQLiteSession

    script, calls = LoopingModel(), list[str]()
    agent, guard = agent_with(script, calls), RepeatGuard()
    session = SQLiteSession("demo")
    try:
        first = run(agent, "Find the TODOs.", guard, session=session)
        second = run(agent, "Look again.", guard, session=session)
    finally:
        session.close()  # its in-memory database: Python 3.13 warns of one never closed
    assert first.final_output == "stopped after 3 calls"
    # three more calls after the user's new message before the next reminder
    assert second.final_output == "stopped after 6 calls"
    assert calls == ["grep"] * 6
    assert len(reminder_texts(script.seen[-1])) == 2  # the first run's is still in its place
    assert len(reminder_texts(script.seen[-2])) == 1


def test_a_run_resumed_from_its_saved_state_continues_the_chain() -> None:
    from agents import RunState

    script, calls = LoopingModel(), list[str]()
    agent = agent_with(script, calls)
    grep = agent.tools[0]
    assert not isinstance(grep, Agent)
    grep.needs_approval = True  # type: ignore[union-attr]  # grep is a FunctionTool
    guard = RepeatGuard()

    async def resumed() -> Any:
        result = await Runner.run(agent, "Find the TODOs.", run_config=guard.run_config())
        for _ in range(3):
            # saved as JSON and loaded again, as a run resumed in another process would be
            state = await RunState.from_json(agent, result.to_state().to_json())
            for interruption in state.get_interruptions():
                state.approve(interruption)
            result = await Runner.run(agent, state, run_config=guard.run_config())
        return result

    result = asyncio.run(resumed())
    assert result.final_output == "stopped after 3 calls"
    assert calls == ["grep"] * 3
    assert GENTLE_MARK in " ".join(reminder_texts(latest_turn(script.seen[-1])))


def test_other_filters_and_hooks_still_see_everything() -> None:
    script, calls = LoopingModel(), list[str]()
    filtered: list[list[Any]] = []
    ended: list[str] = []

    def own_filter(data: CallModelData[Any]) -> ModelInputData:
        filtered.append(list(data.model_data.input))
        return data.model_data

    class Hooks(RunHooks[Any]):
        async def on_tool_end(
            self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
        ) -> None:
            ended.append(str(result))

    guard = RepeatGuard({"denyAt": 4})
    agent = agent_with(script, calls, [guard.tool_input_guardrail])
    config = guard.run_config(RunConfig(call_model_input_filter=own_filter))
    result = asyncio.run(Runner.run(agent, "Find the TODOs.", run_config=config, hooks=Hooks()))
    assert result.final_output == "stopped after 3 calls"
    assert ended == ["no match for TODO"] * 3
    assert len(filtered) == 4
    assert filtered[-1] == script.seen[-1]  # the user's filter ran last, on the reminder too
    assert len(reminder_texts(filtered[-1])) == 1


async def _own_async_filter(data: CallModelData[Any]) -> ModelInputData:
    return ModelInputData(input=[*data.model_data.input], instructions="Be brief.")


def test_an_async_filter_of_the_base_config_runs_after_the_guard() -> None:
    script, calls = LoopingModel(), list[str]()
    guard = RepeatGuard()
    config = guard.run_config(RunConfig(call_model_input_filter=_own_async_filter))
    result = asyncio.run(Runner.run(agent_with(script, calls), "Find.", run_config=config))
    assert result.final_output == "stopped after 3 calls"


def test_deny_at_refuses_the_fourth_identical_call_and_the_model_reads_why() -> None:
    script, calls = LoopingModel(stop_at=DETAILED_MARK), list[str]()
    guard = RepeatGuard({"denyAt": 4})
    result = run(agent_with(script, calls, [guard.tool_input_guardrail]), "Find.", guard)
    assert result.final_output == "stopped after 5 calls"
    assert calls == ["grep"] * 3  # the fourth and fifth never ran
    outputs = [i for i in script.seen[-1] if i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs[:3]] == ["no match for TODO"] * 3
    assert "grep" in outputs[3]["output"]
    assert outputs[3]["output"] != "no match for TODO"
    assert "4th identical" in outputs[3]["output"]
    assert "5th identical" in outputs[4]["output"]
    # a refused attempt still counts: the fifth brought the detailed reminder
    assert DETAILED_MARK in reminder_texts(script.seen[-1])[-1]


def test_parallel_calls_of_one_response_are_admitted_in_order() -> None:
    guard = RepeatGuard({"denyAt": 2})
    calls: list[str] = []

    async def batch_then_answer(items: list[Any]) -> list[Any]:
        if any(item.get("type") == "function_call_output" for item in items):
            return [assistant_message("ok")]
        return [function_call("grep", {"pattern": "x"}, call_id=f"p{n}") for n in range(3)]

    model = ScriptedModel(batch_then_answer)
    agent = Agent(name="main", model=model, tools=list(tools(calls, [guard.tool_input_guardrail])))
    result = run(agent, "Find.", guard)
    assert result.final_output == "ok"
    assert calls == ["grep"]  # the first ran; the second and third would repeat it


def test_a_subagent_run_as_a_tool_keeps_its_own_chain() -> None:
    inner_script, calls = LoopingModel(stop_at=None, limit=2), list[str]()
    inner = agent_with(inner_script, calls, name="inner")
    parent_script = LoopingModel(calls=(("ask_inner", {"input": "go"}),))
    parent = Agent(
        name="parent",
        model=parent_script.model(),
        tools=[inner.as_tool("ask_inner", "Ask the inner agent.")],
    )
    result = run(parent, "Delegate.", RepeatGuard())
    assert result.final_output == "stopped after 3 calls"
    # the inner agent made two greps in each of its three runs: never three in a row
    assert calls == ["grep"] * 6
    assert all(reminder_texts(items) == [] for items in inner_script.seen)
    assert len(reminder_texts(parent_script.seen[-1])) == 1


def test_streamed_runs_go_through_the_same_filter() -> None:
    script, calls = LoopingModel(), list[str]()
    guard = RepeatGuard()

    async def streamed() -> Any:
        result = Runner.run_streamed(
            agent_with(script, calls), "Find.", run_config=guard.run_config()
        )
        async for _ in result.stream_events():
            pass
        return result.final_output

    assert asyncio.run(streamed()) == "stopped after 3 calls"


def test_config_is_resolved_by_the_core() -> None:
    assert RepeatGuard().config == GuardConfig()
    config = GuardConfig(thresholds=(2,))
    assert RepeatGuard(config).config is config
    assert RepeatGuard({"thresholds": [4]}).config.thresholds == (4,)
    with pytest.raises(GuardConfigError, match="thresholds must not be empty"):
        RepeatGuard({"thresholds": []})


def test_the_guard_fails_open_when_its_own_code_raises(caplog: pytest.LogCaptureFixture) -> None:
    def broken(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
        raise RuntimeError("boom")

    script, calls = LoopingModel(limit=4), list[str]()
    with caplog.at_level(logging.ERROR, logger="repeat_guard_openai_agents"):
        result = run(agent_with(script, calls), "Find.", RepeatGuard(reducer=broken))
    assert result.final_output == "stopped after 4 calls"
    assert all(reminder_texts(items) == [] for items in script.seen)
    assert caplog.messages[0] == (
        "repeat-tool-guard failed (RuntimeError: boom); the model is sent the input unchanged"
    )


def test_a_guardrail_outside_the_guards_runs_lets_calls_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    guard, other = RepeatGuard({"denyAt": 2}), RepeatGuard({"denyAt": 2})
    script, calls = LoopingModel(limit=3, stop_at=None), list[str]()
    with caplog.at_level(logging.ERROR, logger="repeat_guard_openai_agents"):
        result = run(agent_with(script, calls, [guard.tool_input_guardrail]), "Find.", other)
    assert result.final_output == "stopped after 3 calls"
    assert calls == ["grep"] * 3
    assert caplog.messages[0].startswith("repeat-tool-guard failed (LookupError: the run's")
    assert caplog.messages[0].endswith("; the call runs unguarded")


def test_the_fold_reads_only_what_it_understands() -> None:
    guard = RepeatGuard({"thresholds": [2]})
    filter_ = guard.run_config().call_model_input_filter
    assert filter_ is not None
    call = {"type": "function_call", "call_id": "a", "name": "grep", "arguments": "{bad"}
    output = {"type": "function_call_output", "call_id": "a", "output": "x"}
    twice = GuardState.initial(GuardConfig(thresholds=(2,)))
    reminder = reminder_message(reduce(reduce(twice, _grep())[0], _grep())[1][0])
    listed = {"role": "user", "content": [{"type": "input_text", "text": reminder["content"]}]}
    items: list[Any] = [
        "not an item",
        {"type": "function_call_output", "call_id": "unknown", "output": "x"},
        call,
        output,
        listed,  # a reminder given as content parts does not start the chain over
        {**call, "arguments": {"already": "parsed"}},
        output,
        {"role": "assistant", "content": "thinking"},
        {"role": "user", "content": []},
        call,
        output,
        call,
        output,
    ]
    data = CallModelData(ModelInputData(items, None), Agent(name="a"), None)
    sent: list[Any] = list(asyncio.run(filtered(filter_, data)).input)
    # the malformed arguments are compared as text; the user's empty message starts over
    assert [n for n, item in enumerate(sent) if item not in items] == [len(items)]
    assert "grep × 2" not in sent[-1]["content"]


def _grep() -> Any:
    from repeat_guard import ToolCallFinished

    return ToolCallFinished("agent", "grep", {"pattern": "x"})


def test_admitting_a_call_before_any_model_call_uses_an_empty_state() -> None:
    guard = RepeatGuard({"denyAt": 2})
    config = guard.run_config()
    context = ToolContext(
        context=None,
        tool_name="grep",
        tool_call_id="c1",
        tool_arguments='{"pattern": "x"}',
        run_config=config,
    )
    data = ToolInputGuardrailData(context=context, agent=Agent(name="a"))
    verdict = asyncio.run(guard.tool_input_guardrail.run(data))
    assert verdict.behavior == {"type": "allow"}


def test_a_handoff_ends_the_chain_before_it() -> None:
    helper_script, calls = LoopingModel(), list[str]()
    helper = agent_with(helper_script, calls, name="helper")
    seen: list[list[Any]] = []

    async def two_greps_then_hand_off(items: list[Any]) -> list[Any]:
        seen.append(items)
        if len(seen) > 2:
            return [function_call("transfer_to_helper", {}, call_id="handoff")]
        return [function_call("grep", {"pattern": "TODO"}, call_id=f"main-{len(seen)}")]

    main = Agent(
        name="main",
        model=ScriptedModel(two_greps_then_hand_off),
        tools=list(tools(calls)),
        handoffs=[helper],
    )
    result = run(main, "Find the TODOs.", RepeatGuard())
    # two greps, the handoff, then the helper's own three: the reminder after its third only
    assert calls == ["grep"] * 5
    assert result.last_agent is helper
    assert result.final_output == "stopped after 6 calls"  # the handoff is a function call too
    assert [len(reminder_texts(items)) for items in helper_script.seen] == [0, 0, 0, 1]


RETRY_MARK = "has now failed 3 times the same way, with other calls between"
MAKE = ("make", {"target": "all"})
EDIT = ("edit", {"path": "main.c"})


def build_tools(
    ran: list[str], failure: ToolErrorFunction, message: Callable[[int], str]
) -> list[FunctionTool]:
    """``make``, which raises ``message(n)`` on its ``n``-th run (answered by ``failure``, a
    tool error function), and ``edit``."""

    @function_tool(failure_error_function=failure)
    def make(target: str) -> str:
        """Build a target."""
        ran.append("make")
        raise RuntimeError(message(ran.count("make")))

    @function_tool
    def edit(path: str) -> str:
        """Edit a file."""
        ran.append("edit")
        return f"{path} edited"

    return [make, edit]


def located(n: int) -> str:
    return f"main.c:{n}: undefined reference to `main'"


def test_a_raised_tool_fails_and_its_third_failure_between_edits_is_a_retry() -> None:
    guard, ran = RepeatGuard({"retryWindow": 8}), list[str]()
    script = LoopingModel(calls=(MAKE, EDIT), stop_at="has now failed")
    tools = build_tools(ran, guard.failure_error_function(), located)
    agent = Agent(name="main", model=script.model(), tools=list(tools))
    result = run(agent, "Build it.", guard)
    assert result.final_output == "stopped after 5 calls"
    assert ran == ["make", "edit"] * 2 + ["make"]
    *_, output, reminder = script.seen[-1]
    # the model reads the SDK's own message, and the guard's reminder after it
    assert output["output"] == (
        "An error occurred while running the tool. Please try again. Error: " + located(3)
    )
    assert RETRY_MARK in reminder["content"]
    assert "`make`" in reminder["content"]
    assert reminder_texts(script.seen[-2]) == []  # not at the second failure


def test_without_the_guards_failure_function_the_same_loop_is_not_a_retry() -> None:
    guard, ran = RepeatGuard({"retryWindow": 8}), list[str]()
    script = LoopingModel(calls=(MAKE, EDIT), stop_at="has now failed", limit=8)
    agent = Agent(
        name="main",
        model=script.model(),
        tools=list(build_tools(ran, default_tool_error_function, located)),
    )
    assert run(agent, "Build it.", guard).final_output == "stopped after 8 calls"


def test_a_failure_is_no_progress_over_the_last_failure_of_the_same_call() -> None:
    words = ["alpha", "beta", "gamma", "delta"]
    guard, ran = RepeatGuard({"progress": "result"}), list[str]()

    async def own_message(context: RunContextWrapper[Any], error: Exception) -> str:
        return f"build failed: {error}"

    script = LoopingModel(calls=(MAKE,))
    failure = guard.failure_error_function(own_message)
    tools = build_tools(ran, failure, lambda n: words[n - 1])
    agent = Agent(name="main", model=script.model(), tools=list(tools))
    # each failure's text differs, yet a failure is no progress over a failure
    assert run(agent, "Build it.", guard).final_output == "stopped after 3 calls"
    outputs = [i["output"] for i in script.seen[-1] if i.get("type") == "function_call_output"]
    assert outputs == ["build failed: alpha", "build failed: beta", "build failed: gamma"]
    assert GENTLE_MARK in reminder_texts(script.seen[-1])[-1]


def test_noting_a_failure_outside_the_guards_runs_fails_open(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failure = RepeatGuard().failure_error_function()
    context = ToolContext(
        context=None,
        tool_name="make",
        tool_call_id="c1",
        tool_arguments="{}",
        run_config=RepeatGuard().run_config(),  # another guard's run
    )

    async def answer(context: RunContextWrapper[Any]) -> str:
        text = failure(context, RuntimeError("boom"))
        assert not isinstance(text, str)  # the guard's function is async
        return await text

    with caplog.at_level(logging.ERROR, logger="repeat_guard_openai_agents"):
        text = asyncio.run(answer(context))
        plain = asyncio.run(answer(RunContextWrapper(None)))
    assert (
        text == plain == "An error occurred while running the tool. Please try again. Error: boom"
    )
    assert [m.endswith("; the call's failure is not noted") for m in caplog.messages] == [True] * 2


def test_a_timed_out_tool_fails_too_when_the_guards_function_answers_its_timeout() -> None:
    guard, ran = RepeatGuard({"retryWindow": 8}), list[str]()

    @function_tool(timeout=0.05, timeout_error_function=guard.failure_error_function())
    async def make(target: str) -> str:
        """Build a target."""
        ran.append("make")
        await asyncio.sleep(5)
        return "built"

    @function_tool
    def edit(path: str) -> str:
        """Edit a file."""
        ran.append("edit")
        return f"{path} edited"

    script = LoopingModel(calls=(MAKE, EDIT), stop_at="has now failed")
    agent = Agent(name="main", model=script.model(), tools=[make, edit])
    assert run(agent, "Build it.", guard).final_output == "stopped after 5 calls"
    *_, output, reminder = script.seen[-1]
    assert "timed out after 0.05 seconds" in output["output"]
    assert RETRY_MARK in reminder["content"]
