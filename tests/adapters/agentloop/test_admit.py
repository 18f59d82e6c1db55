"""The loop asks its ``tool_pre_execute`` hook first: the guard's ``admit`` refuses a call."""

from __future__ import annotations

import asyncio

import pytest

from repeat_guard_agentloop import AgentLoop, ScriptedModel, hookspecs

from ._support import call, contexts, results, tools


def test_the_guard_refuses_the_call_that_reaches_deny_at() -> None:
    async def scenario() -> AgentLoop:
        loop = AgentLoop(tools("grep"), guard={"denyAt": 3, "thresholds": [2]})
        agent = loop.spawn("main", ScriptedModel([*[call("grep", {"q": 1})] * 4, "done"]))
        await loop.followup(agent, "go")
        return loop

    loop = asyncio.run(scenario())
    outcome = [(r.denied, r.is_error) for r in results(loop.log)]
    assert outcome == [(False, False), (False, False), (True, True), (True, True)]
    refused = results(loop.log)[2]
    assert refused.content.startswith("denied: refused: this would be the 3rd identical call")
    reminders = [c.reminder for c in contexts(loop.log)]
    assert [(r.form, r.count) for r in reminders if r is not None] == [("gentle", 2)]


@pytest.mark.parametrize("progress", ["off", "result"])
def test_a_refusal_is_not_progress_so_the_limit_holds(progress: str) -> None:
    # The loop reports a refused attempt with its refusal as the result; under progress =
    # "result" that text once read as a new result and let every other attempt run.
    async def scenario() -> AgentLoop:
        config = {"denyAt": 3, "thresholds": [2, 5], "progress": progress}
        loop = AgentLoop(tools("status"), guard=config)
        agent = loop.spawn("main", ScriptedModel([*[call("status", {"id": 1})] * 8, "done"]))
        await loop.followup(agent, "go")
        return loop

    loop = asyncio.run(scenario())
    assert [r.denied for r in results(loop.log)] == [False, False, *[True] * 6]


def test_a_pre_execute_answer_that_is_not_a_reason_is_a_host_error() -> None:
    class Wrong:
        @hookspecs.hookimpl
        def tool_pre_execute(self, execution: object) -> object:
            return 42

    async def scenario() -> None:
        loop = AgentLoop(tools("ls"))
        loop.pm.register(Wrong())
        agent = loop.spawn("main", ScriptedModel([call("ls"), "ok"]))
        await loop.followup(agent, "go")

    with pytest.raises(TypeError, match="expected a str or None"):
        asyncio.run(scenario())
