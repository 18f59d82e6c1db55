"""The middleware driven by real LangChain agents and a scripted chat model."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolCallLimitMiddleware
from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime
from langgraph.types import Command

from repeat_guard import (
    Chain,
    Event,
    GuardConfig,
    GuardState,
    Reminder,
    ToolCallFinished,
    decode_state,
    encode_state,
    reduce,
)
from repeat_guard_langchain import (
    AGENT,
    PLUGIN_NAME,
    STATE_KEY,
    GuardConfigError,
    RepeatGuardMiddleware,
    RepeatGuardState,
    reminder_in_result,
    reminder_message,
)
from repeat_guard_langchain._middleware import _earlier_in_turn

from ._support import (
    DETAILED_MARK,
    GENTLE_MARK,
    LoopingChatModel,
    agent_with,
    carried,
    guard_messages,
    latest_input,
    summaries,
)

GREP = ("grep", {"pattern": "TODO"})
READ = ("read", {"path": "a.txt"})
PROMPT = {"messages": [HumanMessage("Find the TODOs.")]}


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}, "recursion_limit": 100}


def final_messages(
    mode: str, model: LoopingChatModel, guard: RepeatGuardMiddleware | None = None
) -> list[AnyMessage]:
    """Run one prompt to the end in ``mode`` and return the thread's messages."""
    saver = InMemorySaver()
    middleware = [RepeatGuardMiddleware() if guard is None else guard]
    agent = agent_with(model, middleware, checkpointer=saver)
    config = thread(mode)
    if mode == "invoke":
        agent.invoke(PROMPT, config)
    elif mode == "ainvoke":
        asyncio.run(agent.ainvoke(PROMPT, config))
    elif mode == "stream":
        for _ in agent.stream(PROMPT, config, stream_mode="updates"):
            pass
    else:

        async def drain() -> None:
            async for _ in agent.astream(PROMPT, config, stream_mode="messages"):
                pass

        asyncio.run(drain())
    messages: list[AnyMessage] = agent.get_state(config).values["messages"]
    return messages


MODES = ["invoke", "ainvoke", "stream", "astream"]


@pytest.mark.parametrize("mode", MODES)
def test_the_gentle_reminder_follows_the_third_call_and_the_model_stops(mode: str) -> None:
    model = LoopingChatModel(seen=[])
    messages = final_messages(mode, model)
    assert messages[-1].content == "stopped after 3 turns"
    assert summaries(messages) == [(3, "grep × 3", "gentle")]
    assert [any(GENTLE_MARK in text for text in texts) for texts in model.seen] == [
        False,
        False,
        False,
        True,
    ]


@pytest.mark.parametrize("mode", MODES)
def test_the_detailed_reminder_follows_the_fifth_call(mode: str) -> None:
    model = LoopingChatModel(seen=[], stop_at=DETAILED_MARK)
    messages = final_messages(mode, model)
    assert messages[-1].content == "stopped after 5 turns"
    assert summaries(messages) == [(3, "grep × 3", "gentle"), (5, "grep × 5", "detailed")]
    detailed = [text for texts in model.seen for text in texts if DETAILED_MARK in text]
    assert len(detailed) == 1
    assert 'grep` 5 times in a row with identical arguments: {"pattern":"TODO"}' in detailed[0]


def test_the_reminder_is_its_own_message_after_the_tool_result() -> None:
    messages = final_messages("invoke", LoopingChatModel(seen=[]))
    *_, call, result, reminder, answer = messages
    assert isinstance(call, AIMessage)
    assert isinstance(result, ToolMessage)
    assert result.content == "no match for TODO"  # the tool's own output, untouched
    assert isinstance(reminder, HumanMessage)
    assert str(reminder.content).startswith("<system-reminder>")
    assert reminder.id == f"{PLUGIN_NAME}:{result.id}"
    assert reminder.additional_kwargs["lc_source"] == "repeat-tool-guard"
    # the reminder itself rides along in the core's JSON shape
    carried_reminder = reminder.additional_kwargs["repeat_guard"]
    assert carried_reminder["source"] == {"kind": "plugin", "plugin": "repeat-tool-guard"}
    assert (carried_reminder["tool"], carried_reminder["count"], carried_reminder["form"]) == (
        "grep",
        3,
        "gentle",
    )
    assert carried(reminder).text == reminder.content
    assert isinstance(answer, AIMessage)


def test_asked_for_it_the_reminder_rides_inside_the_tool_result() -> None:
    model = LoopingChatModel(seen=[])
    messages = final_messages("invoke", model, RepeatGuardMiddleware(in_tool_result=True))
    assert messages[-1].content == "stopped after 3 turns"
    assert guard_messages(messages) == []  # no message of its own
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [r.content for r in results[:2]] == ["no match for TODO"] * 2
    third = results[2]
    assert str(third.content).startswith("no match for TODO\n\n<system-reminder>\n")
    assert carried(third).summary == "grep × 3"
    assert len(results) == 3  # replaced in place, by its id
    assert any(GENTLE_MARK in text for text in model.seen[-1])


# The third grep reaches the first threshold and the budget at once: two reminders, one result.
BOTH = {"thresholds": [3], "budgets": {"grep": 3}}


def test_two_reminders_for_one_result_are_two_messages_each_with_its_own_id() -> None:
    model = LoopingChatModel(seen=[], stop_at="budget")
    messages = final_messages("invoke", model, RepeatGuardMiddleware(BOTH))
    found = guard_messages(messages)
    assert [(n, carried(m).form) for n, m in found] == [(3, "gentle"), (3, "budget")]
    result = [m for m in messages if isinstance(m, ToolMessage)][2]
    assert [m.id for _, m in found] == [
        f"{PLUGIN_NAME}:{result.id}",
        f"{PLUGIN_NAME}:{result.id}:1",
    ]
    assert [GENTLE_MARK in text for text in model.seen[-1]] == [False, True, False]


def test_asked_for_it_two_reminders_ride_inside_the_one_result() -> None:
    model = LoopingChatModel(seen=[], stop_at="budget")
    messages = final_messages("invoke", model, RepeatGuardMiddleware(BOTH, in_tool_result=True))
    assert guard_messages(messages) == []
    third = [m for m in messages if isinstance(m, ToolMessage)][2]
    texts = [carried_json["text"] for carried_json in third.additional_kwargs["repeat_guard"]]
    assert [r["form"] for r in third.additional_kwargs["repeat_guard"]] == ["gentle", "budget"]
    assert third.content == "no match for TODO\n\n" + "\n\n".join(texts)


def test_reminder_in_result_keeps_other_content_shapes() -> None:
    reminder = Reminder("a", "grep", 3, "gentle", "<system-reminder>x</system-reminder>", "{}")
    empty = reminder_in_result(ToolMessage("", tool_call_id="c", id="t"), reminder)
    assert empty.content == reminder.text
    assert empty.id == "t"
    blocks = ToolMessage([{"type": "text", "text": "found"}], tool_call_id="c", id="t")
    merged = reminder_in_result(blocks, reminder)
    assert merged.content == [
        {"type": "text", "text": "found"},
        {"type": "text", "text": reminder.text},
    ]


def test_asked_for_it_an_invalid_call_still_gets_a_message_of_its_own() -> None:
    guard = RepeatGuardMiddleware(in_tool_result=True)
    broken = {"name": "grep", "args": "{", "id": "b", "error": None, "type": "invalid_tool_call"}
    history: list[AnyMessage] = [
        AIMessage("", invalid_tool_calls=[broken], id=f"ai{n}") for n in range(3)
    ]
    update = guard.before_model({"messages": history}, _runtime())
    assert update is not None
    (reminder,) = update["messages"]
    assert isinstance(reminder, HumanMessage)
    assert reminder.id == f"{PLUGIN_NAME}:ai2:0"


def test_parallel_calls_keep_their_results_together_and_the_reminder_follows_them() -> None:
    model = LoopingChatModel(seen=[], per_step=2)
    messages = final_messages("invoke", model)
    # two identical calls per step: the third call is the first of step two, and its reminder
    # comes after both of that step's results
    assert summaries(messages) == [(4, "grep × 3", "gentle")]
    kinds = [type(message).__name__ for message in messages[-5:]]
    assert kinds == ["AIMessage", "ToolMessage", "ToolMessage", "HumanMessage", "AIMessage"]


def test_calls_with_malformed_arguments_count_with_their_raw_text() -> None:
    # The agent answers a broken call with an error result, and only when the turn also has a
    # valid call (a turn of only broken calls ends its loop): read is excluded here, so it does
    # not break the chain.
    broken_call = ("grep", '{"pattern": "TODO"')  # cut short: not JSON, never reaches the tool
    model = LoopingChatModel(seen=[], calls=(broken_call, READ), per_step=2)
    guard = RepeatGuardMiddleware({"exclude": ["read"]})
    messages = final_messages("invoke", model, guard)
    assert messages[-1].content == "stopped after 3 turns"
    # the agent wrote each broken call's error answer into the thread after the guard ran
    assert summaries(messages) == [(6, "grep × 3", "gentle")]
    *_, call, error, result, reminder, _answer = messages
    assert isinstance(call, AIMessage)
    assert [c["args"] for c in call.invalid_tool_calls] == ['{"pattern": "TODO"']
    assert isinstance(error, ToolMessage)
    assert error.status == "error"
    assert isinstance(result, ToolMessage)
    assert reminder.id == f"{PLUGIN_NAME}:{call.id}:0"


@tool
def rm(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


def test_calls_a_human_refused_count_across_the_interrupts() -> None:
    model = LoopingChatModel(seen=[], calls=(("rm", {"path": "build"}),))
    gate = HumanInTheLoopMiddleware(interrupt_on={"rm": True})
    agent = agent_with(
        model, [RepeatGuardMiddleware(), gate], tools=[rm], checkpointer=InMemorySaver()
    )
    config = thread("refused")
    result = agent.invoke(PROMPT, config)
    refusals = 0
    while "__interrupt__" in result:
        refusals += 1
        reject = {"decisions": [{"type": "reject", "message": "not in this repository"}]}
        result = agent.invoke(Command(resume=reject), config)
    messages = result["messages"]
    # each refusal is a result the tool never produced; the third brings the reminder
    assert refusals == 3
    assert [m.status for m in messages if isinstance(m, ToolMessage)] == ["error"] * 3
    assert summaries(messages) == [(3, "rm × 3", "gentle")]
    assert messages[-1].content == "stopped after 3 turns"


def test_a_model_that_alternates_tools_is_left_alone() -> None:
    model = LoopingChatModel(seen=[], calls=(GREP, READ), stop_at=None, limit=10)
    messages = final_messages("invoke", model)
    assert messages[-1].content == "stopped after 10 turns"
    assert summaries(messages) == []


def test_two_threads_at_once_stay_independent() -> None:
    model = LoopingChatModel(seen=[])
    saver = InMemorySaver()
    guard = RepeatGuardMiddleware()
    agent = agent_with(model, [guard], checkpointer=saver)

    async def both() -> None:
        model.lockstep = asyncio.Barrier(2)
        await asyncio.gather(
            agent.ainvoke(PROMPT, thread("one")), agent.ainvoke(PROMPT, thread("two"))
        )

    asyncio.run(both())
    for name in ("one", "two"):
        messages = agent.get_state(thread(name)).values["messages"]
        assert summaries(messages) == [(3, "grep × 3", "gentle")]
        assert messages[-1].content == "stopped after 3 turns"
    assert model.turns == [0, 0, 1, 1, 2, 2, 3, 3]  # the threads took their turns together


def test_a_resumed_thread_continues_its_chain() -> None:
    saver = InMemorySaver()
    model = LoopingChatModel(seen=[])
    config = thread("resumed")
    # each invocation stops after one tool step; every resume builds a new agent and middleware,
    # as a new process would, with only the checkpointer in common
    agent = agent_with(
        model, [RepeatGuardMiddleware()], checkpointer=saver, interrupt_after=["tools"]
    )
    agent.invoke(PROMPT, config)
    for _ in range(5):
        again = agent_with(
            model, [RepeatGuardMiddleware()], checkpointer=saver, interrupt_after=["tools"]
        )
        again.invoke(None, config)
    state = again.get_state(config).values
    assert summaries(state["messages"]) == [(3, "grep × 3", "gentle")]
    assert state["messages"][-1].content == "stopped after 3 turns"
    assert _chain_of(state) == [1, "grep", '{"pattern":"TODO"}', 3]


def test_a_thread_resumed_under_other_budgets_keeps_its_chain_and_counts_budgets_afresh(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A redeploy adds a budget: the stored counts were per the old budgets, in their order.
    saver = InMemorySaver()
    model = LoopingChatModel(seen=[], stop_at=None, limit=6)
    config = thread("redeployed")
    before = RepeatGuardMiddleware({"budgets": {"grep": 10}})
    first = agent_with(model, [before], checkpointer=saver, interrupt_after=["tools"])
    first.invoke(PROMPT, config)
    first.invoke(None, config)  # its first call folded and stored, with a budget count of 1
    stored = first.get_state(config).values["repeat_guard"]["state"]
    assert stored["memories"]["agent"][4] == [1]
    after = RepeatGuardMiddleware({"budgets": {"read": 5, "grep": 4}, "thresholds": [3]})
    resumed = agent_with(model, [after], checkpointer=saver)
    with caplog.at_level(logging.ERROR, logger="repeat_guard_langchain"):
        resumed.invoke(None, config)
    assert caplog.records == []
    messages = resumed.get_state(config).values["messages"]
    # the chain went on (3 at the third call); the budget counted from the resume: 4 at the 5th
    assert [(n, carried(m).form) for n, m in guard_messages(messages)] == [
        (3, "gentle"),
        (5, "budget"),
    ]


def test_a_new_user_message_in_the_thread_starts_the_chain_over() -> None:
    saver = InMemorySaver()
    model = LoopingChatModel(seen=[])
    agent = agent_with(model, [RepeatGuardMiddleware()], checkpointer=saver)
    config = thread("continued")
    agent.invoke(PROMPT, config)
    agent.invoke({"messages": [HumanMessage("Look again.")]}, config)
    messages = agent.get_state(config).values["messages"]
    # three more calls after the new message before the next reminder, not one
    assert summaries(messages) == [(3, "grep × 3", "gentle"), (6, "grep × 3", "gentle")]


def test_a_marked_message_from_other_middleware_does_not_reset_the_chain() -> None:
    guard = RepeatGuardMiddleware()
    summary = HumanMessage(
        "Summary so far.", id="s", additional_kwargs={"lc_source": "summarization"}
    )
    state: RepeatGuardState = {"messages": [*_calls(2), summary, *_calls(1, first=2)]}
    update = guard.before_model(state, _runtime())
    assert update is not None
    (reminder,) = update["messages"]
    assert carried(reminder).summary == "grep × 3"


def test_a_subagent_keeps_its_own_chain() -> None:
    guard = RepeatGuardMiddleware()  # shared by parent and child: the state is per graph
    child_model = LoopingChatModel(seen=[], stop_at=None, limit=2)
    child = agent_with(child_model, [guard])
    child_runs: list[list[AnyMessage]] = []

    @tool
    def delegate(task: str) -> str:
        """Hand a task to the subagent."""
        result = child.invoke({"messages": [HumanMessage(task)]})
        child_runs.append(result["messages"])
        return str(result["messages"][-1].content)

    parent_model = LoopingChatModel(seen=[], calls=(("delegate", {"task": "grep"}),))
    parent = agent_with(parent_model, [guard], tools=[delegate], checkpointer=InMemorySaver())
    config = thread("parent")
    parent.invoke(PROMPT, config)
    assert len(child_runs) == 3
    assert all(summaries(messages) == [] for messages in child_runs)  # six greps, two per run
    assert summaries(parent.get_state(config).values["messages"]) == [(3, "delegate × 3", "gentle")]


class Recorder(AgentMiddleware[AgentState[Any], Any, Any]):
    """Another middleware: adds its own note before each model call and records the request."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[AnyMessage]] = []

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        if any(isinstance(message, ToolMessage) for message in latest_input(state["messages"])):
            note = HumanMessage(
                "note from the recorder", additional_kwargs={"lc_source": "recorder"}
            )
            return {"messages": [note]}
        return None

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        self.requests.append(list(request.messages))
        return handler(request)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        self.requests.append(list(request.messages))
        return await handler(request)


@pytest.mark.parametrize("guard_first", [True, False])
def test_other_middleware_still_see_their_messages(guard_first: bool) -> None:
    recorder = Recorder()
    middleware: list[AgentMiddleware[Any, Any, Any]] = [RepeatGuardMiddleware(), recorder]
    if not guard_first:
        middleware.reverse()
    model = LoopingChatModel(seen=[])
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    agent.invoke(PROMPT, thread("shared"))
    messages = agent.get_state(thread("shared")).values["messages"]
    assert messages[-1].content == "stopped after 3 turns"
    last_request = recorder.requests[-1]
    sources = {m.additional_kwargs.get("lc_source") for m in last_request[-2:]}
    assert sources == {"recorder", PLUGIN_NAME}  # both notes, each its own message
    assert sum("note from the recorder" in text for texts in model.seen for text in texts) == 3
    assert summaries(messages) == [(3, "grep × 3", "gentle")]


def test_the_frameworks_own_state_middleware_keeps_working_beside_the_guard() -> None:
    # LangChain's total-call limit and the guard each keep their own state fields in the thread
    limit = ToolCallLimitMiddleware(run_limit=4, exit_behavior="continue")
    model = LoopingChatModel(seen=[], stop_at=None, limit=6)
    agent = agent_with(model, [limit, RepeatGuardMiddleware()], checkpointer=InMemorySaver())
    agent.invoke(PROMPT, thread("limited"))
    values = agent.get_state(thread("limited")).values
    statuses = [m.status for m in values["messages"] if isinstance(m, ToolMessage)]
    assert statuses == ["success"] * 4 + ["error"] * 2  # the limit refused calls five and six
    # refused calls still count: the guard spoke at the third and the fifth
    assert summaries(values["messages"]) == [(3, "grep × 3", "gentle"), (5, "grep × 5", "detailed")]
    assert _chain_of(values) == [1, "grep", '{"pattern":"TODO"}', 6]


def test_a_mapping_config_is_parsed_and_honoured() -> None:
    guard = RepeatGuardMiddleware({"thresholds": [2, 4], "exclude": ["read"]})
    assert guard.config == GuardConfig(thresholds=(2, 4), exclude=("read",))
    model = LoopingChatModel(seen=[], calls=(GREP, READ), stop_at=DETAILED_MARK)
    agent = agent_with(model, [guard], checkpointer=InMemorySaver())
    agent.invoke(PROMPT, thread("config"))
    messages = agent.get_state(thread("config")).values["messages"]
    assert summaries(messages) == [(3, "grep × 2", "gentle"), (7, "grep × 4", "detailed")]


def test_a_guard_config_is_used_as_it_is() -> None:
    config = GuardConfig(thresholds=(4,))
    assert RepeatGuardMiddleware(config).config is config
    assert RepeatGuardMiddleware().config == GuardConfig()


def test_an_invalid_mapping_fails_loud_naming_the_key() -> None:
    with pytest.raises(GuardConfigError, match="thresholds must not be empty") as caught:
        RepeatGuardMiddleware({"thresholds": []})
    assert caught.value.key == "thresholds"
    assert caught.value.value == []
    assert str(caught.value).startswith("invalid repeat-tool-guard config: ")


def broken(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
    raise RuntimeError("boom")


def test_an_internal_error_fails_open_with_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    model = LoopingChatModel(seen=[], stop_at=None, limit=4)
    agent = agent_with(model, [RepeatGuardMiddleware(reducer=broken)])
    with caplog.at_level(logging.ERROR, logger="repeat_guard_langchain"):
        result = agent.invoke(PROMPT)
    assert result["messages"][-1].content == "stopped after 4 turns"  # the run went on
    assert guard_messages(result["messages"]) == []
    lines = [record.getMessage() for record in caplog.records]
    assert (
        lines[0] == "repeat-tool-guard failed (RuntimeError: boom); the model is called unguarded"
    )
    # one per model call, and one per tool call (the refusal check folds the thread too)
    assert len(lines) == 9
    assert lines[1] == "repeat-tool-guard failed (RuntimeError: boom); the call runs unguarded"


# -- folding rules, on hand-made states ---------------------------------------------------


def _calls(count: int, first: int = 0) -> list[AnyMessage]:
    messages: list[AnyMessage] = []
    for n in range(first, first + count):
        call = {"name": "grep", "args": {"pattern": "TODO"}, "id": f"c{n}", "type": "tool_call"}
        messages.append(AIMessage("", tool_calls=[call], id=f"ai{n}"))
        messages.append(ToolMessage("no match", tool_call_id=f"c{n}", id=f"t{n}"))
    return messages


def _state(messages: list[AnyMessage], stored: object) -> RepeatGuardState:
    # the stored field may hold anything at all (junk included): that is what is under test
    return cast("RepeatGuardState", {"messages": messages, STATE_KEY: stored})


def _stored(repeats: int | None, seen: str | None) -> dict[str, object]:
    """The stored field for a chain of ``repeats`` identical greps, and the marker ``seen``."""
    chains = {} if repeats is None else {AGENT: Chain("grep", '{"pattern":"TODO"}', repeats)}
    return {"state": encode_state(GuardState.from_chains(GuardConfig(), chains)), "seen": seen}


def _chain_of(values: Mapping[str, Any]) -> object:
    """The encoded chain in a state's (or an update's) stored field."""
    return values[STATE_KEY]["state"]["chains"].get(AGENT)


def _runtime() -> Runtime[Any]:
    return Runtime(context=None)


def test_a_history_without_its_marker_is_folded_afresh_and_only_the_last_step_is_reminded() -> None:
    guard = RepeatGuardMiddleware()
    history = [HumanMessage("go", id="h"), *_calls(3)]
    stale = _stored(7, "gone")
    update = guard.before_model(_state(history, stale), _runtime())
    assert update is not None
    assert [carried(m).summary for m in update["messages"]] == ["grep × 3"]
    assert update[STATE_KEY] == _stored(3, "t2")
    # four calls: the third call's reminder was for an earlier step, the fourth reaches nothing
    update = guard.before_model({"messages": [*history, *_calls(1, first=3)]}, _runtime())
    assert update is not None
    assert "messages" not in update
    assert _chain_of(update) == [1, "grep", '{"pattern":"TODO"}', 4]


def test_the_fold_starts_after_the_marker_from_the_stored_chain() -> None:
    guard = RepeatGuardMiddleware()
    history = [HumanMessage("go", id="h"), *_calls(1, first=9)]
    stored = _stored(4, "h")
    update = guard.before_model(_state(history, stored), _runtime())
    assert update is not None
    assert [carried(m).summary for m in update["messages"]] == ["grep × 5"]
    # a marker at the end with no chain: nothing new, nothing said
    stored = _stored(None, "t9")
    assert guard.before_model(_state(history, stored), _runtime()) == {STATE_KEY: stored}


@pytest.mark.parametrize(
    "stored",
    [
        None,
        "junk",
        {"seen": None},
        {"state": {"version": 1, "chains": {"agent": ["not", "a", "chain"]}}, "seen": "h"},
        {"chain": [1, "grep", "{}", 2], "seen": "h"},  # an older shape of the field
    ],
)
def test_junk_in_the_stored_field_folds_the_history_afresh(
    stored: object, caplog: pytest.LogCaptureFixture
) -> None:
    guard = RepeatGuardMiddleware()
    history = [HumanMessage("go", id="h"), *_calls(3)]
    with caplog.at_level(logging.ERROR, logger="repeat_guard_langchain"):
        update = guard.before_model(_state(history, stored), _runtime())
    assert update is not None
    assert [carried(m).summary for m in update["messages"]] == ["grep × 3"]
    if isinstance(stored, dict) and stored.get("seen"):
        assert (
            caplog.records[0]
            .getMessage()
            .startswith("repeat-tool-guard ignores its stored state: ")
        )
    else:
        assert caplog.records == []


def test_a_result_whose_call_is_gone_is_skipped() -> None:
    guard = RepeatGuardMiddleware()
    orphan = ToolMessage("no match", tool_call_id="elsewhere", id="o")
    system = SystemMessage("You are a coding agent.", id="s")  # stands for no event
    late = ToolMessage("late", tool_call_id="c9", id="x")
    history: list[AnyMessage] = [system, orphan, *_calls(2), late]
    update = guard.before_model({"messages": history}, _runtime())
    assert update == {STATE_KEY: _stored(2, "x")}


def test_an_invalid_call_counts_at_its_turn_and_its_answer_does_not_count_again() -> None:
    guard = RepeatGuardMiddleware()
    nameless = {"name": None, "args": None, "id": "bad", "error": None, "type": "invalid_tool_call"}
    history: list[AnyMessage] = []
    for n in range(3):
        turn = AIMessage("", invalid_tool_calls=[nameless], id=None if n == 2 else f"ai{n}")
        history.append(turn)
        if n < 2:  # the agent's error answer, written when it called the model next
            history.append(ToolMessage("could not be executed", tool_call_id="bad", id=f"t{n}"))
    update = guard.before_model({"messages": history}, _runtime())
    assert update is not None
    (reminder,) = update["messages"]
    assert reminder.id is None  # the turn had no id to derive one from
    assert _chain_of(update) == [1, "", '""', 3]


def test_an_empty_history_stores_no_marker() -> None:
    assert RepeatGuardMiddleware().before_model({"messages": []}, _runtime()) == {
        STATE_KEY: _stored(None, None)
    }


def test_reminder_message_without_a_result_id_lets_the_thread_assign_one() -> None:
    reminder = Reminder("a", "grep", 3, "gentle", "<system-reminder>x</system-reminder>", "{}")
    assert reminder_message(reminder).id is None
    assert reminder_message(reminder, "t1").id == f"{PLUGIN_NAME}:t1"


def test_the_stored_field_is_the_cores_state_encoding() -> None:
    update = RepeatGuardMiddleware({"budgets": {"grep": 5}}).before_model(
        {"messages": _calls(2)}, _runtime()
    )
    assert update is not None
    config = GuardConfig(budgets=(("grep", 5),))
    decoded = decode_state(update[STATE_KEY]["state"], config).unwrap()
    expected = GuardState.initial(config)
    for _ in range(2):
        expected, _ = reduce(
            expected, ToolCallFinished("agent", "grep", {"pattern": "TODO"}, result="no match")
        )
    assert decoded == expected
    assert decoded.memory("agent") == expected.memory("agent")  # the budget's spending too


# -- pre-dispatch deny, through the core's admit -------------------------------------------


def _results(messages: list[AnyMessage]) -> list[ToolMessage]:
    return [message for message in messages if isinstance(message, ToolMessage)]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_a_call_past_deny_at_gets_the_reason_without_running(mode: str) -> None:
    ran: list[str] = []

    @tool("grep")
    def counting_grep(pattern: str) -> str:
        """Search the tree for a pattern."""
        ran.append(pattern)
        return f"no match for {pattern}"

    model = LoopingChatModel(seen=[], stop_at=None, limit=6)
    guard = RepeatGuardMiddleware({"thresholds": [3, 5], "denyAt": 4})
    agent = agent_with(model, [guard], tools=[counting_grep], checkpointer=InMemorySaver())
    if mode == "invoke":
        agent.invoke(PROMPT, thread(mode))
    else:
        asyncio.run(agent.ainvoke(PROMPT, thread(mode)))
    messages = agent.get_state(thread(mode)).values["messages"]
    assert len(ran) == 3  # the fourth, fifth and sixth identical calls never ran
    results = _results(messages)
    assert [r.status for r in results] == ["success"] * 3 + ["error"] * 3
    assert str(results[3].content).startswith(
        "refused: this would be the 4th identical call to `grep` in a row"
    )
    assert results[3].additional_kwargs == {"lc_source": PLUGIN_NAME}
    # refused attempts count: the detailed reminder still comes after the fifth
    assert summaries(messages) == [(3, "grep × 3", "gentle"), (5, "grep × 5", "detailed")]


def test_parallel_calls_of_one_turn_are_admitted_in_the_turns_order() -> None:
    model = LoopingChatModel(seen=[], per_step=2, stop_at=None, limit=2)
    guard = RepeatGuardMiddleware({"denyAt": 3})
    agent = agent_with(model, [guard], checkpointer=InMemorySaver())
    agent.invoke(PROMPT, thread("parallel"))
    results = _results(agent.get_state(thread("parallel")).values["messages"])
    # two calls per turn: the second turn's calls would be the third and fourth in a row
    assert [r.status for r in results] == ["success", "success", "error", "error"]
    assert "4th identical call" in str(results[3].content)


def test_a_spent_budget_refuses_the_call() -> None:
    model = LoopingChatModel(seen=[], calls=(GREP, READ), stop_at=None, limit=4)
    agent = agent_with(model, [RepeatGuardMiddleware({"budgets": {"read": 1}})])
    messages = agent.invoke(PROMPT)["messages"]
    results = _results(messages)
    assert [r.status for r in results] == ["success", "success", "success", "error"]
    assert str(results[3].content).startswith("refused: the budget of 1 calls")


def test_an_error_in_admit_lets_the_call_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_admit(state: GuardState, call: Any, running: Any = ()) -> Any:
        raise RuntimeError("no verdict")

    monkeypatch.setattr("repeat_guard_langchain._middleware.admit", broken_admit)
    model = LoopingChatModel(seen=[])
    with caplog.at_level(logging.ERROR, logger="repeat_guard_langchain"):
        messages = agent_with(model, [RepeatGuardMiddleware({"denyAt": 2})]).invoke(PROMPT)[
            "messages"
        ]
    assert [r.status for r in _results(messages)] == ["success"] * 3
    assert summaries(messages) == [(3, "grep × 3", "gentle")]
    assert caplog.records[0].getMessage() == (
        "repeat-tool-guard failed (RuntimeError: no verdict); the call runs unguarded"
    )


def test_a_changing_result_is_progress_when_asked() -> None:
    ticks: list[int] = []

    @tool("grep")
    def polling_grep(pattern: str) -> str:
        """Search the tree for a pattern."""
        ticks.append(1)
        return f"{len(ticks)} matches"  # a poll whose answer moves on

    model = LoopingChatModel(seen=[], stop_at=None, limit=5)
    guard = RepeatGuardMiddleware({"progress": "result"})
    messages = agent_with(model, [guard], tools=[polling_grep]).invoke(PROMPT)["messages"]
    assert len(ticks) == 5
    assert summaries(messages) == []


def test_earlier_calls_of_a_turn_are_found_only_in_the_latest_turn() -> None:
    call = {"name": "grep", "args": {}, "id": "c1", "type": "tool_call"}
    later = {"name": "read", "args": {}, "id": "c2", "type": "tool_call"}
    turn = AIMessage("", tool_calls=[call, later], id="ai")
    assert [c["id"] for c in _earlier_in_turn([turn], "c2")] == ["c1"]
    assert _earlier_in_turn([turn], "c1") == []
    assert _earlier_in_turn([turn], "elsewhere") == []
    assert _earlier_in_turn([HumanMessage("go")], "c1") == []


def test_a_tool_message_with_status_error_is_a_failed_result() -> None:
    from repeat_guard_langchain._middleware import _events

    call = {"name": "make", "args": {}, "id": "c0", "type": "tool_call"}
    messages: list[AnyMessage] = [
        AIMessage("", tool_calls=[call], id="ai0"),
        ToolMessage("Error: main.c:3: boom", tool_call_id="c0", id="t0", status="error"),
    ]
    ((event, _),) = _events(messages, 1)
    assert isinstance(event, ToolCallFinished)
    assert event.failed
    messages[1] = ToolMessage("built", tool_call_id="c0", id="t0")
    ((event, _),) = _events(messages, 1)
    assert isinstance(event, ToolCallFinished)
    assert not event.failed
