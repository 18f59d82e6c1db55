"""The capability driven by real pydantic-ai agents and scripted ``FunctionModel`` models."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic_ai import Agent, AgentRunResultEvent, ModelRetry, RunContext, ToolFailed
from pydantic_ai.capabilities import AbstractCapability, WrapToolExecuteHandler
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.tools import ToolDefinition

from repeat_guard import (
    Event,
    GuardConfig,
    GuardState,
    Reminder,
    ToolCallFinished,
    reduce,
    reminder_to_json,
)
from repeat_guard_pydantic_ai import (
    METADATA_KEY,
    GuardConfigError,
    RepeatGuard,
    call_arguments,
    reminder_part,
)

from ._support import DETAILED_MARK, GENTLE_MARK, LoopingModel, agent_with, carried, run, summaries

GREP = ("grep", {"pattern": "TODO"})
READ = ("read", {"path": "a.txt"})


def test_the_gentle_reminder_follows_the_third_call_and_the_model_stops() -> None:
    script = LoopingModel()
    result = run(agent_with(script, [RepeatGuard()]), "Find the TODOs.")
    assert result.output == "stopped after 3 calls"
    assert summaries(result.all_messages()) == [(3, "grep × 3", "gentle")]
    # the model received the reminder in the request after the third call, and not before
    assert [any(GENTLE_MARK in t for t in texts) for texts in script.seen] == [
        False,
        False,
        False,
        True,
    ]


def test_the_reminder_is_its_own_part_right_after_the_tool_return() -> None:
    result = run(agent_with(LoopingModel(), [RepeatGuard()]), "Find the TODOs.")
    request = result.all_messages()[-2]
    assert isinstance(request, ModelRequest)
    tool_return, reminder = request.parts
    assert isinstance(tool_return, ToolReturnPart)
    assert tool_return.content == "no match for TODO"  # the tool's own output, untouched
    assert isinstance(reminder, SystemPromptPart)
    assert reminder.content.startswith("<system-reminder>")
    assert reminder.metadata is not None
    carried_reminder = reminder.metadata[METADATA_KEY]  # the reminder, in the core's JSON shape
    assert carried_reminder["source"] == {"kind": "plugin", "plugin": "repeat-tool-guard"}
    assert (carried_reminder["tool"], carried_reminder["count"], carried_reminder["form"]) == (
        "grep",
        3,
        "gentle",
    )
    assert carried(reminder).text == reminder.content
    assert GENTLE_MARK not in str(result.all_messages()[0])  # not in the instructions


def test_the_detailed_reminder_follows_the_fifth_call() -> None:
    script = LoopingModel(stop_at=DETAILED_MARK)
    result = run(agent_with(script, [RepeatGuard()]), "Find the TODOs.")
    assert result.output == "stopped after 5 calls"
    assert summaries(result.all_messages()) == [
        (3, "grep × 3", "gentle"),
        (5, "grep × 5", "detailed"),
    ]
    detailed = [t for texts in script.seen for t in texts if DETAILED_MARK in t]
    assert len(detailed) == 1
    assert 'grep` 5 times in a row with identical arguments: {"pattern":"TODO"}' in detailed[0]


def test_a_model_that_alternates_tools_is_left_alone() -> None:
    script = LoopingModel(calls=(GREP, READ), stop_at=None, limit=10)
    result = run(agent_with(script, [RepeatGuard()]), "Look around.")
    assert result.output == "stopped after 10 calls"
    assert summaries(result.all_messages()) == []


def test_arguments_compare_canonically_whatever_their_key_order_or_encoding() -> None:
    calls = (
        ("grep", {"pattern": "TODO", "path": "src"}),
        ("grep", '{"path": "src", "pattern": "TODO"}'),  # the same call, as JSON text
        ("grep", {"path": "src", "pattern": "TODO"}),
    )
    result = run(agent_with(LoopingModel(calls=calls), [RepeatGuard()]), "Find the TODOs.")
    assert summaries(result.all_messages()) == [(3, "grep × 3", "gentle")]


def test_call_arguments_parses_json_text_and_keeps_malformed_text() -> None:
    assert call_arguments(ToolCallPart("grep", {"a": 1})) == {"a": 1}
    assert call_arguments(ToolCallPart("grep", '{"a": [1, 2]}')) == {"a": [1, 2]}
    assert call_arguments(ToolCallPart("grep", "{not json")) == "{not json"
    too_deep = "[" * 100_000 + "]" * 100_000
    assert call_arguments(ToolCallPart("grep", too_deep)) == too_deep
    assert call_arguments(ToolCallPart("grep", None)) is None


def test_concurrent_runs_of_one_agent_never_share_a_chain() -> None:
    guard = RepeatGuard()
    calls: list[str | None] = []
    script = LoopingModel()
    agent = agent_with(script, [guard], calls)

    async def both() -> list[Any]:
        script.lockstep = asyncio.Barrier(2)
        return list(await asyncio.gather(agent.run("one"), agent.run("two")))

    results = asyncio.run(both())
    # the two runs' calls interleaved; each run is reminded after its own third call only
    first, second = (result.run_id for result in results)
    assert [set(calls[i : i + 2]) for i in (0, 2, 4)] == [{first, second}] * 3
    assert len(calls) == 6
    for result in results:
        assert summaries(result.new_messages()) == [(3, "grep × 3", "gentle")]
        assert result.output == "stopped after 3 calls"
    assert guard.state == GuardState.initial()  # the agent's own instance is never mutated


def test_each_run_starts_a_fresh_chain_and_a_continued_history_is_guarded() -> None:
    script = LoopingModel()
    agent = agent_with(script, [RepeatGuard()])
    first = run(agent, "Find the TODOs.")
    second = run(agent, "Look again.", message_history=first.all_messages())
    # the user's new message starts the chain over: three more calls before the next reminder
    assert second.output == "stopped after 7 calls"  # its turn counts the first run's answer
    assert summaries(second.new_messages()) == [(3, "grep × 3", "gentle")]
    assert summaries(second.all_messages()) == [
        (3, "grep × 3", "gentle"),
        (6, "grep × 3", "gentle"),
    ]


def test_iter_driven_node_by_node() -> None:
    script = LoopingModel()
    agent = agent_with(script, [RepeatGuard()])

    async def drive() -> list[Any]:
        async with agent.iter("Find the TODOs.") as run:
            node = run.next_node
            steps = 0
            while not Agent.is_end_node(node):
                node = await run.next(node)
                steps += 1
            assert steps > 6
            assert run.result is not None
            return run.result.all_messages()

    messages = asyncio.run(drive())
    assert summaries(messages) == [(3, "grep × 3", "gentle")]


def test_a_user_message_queued_into_a_running_run_starts_the_chain_over() -> None:
    script = LoopingModel(stop_at=None, limit=6)
    agent = agent_with(script, [RepeatGuard()])

    async def drive() -> list[Any]:
        async with agent.iter("Find the TODOs.") as run:
            async for node in run:
                if Agent.is_call_tools_node(node) and len(script.seen) == 2:
                    run.enqueue("Keep looking, please.")
            assert run.result is not None
            return run.result.all_messages()

    messages = asyncio.run(drive())
    # calls 1-2, then the user's message, then calls 3-6: the chain restarted at the third call
    assert summaries(messages) == [(5, "grep × 3", "gentle")]


def test_failed_and_retried_calls_count_like_any_other() -> None:
    script = LoopingModel(calls=(("flaky", {"n": 1}),), stop_at=GENTLE_MARK)
    agent = Agent(script.model(), capabilities=[RepeatGuard()])
    attempts: list[int] = []

    @agent.tool_plain(retries=5)
    def flaky(n: int) -> str:
        attempts.append(n)
        if len(attempts) % 2:
            raise ModelRetry("try again later")
        raise ToolFailed("gone for good")

    result = run(agent, "Call flaky.")
    assert len(attempts) == 3
    assert summaries(result.all_messages()) == [(3, "flaky × 3", "gentle")]


def test_a_failed_or_retried_call_is_a_failed_result() -> None:
    seen: list[Event] = []

    def recording(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
        seen.append(event)
        return reduce(state, event)

    script = LoopingModel(calls=(("flaky", {"n": 1}),), stop_at=GENTLE_MARK)
    agent = Agent(script.model(), capabilities=[RepeatGuard(reducer=recording)])
    attempts: list[int] = []

    @agent.tool_plain(retries=5)
    def flaky(n: int) -> str:
        attempts.append(n)
        if len(attempts) == 1:
            raise ModelRetry("try again later")
        if len(attempts) == 2:  # the second attempt
            raise ToolFailed("gone for good")
        return "done"

    run(agent, "Call flaky.")
    finished = [e for e in seen if isinstance(e, ToolCallFinished)]
    assert [e.failed for e in finished][:3] == [True, True, False]
    assert "try again later" in str(finished[0].result)
    assert finished[2].result == "done"


def test_a_subagent_run_inside_a_tool_keeps_its_own_chain() -> None:
    guard = RepeatGuard()
    child_script = LoopingModel(stop_at=None, limit=2)
    child = agent_with(child_script, [guard])
    parent_script = LoopingModel(calls=(("delegate", {"task": "grep"}),))
    parent = Agent(parent_script.model(), capabilities=[guard])
    child_messages: list[Any] = []

    @parent.tool_plain
    async def delegate(task: str) -> str:
        child_script.seen.clear()
        result = await child.run(task)
        child_messages.extend(result.all_messages())
        return result.output

    result = run(parent, "Delegate it.")
    # six grep calls ran in the children, two per run: none reached a threshold
    assert summaries(child_messages) == []
    assert summaries(result.all_messages()) == [(3, "delegate × 3", "gentle")]


@dataclass
class Recorder(AbstractCapability[Any]):
    """Another capability: records the history before each request and adds its own note."""

    def __post_init__(self) -> None:
        self.histories: list[list[Any]] = []

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.histories.append(list(request_context.messages))
        return request_context

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        result = await handler(args)
        ctx.enqueue(SystemPromptPart("note from the recorder", metadata={"recorder": True}))
        return result


@pytest.mark.parametrize("guard_first", [True, False])
def test_other_capabilities_still_see_their_messages(guard_first: bool) -> None:
    recorder = Recorder()
    capabilities: list[AbstractCapability[Any]] = [RepeatGuard(), recorder]
    if not guard_first:
        capabilities.reverse()
    script = LoopingModel()
    result = run(agent_with(script, capabilities), "Find the TODOs.")
    assert result.output == "stopped after 3 calls"
    request = result.all_messages()[-2]
    assert isinstance(request, ModelRequest)
    notes = [part for part in request.parts if isinstance(part, SystemPromptPart)]
    assert {next(iter(part.metadata or {})) for part in notes} == {METADATA_KEY, "recorder"}
    assert isinstance(request.parts[0], ToolReturnPart)
    # the recorder saw the full history, the guard's part included, before the last request
    assert any(
        isinstance(message, ModelRequest) and any(p in message.parts for p in notes)
        for message in recorder.histories[-1]
    )
    assert sum("note from the recorder" in t for texts in script.seen for t in texts) == 3


def test_a_mapping_config_is_parsed_and_honoured() -> None:
    guard = RepeatGuard({"thresholds": [2, 4], "exclude": ["read"]})
    assert guard.state.config == GuardConfig(thresholds=(2, 4), exclude=("read",))
    assert guard.config is guard.state.config  # resolved, as the other adapters' config is
    calls = (GREP, READ)  # read is transparent: grep repeats back to back for the guard
    script = LoopingModel(calls=calls, stop_at=DETAILED_MARK)
    result = run(agent_with(script, [guard]), "Find the TODOs.")
    assert summaries(result.all_messages()) == [
        (3, "grep × 2", "gentle"),
        (7, "grep × 4", "detailed"),
    ]


def test_a_guard_config_is_used_as_it_is() -> None:
    config = GuardConfig(thresholds=(4,))
    assert RepeatGuard(config).state.config is config
    assert RepeatGuard().state.config == GuardConfig()


def test_an_invalid_mapping_fails_loud_naming_the_key() -> None:
    with pytest.raises(GuardConfigError, match="thresholds must not be empty") as caught:
        RepeatGuard({"thresholds": []})
    assert caught.value.key == "thresholds"
    assert caught.value.value == []
    assert str(caught.value).startswith("invalid repeat-tool-guard config: ")


def test_reminder_part_labels_the_guard() -> None:
    _, (reminder,) = _third_call()
    part = reminder_part(reminder)
    assert part.content == reminder.text
    assert part.metadata == {METADATA_KEY: reminder_to_json(reminder)}
    assert carried(part) == reminder


def _third_call() -> tuple[GuardState, tuple[Reminder, ...]]:
    from repeat_guard import ToolCallFinished

    state = GuardState.initial()
    reminders: tuple[Reminder, ...] = ()
    for _ in range(3):
        state, reminders = reduce(state, ToolCallFinished("a", "grep", {"pattern": "TODO"}))
    return state, reminders


def broken(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
    raise RuntimeError("boom")


def test_an_internal_error_fails_open_with_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    script = LoopingModel(stop_at=None, limit=4)
    with caplog.at_level(logging.ERROR, logger="repeat_guard_pydantic_ai"):
        result = run(agent_with(script, [RepeatGuard(reducer=broken)]), "Find the TODOs.")
    assert result.output == "stopped after 4 calls"  # the run went on, unguarded
    assert summaries(result.all_messages()) == []
    messages = [record.getMessage() for record in caplog.records]
    assert (
        messages[0] == "repeat-tool-guard failed (RuntimeError: boom); the run proceeds unguarded"
    )
    assert all("\n" not in message for message in messages)
    assert len(messages) == 5  # the prompt and each of the four calls


def test_exceptions_from_the_tool_pass_through_uncounted() -> None:
    script = LoopingModel(calls=(("explode", {}),))
    guard = RepeatGuard()
    agent = Agent(script.model(), capabilities=[guard])

    @agent.tool_plain
    def explode() -> str:
        raise KeyError("the host's own bug")

    with pytest.raises(KeyError, match="the host's own bug"):
        run(agent, "Go.")


def test_the_model_response_is_never_touched() -> None:
    result = run(agent_with(LoopingModel(), [RepeatGuard()]), "Find the TODOs.")
    responses = [m for m in result.all_messages() if isinstance(m, ModelResponse)]
    assert all(
        isinstance(part, ToolCallPart) for response in responses[:-1] for part in response.parts
    )


def test_streamed_runs_are_guarded_too() -> None:
    agent = agent_with(LoopingModel(), [RepeatGuard()])

    async def stream() -> tuple[str, list[Any], list[Any]]:
        async with agent.run_stream("Find the TODOs.") as streamed:
            output = await streamed.get_output()
            streamed_messages = streamed.all_messages()
        async with agent.run_stream_events("Find the TODOs.") as events:
            last = [event async for event in events][-1]
        assert isinstance(last, AgentRunResultEvent)
        return output, streamed_messages, last.result.all_messages()

    output, streamed_messages, event_messages = asyncio.run(stream())
    assert output == "stopped after 3 calls"
    assert summaries(streamed_messages) == [(3, "grep × 3", "gentle")]
    assert summaries(event_messages) == [(3, "grep × 3", "gentle")]


def test_the_capability_loads_from_an_agent_spec() -> None:
    spec = {
        "model": "test",
        "capabilities": [{"RepeatGuard": {"config": {"thresholds": [2, 4]}}}],
    }
    agent = Agent.from_spec(spec, custom_capability_types=[RepeatGuard])
    guards: list[RepeatGuard] = []
    agent.root_capability.apply(
        lambda capability: (
            guards.append(capability) if isinstance(capability, RepeatGuard) else None
        )
    )
    assert [guard.state.config.thresholds for guard in guards] == [(2, 4)]


# -- pre-dispatch deny, through the core's admit -------------------------------------------


def _returns(messages: list[Any]) -> list[Any]:
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def test_a_call_past_deny_at_is_skipped_with_the_reason() -> None:
    calls: list[str | None] = []
    script = LoopingModel(stop_at=None, limit=6)
    guard = RepeatGuard({"thresholds": [3, 5], "denyAt": 4})
    result = run(agent_with(script, [guard], calls), "Find the TODOs.")
    assert len(calls) == 3  # the fourth, fifth and sixth identical calls never ran
    returns = _returns(result.all_messages())
    assert returns[:3] == ["no match for TODO"] * 3
    assert returns[3].startswith("refused: this would be the 4th identical call to `grep` in a row")
    assert returns[4].startswith("refused: this would be the 5th identical call")
    # refused attempts count: the detailed reminder still comes after the fifth
    assert summaries(result.all_messages()) == [
        (3, "grep × 3", "gentle"),
        (5, "grep × 5", "detailed"),
    ]


def test_a_spent_budget_skips_the_call() -> None:
    calls: list[str | None] = []
    script = LoopingModel(calls=(GREP, READ), stop_at=None, limit=4)
    guard = RepeatGuard({"budgets": {"read": 1}})
    result = run(agent_with(script, [guard], calls), "Look around.")
    assert len(calls) == 3  # grep, read, grep; the second read was refused
    assert _returns(result.all_messages())[3].startswith("refused: the budget of 1 calls")


def test_calls_of_one_response_run_at_once_and_still_meet_the_limits() -> None:
    # pydantic-ai runs a response's calls concurrently: each is counted when it finishes, so
    # the guard must count the ones still running when it is asked about the next.
    ran: list[str] = []

    async def model(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) > 1:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(
            parts=[ToolCallPart("grep", {"pattern": "x"}, tool_call_id=f"c{n}") for n in range(6)]
        )

    agent = Agent(FunctionModel(model), capabilities=[RepeatGuard({"denyAt": 3})])

    @agent.tool_plain
    async def grep(pattern: str) -> str:
        ran.append(pattern)
        await asyncio.sleep(0.01)  # all six are in flight before any finishes
        return "hit"

    result = run(agent, "go")
    returns = _returns(result.all_messages())
    assert len(ran) == 2
    assert returns[:2] == ["hit", "hit"]
    assert [r[:40] for r in returns[2:]] == [
        f"refused: this would be the {n} identical" for n in ("3rd", "4th", "5th", "6th")
    ]


def test_an_error_in_admit_lets_the_call_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_attempt(state: GuardState, call: Any, running: Any = None, **_: Any) -> Any:
        raise RuntimeError("no verdict")

    monkeypatch.setattr("repeat_guard_pydantic_ai._capability.attempt", broken_attempt)
    calls: list[str | None] = []
    with caplog.at_level(logging.ERROR, logger="repeat_guard_pydantic_ai"):
        result = run(agent_with(LoopingModel(), [RepeatGuard({"denyAt": 2})], calls), "Go.")
    assert len(calls) == 3  # nothing was refused
    assert summaries(result.all_messages()) == [(3, "grep × 3", "gentle")]
    assert caplog.records[0].getMessage() == (
        "repeat-tool-guard failed (RuntimeError: no verdict); the run proceeds unguarded"
    )


def test_a_changing_result_is_progress_when_asked() -> None:
    agent = Agent(
        LoopingModel(stop_at=None, limit=5).model(),
        capabilities=[RepeatGuard({"progress": "result"})],
    )
    ticks: list[int] = []

    @agent.tool_plain
    def grep(pattern: str) -> str:
        ticks.append(1)
        return f"{len(ticks)} matches"  # a poll whose answer moves on

    result = run(agent, "Watch it.")
    assert len(ticks) == 5
    assert summaries(result.all_messages()) == []
