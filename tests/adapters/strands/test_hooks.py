"""The hook provider driven by real Strands agents and a scripted model."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry
from strands.session.file_session_manager import FileSessionManager

from repeat_guard import Event, GuardConfig, GuardState, Reminder
from repeat_guard_strands import STATE_KEY, GuardConfigError, RepeatGuard

from ._support import (
    DETAILED_MARK,
    GENTLE_MARK,
    LoopingModel,
    looping_agent,
    reminders,
    results,
    texts,
)

GREP = ("grep", {"pattern": "TODO"})
READ = ("read", {"path": "a.txt"})


def test_the_gentle_reminder_follows_the_third_call_and_the_model_stops() -> None:
    model, ran = LoopingModel(), list[str]()
    agent = looping_agent(model, ran, [RepeatGuard()])
    assert str(agent("Find the TODOs.")).strip() == "stopped after 3 calls"
    assert ran == ["grep"] * 3
    assert [reminders(m) != [] for m in model.seen] == [False] * 3 + [True]
    last = model.seen[-1][-1]
    assert last["role"] == "user"
    result, reminder = last["content"]
    assert result["toolResult"]["content"] == [{"text": "no match for TODO"}]
    assert reminder["text"].startswith("<system-reminder>\n" + GENTLE_MARK)
    # the agent's conversation holds the tool's result untouched, and no reminder
    assert reminders(agent.messages) == []


def test_the_detailed_reminder_follows_the_fifth_call_and_the_gentle_one_stays() -> None:
    model, ran = LoopingModel(stop_at=DETAILED_MARK), list[str]()
    agent = looping_agent(model, ran, [RepeatGuard()])
    assert str(agent("Find the TODOs.")).strip() == "stopped after 5 calls"
    messages = model.seen[-1]
    gentle, detailed = reminders(messages)
    assert GENTLE_MARK in gentle
    assert 'grep` 5 times in a row with identical arguments: {"pattern":"TODO"}' in detailed
    holding = [m for m in messages if any("toolResult" in b for b in m["content"])]
    assert texts(holding[2]) == [gentle]
    assert texts(holding[4]) == [detailed]


def test_a_model_that_alternates_tools_is_left_alone() -> None:
    model, ran = LoopingModel(calls=(GREP, READ), stop_at=None, limit=10), list[str]()
    agent = looping_agent(model, ran, [RepeatGuard()])
    assert str(agent("Look around.")).strip() == "stopped after 10 calls"
    assert all(reminders(m) == [] for m in model.seen)


def test_two_agents_at_once_sharing_one_guard_never_share_a_chain() -> None:
    model, ran, guard = LoopingModel(), list[str](), RepeatGuard()

    async def both() -> list[str]:
        model.lockstep = asyncio.Barrier(2)
        agents = [looping_agent(model, ran, [guard]) for _ in range(2)]
        answers = await asyncio.gather(*(a.invoke_async("Find.") for a in agents))
        return [str(answer).strip() for answer in answers]

    assert asyncio.run(both()) == ["stopped after 3 calls"] * 2
    assert ran == ["grep"] * 6
    assert [len(reminders(m)) for m in model.seen] == [0] * 6 + [1, 1]


def test_a_new_message_starts_over_and_the_conversation_keeps_its_reminders() -> None:
    model, ran = LoopingModel(), list[str]()
    agent = looping_agent(model, ran, [RepeatGuard()])
    agent("Find the TODOs.")
    assert str(agent("Look again.")).strip() == "stopped after 6 calls"
    assert ran == ["grep"] * 6
    assert len(reminders(model.seen[-1])) == 2
    assert len(reminders(model.seen[-2])) == 1  # the first run's, in its place


class Approval(HookProvider):
    """Another hook provider: asks a human before every grep (a Strands interrupt)."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.finished: list[Any] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.ask)
        registry.add_callback(AfterToolCallEvent, self.done)

    def ask(self, event: BeforeToolCallEvent) -> None:
        self.asked.append(event.tool_use["name"])
        event.interrupt("approve", reason="grep?")

    def done(self, event: AfterToolCallEvent) -> None:
        self.finished.append(event.result["content"])


def test_an_agent_resumed_after_an_interrupt_continues_its_chain() -> None:
    model, ran, approval = LoopingModel(), list[str](), Approval()
    agent = looping_agent(model, ran, [RepeatGuard(), approval])
    result = agent("Find the TODOs.")
    for _ in range(5):
        if result.stop_reason != "interrupt":
            break
        answers: list[Any] = [
            {"interruptResponse": {"interruptId": i.id, "response": "yes"}}
            for i in result.interrupts or ()
        ]
        result = agent(answers)
    assert str(result).strip() == "stopped after 3 calls"
    assert ran == ["grep"] * 3
    # the other hooks saw every call, and the reminder came after the third
    assert approval.asked == ["grep"] * 6  # each call asked, then asked again when answered
    assert approval.finished == [[{"text": "no match for TODO"}]] * 3
    assert GENTLE_MARK in " ".join(texts(model.seen[-1][-1]))


def test_a_restored_session_keeps_the_reminders_and_the_refusals(tmp_path: Path) -> None:
    model, ran = LoopingModel(stop_at=DETAILED_MARK), list[str]()
    guard = RepeatGuard({"denyAt": 4})

    def agent_in_session() -> Any:
        session = FileSessionManager(session_id="s", storage_dir=str(tmp_path))
        return looping_agent(model, ran, [guard], session_manager=session)

    first = agent_in_session()
    assert str(first("Find.")).strip() == "stopped after 5 calls"
    refused = first.state.get(STATE_KEY)["refused"]
    assert refused == ["call-4", "call-5"]
    model.limit = 5  # the restored agent answers at once
    restored = agent_in_session()  # a new agent, as a new process would make
    assert restored.state.get(STATE_KEY) == {"refused": refused}
    restored("Thanks.")
    assert len(reminders(model.seen[-1])) == 2  # both reminders, in their places again


def test_deny_at_refuses_the_fourth_identical_call_and_the_model_reads_why() -> None:
    model, ran = LoopingModel(stop_at=DETAILED_MARK), list[str]()
    agent = looping_agent(model, ran, [RepeatGuard({"denyAt": 4})])
    assert str(agent("Find.")).strip() == "stopped after 5 calls"
    assert ran == ["grep"] * 3
    answers = results(model.seen[-1])
    assert [a["content"] for a in answers[:3]] == [[{"text": "no match for TODO"}]] * 3
    for answer, nth in zip(answers[3:], ("4th", "5th"), strict=True):
        assert answer["status"] == "error"
        assert f"{nth} identical" in answer["content"][0]["text"]
    assert DETAILED_MARK in reminders(model.seen[-1])[-1]


def test_parallel_calls_of_one_message_are_admitted_in_order() -> None:
    class Parallel(LoopingModel):
        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            self.seen.append(messages)
            yield {"messageStart": {"role": "assistant"}}
            if len(self.seen) > 1:
                yield {"contentBlockDelta": {"delta": {"text": "ok"}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
                return
            for n in range(3):
                yield {
                    "contentBlockStart": {
                        "start": {"toolUse": {"toolUseId": f"p{n}", "name": "grep"}}
                    }
                }
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"pattern": "x"}'}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}

    model, ran = Parallel(), list[str]()
    agent = looping_agent(model, ran, [RepeatGuard({"denyAt": 2})])
    assert str(agent("Find.")).strip() == "ok"
    assert ran == ["grep"]  # the first ran; the second and third would repeat it


def test_an_agent_used_as_a_tool_keeps_its_own_chain() -> None:
    inner_model, ran, guard = LoopingModel(stop_at=None, limit=2), list[str](), RepeatGuard()
    inner = looping_agent(inner_model, ran, [guard], name="inner", description="Searches.")
    outer_model = LoopingModel(calls=(("inner", {"input": "go"}),))
    outer = looping_agent(outer_model, ran, [guard], tools=[inner])
    assert str(outer("Delegate.")).strip() == "stopped after 3 calls"
    # the inner agent made two greps in each of three calls: its chain restarts with each
    # new message, and it is never the outer agent's
    assert ran == ["grep"] * 6
    assert all(reminders(m) == [] for m in inner_model.seen)
    assert len(reminders(outer_model.seen[-1])) == 1


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

    model, ran = LoopingModel(limit=4), list[str]()
    # with denyAt 2 the second call is refused, and counting the refusal raises too
    agent = looping_agent(model, ran, [RepeatGuard({"denyAt": 2}, reducer=broken)])
    with caplog.at_level(logging.ERROR, logger="repeat_guard_strands"):
        assert str(agent("Find.")).strip() == "stopped after 4 calls"
    assert ran == ["grep"] * 4
    assert all(reminders(m) == [] for m in model.seen)
    assert sorted(set(caplog.messages)) == [
        "repeat-tool-guard failed (RuntimeError: boom); the call runs unguarded",
        "repeat-tool-guard failed (RuntimeError: boom); the model is sent the conversation "
        "unchanged",
    ]


def test_messages_the_fold_cannot_pair_change_nothing() -> None:
    model, ran = LoopingModel(), list[str]()
    orphan = {"toolResult": {"toolUseId": "gone", "status": "success", "content": []}}
    reminder = {"text": "<system-reminder>\nfrom another harness\n</system-reminder>"}
    earlier: list[Any] = [
        {"role": "user", "content": [{"text": "Find."}]},
        {"role": "assistant", "content": [{"text": "Looking."}]},
        {"role": "user", "content": [orphan]},
        {"role": "user", "content": [reminder]},  # a harness reminder, not a user's message
    ]
    agent = looping_agent(model, ran, [RepeatGuard({"thresholds": [2]})], messages=earlier)
    assert str(agent("Go on.")).strip() == "stopped after 2 calls"
    assert [GENTLE_MARK in " ".join(reminders(m)) for m in model.seen] == [False, False, True]


def test_a_result_with_status_error_is_a_failed_result_unless_refused() -> None:
    from repeat_guard_strands._hooks import _finished

    calls: dict[object, tuple[str, object]] = {
        "a": ("make", {}),
        "b": ("make", {}),
        "c": ("make", {}),
    }
    answers: list[dict[str, Any]] = [
        {"toolUseId": "a", "status": "error", "content": [{"text": "boom"}]},
        {"toolUseId": "b", "status": "success", "content": [{"text": "built"}]},
        {"toolUseId": "c", "status": "error", "content": [{"text": "refused"}]},
    ]
    refused: set[object] = {"c"}
    assert [(e.failed, e.denied) for e in _finished(answers, calls, refused)] == [
        (True, False),
        (False, False),
        (False, True),
    ]
