"""The plugin driven by real ADK runners, agents and sessions, and a scripted model."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from repeat_guard import Event, GuardConfig, GuardState, Reminder
from repeat_guard_adk import (
    FAILED_KEY,
    PLUGIN_NAME,
    REFUSED_BY,
    STATE_KEY,
    GuardConfigError,
    RepeatGuard,
)

from ._support import (
    DETAILED_MARK,
    GENTLE_MARK,
    LoopingModel,
    final_text,
    looping_agent,
    reminders,
    run,
    run_once,
    runner_for,
    stored,
    texts,
    user,
)

GREP = ("grep", {"pattern": "TODO"})
READ = ("read", {"path": "a.txt"})


def test_the_gentle_reminder_follows_the_third_call_and_the_model_stops() -> None:
    model, ran = LoopingModel(), list[str]()
    session = run(looping_agent(model, ran), [RepeatGuard()], "Find the TODOs.")
    assert final_text(session) == "stopped after 3 calls"
    assert ran == ["grep"] * 3
    assert [reminders(contents) != [] for contents in model.seen] == [False] * 3 + [True]
    results = model.seen[-1][-1]  # the content carrying the third call's result
    assert results.role == "user"
    response, reminder = results.parts or []
    assert response.function_response is not None
    assert response.function_response.response == {"result": "no match for TODO"}
    assert reminder.text is not None
    assert reminder.text.startswith("<system-reminder>\n" + GENTLE_MARK)
    # the session's events hold the tool's result untouched, and no reminder
    assert not any(reminders([e.content]) for e in session.events if e.content)
    assert STATE_KEY not in session.state  # temp: state is never stored


def test_the_detailed_reminder_follows_the_fifth_call_and_the_gentle_one_stays() -> None:
    model, ran = LoopingModel(stop_at=DETAILED_MARK), list[str]()
    session = run(looping_agent(model, ran), [RepeatGuard()], "Find the TODOs.")
    assert final_text(session) == "stopped after 5 calls"
    contents = model.seen[-1]
    gentle, detailed = reminders(contents)
    assert GENTLE_MARK in gentle
    assert 'grep` 5 times in a row with identical arguments: {"pattern":"TODO"}' in detailed
    results = [c for c in contents if any(p.function_response for p in c.parts or ())]
    assert texts(results[2]) == [gentle]
    assert texts(results[4]) == [detailed]


def test_a_model_that_alternates_tools_is_left_alone() -> None:
    model, ran = LoopingModel(calls=(GREP, READ), stop_at=None, limit=10), list[str]()
    session = run(looping_agent(model, ran), [RepeatGuard()], "Look around.")
    assert final_text(session) == "stopped after 10 calls"
    assert all(reminders(contents) == [] for contents in model.seen)


def test_two_sessions_at_once_never_share_a_chain() -> None:
    model, ran = LoopingModel(), list[str]()
    runner = runner_for(looping_agent(model, ran), [RepeatGuard()])

    async def both() -> list[str]:
        model.lockstep(2)
        ids = [
            (await runner.session_service.create_session(app_name=runner.app_name, user_id="u")).id
            for _ in range(2)
        ]
        await asyncio.gather(*(run_once(runner, i, user("Find.")) for i in ids))
        return [final_text(await stored(runner, i)) for i in ids]

    assert asyncio.run(both()) == ["stopped after 3 calls"] * 2
    assert ran == ["grep"] * 6
    assert [len(reminders(contents)) for contents in model.seen] == [0] * 6 + [1, 1]


def test_a_new_message_starts_over_and_the_session_keeps_its_reminders() -> None:
    model, ran = LoopingModel(), list[str]()
    session = run(looping_agent(model, ran), [RepeatGuard()], "Find the TODOs.", "Look again.")
    assert final_text(session) == "stopped after 6 calls"
    assert ran == ["grep"] * 6
    assert len(reminders(model.seen[-1])) == 2
    assert len(reminders(model.seen[-2])) == 1  # the first run's, in its place


def test_a_session_resumed_with_a_tools_late_result_continues_the_chain() -> None:
    model, ran = LoopingModel(), list[str]()

    def grep(pattern: str) -> dict[str, str]:
        """Start a search; its result comes later."""
        ran.append("grep")
        return {"status": "pending"}

    agent = looping_agent(model, ran, tools=[LongRunningFunctionTool(grep)])
    runner = runner_for(agent, [RepeatGuard()])

    async def resumed() -> str:
        session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
        events = await run_once(runner, session.id, user("Find the TODOs."))
        for _ in range(3):
            # the run paused on the long-running call; the client sends its result back
            call = [c for e in events for c in e.get_function_calls()][-1]
            answer = types.FunctionResponse(id=call.id, name=call.name, response={"done": "none"})
            message = types.Content(role="user", parts=[types.Part(function_response=answer)])
            events = await run_once(runner, session.id, message)
            if not any(e.get_function_calls() for e in events):
                break
        return final_text(await stored(runner, session.id))

    assert asyncio.run(resumed()) == "stopped after 3 calls"
    assert ran == ["grep"] * 3


class Recorder(BasePlugin):
    """Another plugin: records the tool calls and requests it sees."""

    def __init__(self) -> None:
        super().__init__(name="recorder")
        self.tools: list[str] = []
        self.results: list[Any] = []

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        self.tools.append(tool.name)
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        self.results.append(result)
        return None


def test_other_plugins_and_the_agents_callbacks_still_see_everything() -> None:
    model, ran, recorder = LoopingModel(), list[str](), Recorder()
    requests: list[list[types.Content]] = []

    def own_callback(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        requests.append(list(llm_request.contents))

    agent = looping_agent(model, ran, before_model_callback=own_callback)
    session = run(agent, [RepeatGuard({"denyAt": 4}), recorder], "Find.")
    assert final_text(session) == "stopped after 3 calls"
    assert recorder.tools == ["grep"] * 3
    assert recorder.results == ["no match for TODO"] * 3
    assert len(requests) == 4
    assert len(reminders(requests[-1])) == 1  # the agent's own callback reads it too


def test_deny_at_refuses_the_fourth_identical_call_and_the_model_reads_why() -> None:
    model, ran = LoopingModel(stop_at=DETAILED_MARK), list[str]()
    session = run(looping_agent(model, ran), [RepeatGuard({"denyAt": 4})], "Find.")
    assert final_text(session) == "stopped after 5 calls"
    assert ran == ["grep"] * 3
    responses = [
        part.function_response.response
        for content in model.seen[-1]
        for part in content.parts or ()
        if part.function_response is not None
    ]
    assert responses[:3] == [{"result": "no match for TODO"}] * 3
    for response, nth in zip(responses[3:], ("4th", "5th"), strict=True):
        assert response is not None
        assert response[REFUSED_BY] == PLUGIN_NAME
        assert f"{nth} identical" in response["error"]
    assert DETAILED_MARK in reminders(model.seen[-1])[-1]


def test_parallel_calls_of_one_response_are_admitted_in_order() -> None:
    class Parallel(LoopingModel):
        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> Any:
            self.seen.append(list(llm_request.contents))
            if len(self.seen) > 1:
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text="ok")])
                )
                return
            call = types.FunctionCall(name="grep", args={"pattern": "x"})
            parts = [types.Part(function_call=call) for _ in range(3)]
            yield LlmResponse(content=types.Content(role="model", parts=parts))

    model, ran = Parallel(), list[str]()
    session = run(looping_agent(model, ran), [RepeatGuard({"denyAt": 2})], "Find.")
    assert final_text(session) == "ok"
    assert ran == ["grep"]  # the first ran; the second and third would repeat it


def test_an_agent_transferred_to_keeps_its_own_chain() -> None:
    helper_model, ran = LoopingModel(), list[str]()
    helper = looping_agent(helper_model, ran, name="helper", description="Searches.")
    root_model = LoopingModel(calls=(("transfer_to_agent", {"agent_name": "helper"}),))
    root = looping_agent(root_model, ran, name="root", sub_agents=[helper])
    session = run(root, [RepeatGuard({"thresholds": [2]})], "Delegate.")
    # the root's transfer is its own call; the helper is reminded after its own second grep
    assert final_text(session) == "stopped after 2 calls"
    assert ran == ["grep"] * 2
    assert [len(reminders(c)) for c in helper_model.seen] == [0, 0, 1]
    assert all(reminders(c) == [] for c in root_model.seen)


def test_config_is_resolved_by_the_core() -> None:
    assert RepeatGuard().config == GuardConfig()
    config = GuardConfig(thresholds=(2,))
    assert RepeatGuard(config).config is config
    assert RepeatGuard({"thresholds": [4]}).config.thresholds == (4,)
    assert RepeatGuard().name == "repeat-tool-guard"
    with pytest.raises(GuardConfigError, match="thresholds must not be empty"):
        RepeatGuard({"thresholds": []})


def test_the_guard_fails_open_when_its_own_code_raises(caplog: pytest.LogCaptureFixture) -> None:
    def broken(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
        raise RuntimeError("boom")

    # with denyAt 2 the second call is refused, and counting the refusal raises too
    model, ran, guard = (
        LoopingModel(limit=4),
        list[str](),
        RepeatGuard({"denyAt": 2}, reducer=broken),
    )
    with caplog.at_level(logging.ERROR, logger="repeat_guard_adk"):
        session = run(looping_agent(model, ran), [guard], "Find.")
    assert final_text(session) == "stopped after 4 calls"
    assert ran == ["grep"] * 4
    assert all(reminders(contents) == [] for contents in model.seen)
    assert sorted(set(caplog.messages)) == [
        "repeat-tool-guard failed (RuntimeError: boom); the call runs unguarded",
        "repeat-tool-guard failed (RuntimeError: boom); the request goes out unchanged",
    ]


def test_an_unreadable_stored_state_lets_the_call_run(caplog: pytest.LogCaptureFixture) -> None:
    class Spoiler(BasePlugin):
        async def before_tool_callback(
            self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
        ) -> dict[str, Any] | None:
            tool_context.state[STATE_KEY] = {"main": {"version": -1}}  # not the guard's
            return None

    model, ran = LoopingModel(limit=3, stop_at=None), list[str]()
    plugins = [Spoiler(name="spoiler"), RepeatGuard({"denyAt": 2})]
    with caplog.at_level(logging.ERROR, logger="repeat_guard_adk"):
        session = run(looping_agent(model, ran), plugins, "Find.")
    assert final_text(session) == "stopped after 3 calls"
    assert ran == ["grep"] * 3
    assert caplog.messages[0].startswith("repeat-tool-guard failed (TypeError: unreadable")
    assert caplog.messages[0].endswith("; the call runs unguarded")


def test_events_the_fold_cannot_pair_change_nothing() -> None:
    from google.adk.events.event import Event as AdkEvent

    model, ran = LoopingModel(), list[str]()
    runner = runner_for(looping_agent(model, ran), [RepeatGuard({"thresholds": [2]})])
    orphan = types.FunctionResponse(id="gone", name="grep", response={"result": "x"})

    async def go() -> str:
        service = runner.session_service
        session = await service.create_session(app_name=runner.app_name, user_id="u")
        for event in (
            AdkEvent(author="user", invocation_id="old"),  # no content
            AdkEvent(
                author="main",
                invocation_id="old",
                content=types.Content(role="user", parts=[types.Part(function_response=orphan)]),
            ),
        ):
            await service.append_event(session, event)
        await run_once(runner, session.id, user("Find."))
        return final_text(await stored(runner, session.id))

    assert asyncio.run(go()) == "stopped after 2 calls"
    assert [len(reminders(c)) for c in model.seen] == [0, 0, 1]


RETRY_MARK = "has now failed 3 times the same way, with other calls between"
MAKE = ("make", {"target": "all"})
EDIT = ("edit", {"path": "main.c"})


def failing_tools(ran: list[str], failure: Callable[[int], dict[str, Any]]) -> list[Any]:
    """``make``, which fails as ``failure(n)`` says on its ``n``-th run, and ``edit``."""

    def make(target: str) -> dict[str, Any]:
        """Build a target."""
        ran.append("make")
        return failure(ran.count("make"))

    def edit(path: str) -> str:
        """Edit a file."""
        ran.append("edit")
        return f"{path} edited"

    return [make, edit]


def raises(n: int) -> dict[str, Any]:
    raise RuntimeError(f"main.c:{n}: undefined reference to `main'")


def test_a_tool_that_raises_fails_and_its_third_failure_between_edits_is_a_retry() -> None:
    def answer(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, error: Exception):  # type: ignore[no-untyped-def]  # ADK's callback shape
        return {"outcome": f"raised: {error}"}  # no error key: only the guard's note marks it

    model, ran = LoopingModel(calls=(MAKE, EDIT), stop_at="has now failed"), list[str]()
    agent = looping_agent(
        model, ran, tools=failing_tools(ran, raises), on_tool_error_callback=answer
    )
    # ADK asks the plugins' on_tool_error_callback first: the guard notes the call and answers
    # nothing, then the agent's own callback answers it
    session = run(agent, [RepeatGuard({"retryWindow": 8})], "Build it.")
    assert final_text(session) == "stopped after 5 calls"
    assert ran == ["make", "edit"] * 2 + ["make"]
    last = model.seen[-1][-1]
    response, reminder = last.parts or []
    assert response.function_response is not None
    assert response.function_response.response == {
        "outcome": "raised: main.c:3: undefined reference to `main'"
    }
    assert reminder.text is not None
    assert RETRY_MARK in reminder.text
    assert "`make`" in reminder.text
    assert reminders(model.seen[-2]) == []  # not at the second failure
    assert FAILED_KEY not in session.state  # temp: state is never stored


def test_without_the_failed_flag_the_same_loop_gets_no_retry_reminder() -> None:
    def answer(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, error: Exception):  # type: ignore[no-untyped-def]  # ADK's callback shape
        return {"outcome": f"raised: {error}"}

    class Unnoted(RepeatGuard):
        async def on_tool_error_callback(self, **_: Any) -> None:
            return None

    model, ran = LoopingModel(calls=(MAKE, EDIT), stop_at="has now failed", limit=8), list[str]()
    agent = looping_agent(
        model, ran, tools=failing_tools(ran, raises), on_tool_error_callback=answer
    )
    session = run(agent, [Unnoted({"retryWindow": 8})], "Build it.")
    assert final_text(session) == "stopped after 8 calls"


def test_reflect_and_retry_answers_are_failures_and_no_progress_over_each_other() -> None:
    from google.adk.plugins import ReflectAndRetryToolPlugin

    model, ran = LoopingModel(calls=(MAKE,)), list[str]()
    agent = looping_agent(model, ran, tools=failing_tools(ran, raises))
    # ADK's own plugin answers a raised call with guidance whose retry count grows: under
    # progress = "result" a changing failure is still no progress
    retry = ReflectAndRetryToolPlugin(max_retries=10, throw_exception_if_retry_exceeded=False)
    session = run(agent, [RepeatGuard({"progress": "result"}), retry], "Build it.")
    assert final_text(session) == "stopped after 3 calls"
    assert GENTLE_MARK in reminders(model.seen[-1])[-1]


def test_an_error_response_is_no_progress_over_the_last_error_of_the_same_call() -> None:
    words = ["alpha", "beta", "gamma", "delta"]

    def reports(n: int) -> dict[str, Any]:
        return {"error": f"build failed: {words[n - 1]}"}

    model, ran = LoopingModel(calls=(MAKE,)), list[str]()
    agent = looping_agent(model, ran, tools=failing_tools(ran, reports))
    session = run(agent, [RepeatGuard({"progress": "result"})], "Build it.")
    # each error's text differs, yet a failure is no progress over a failure
    assert final_text(session) == "stopped after 3 calls"
    assert GENTLE_MARK in reminders(model.seen[-1])[-1]


def test_the_same_texts_without_the_error_key_are_progress() -> None:
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]

    def reports(n: int) -> dict[str, Any]:
        return {"output": f"build failed: {words[n - 1]}"}

    model, ran = LoopingModel(calls=(MAKE,), limit=5), list[str]()
    agent = looping_agent(model, ran, tools=failing_tools(ran, reports))
    session = run(agent, [RepeatGuard({"progress": "result"})], "Build it.")
    assert final_text(session) == "stopped after 5 calls"
    assert all(reminders(contents) == [] for contents in model.seen)


def test_a_response_is_failed_by_its_error_key_or_a_raised_tool_and_a_refusal_is_not() -> None:
    from repeat_guard_adk._plugin import _finished

    calls: dict[str | None, types.FunctionCall] = {
        n: types.FunctionCall(id=n, name="make", args={}) for n in "abcde"
    }
    responses = [
        types.FunctionResponse(id="a", name="make", response={"error": "boom"}),
        types.FunctionResponse(id="b", name="make", response={"result": "built"}),
        types.FunctionResponse(
            id="c", name="make", response={"error": "no", REFUSED_BY: PLUGIN_NAME}
        ),
        types.FunctionResponse(id="d", name="make", response={"reflection": "try again"}),
        types.FunctionResponse(id="e", name="make", response=None),
    ]
    finished = _finished("main", responses, calls, raised={"d"})
    assert [(each.failed, each.denied) for each in finished] == [
        (True, False),
        (False, False),
        (False, True),
        (True, False),
        (False, False),
    ]


def test_noting_a_raised_call_fails_open(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        function_call_id = "c1"

        @property
        def state(self) -> Any:
            raise RuntimeError("no state")

    guard = RepeatGuard()
    answer = asyncio.run(
        guard.on_tool_error_callback(
            tool=BaseTool(name="make", description="Build."),
            tool_args={},
            tool_context=Broken(),  # type: ignore[arg-type]  # a context that cannot be read
            error=ValueError("boom"),
        )
    )
    assert answer is None
    assert "the call's failure is not noted" in caplog.text
