"""The hooks in real CrewAI crews, with a scripted model of CrewAI's own ``BaseLLM`` kind that
repeats one call until it reads a reminder. ``e2e``: CrewAI takes seconds to import."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from crewai import Agent, Crew, Task
from crewai.crews.crew_output import CrewOutput
from crewai.hooks import (
    register_after_tool_call_hook,
    register_before_tool_call_hook,
    unregister_after_tool_call_hook,
    unregister_before_tool_call_hook,
)
from crewai.hooks.tool_hooks import ToolCallHookContext
from crewai.tools import tool

from repeat_guard_crewai import RepeatGuard

from ._support import DETAILED_MARK, GENTLE_MARK, LoopingLLM, crew_with, reminders

pytestmark = [
    pytest.mark.e2e,
    # CrewAI reads its own deprecated fields whenever it builds an agent
    pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai.*"),
]

GREP = ("grep", {"pattern": "TODO"})


def raw(output: object) -> str:
    """The text a kickoff ended with (a crew that does not stream returns a ``CrewOutput``)."""
    assert isinstance(output, CrewOutput)
    return output.raw


READ = ("read", {"path": "a.txt"})


def test_the_gentle_reminder_follows_the_third_call_and_the_model_stops() -> None:
    llm, ran = LoopingLLM(model="looping"), list[str]()
    with RepeatGuard():
        output = crew_with(llm, ran).kickoff()
    assert raw(output) == "stopped after 3 calls"
    assert ran == ["grep"] * 3
    assert [reminders(m) != [] for m in llm.seen] == [False] * 3 + [True]
    *_, result, reminder = llm.seen[-1]
    assert (result["role"], result["content"]) == ("tool", "no match for TODO")
    assert reminder == {"role": "user", "content": reminder["content"]}
    assert reminder["content"].startswith("<system-reminder>\n" + GENTLE_MARK)


def test_the_detailed_reminder_follows_the_fifth_call() -> None:
    llm, ran = LoopingLLM(model="looping", stop_at=DETAILED_MARK), list[str]()
    with RepeatGuard():
        assert raw(crew_with(llm, ran).kickoff()) == "stopped after 5 calls"
    gentle, detailed = reminders(llm.seen[-1])
    assert GENTLE_MARK in gentle
    assert 'grep` 5 times in a row with identical arguments: {"pattern":"TODO"}' in detailed


def test_a_model_that_alternates_tools_is_left_alone() -> None:
    llm, ran = LoopingLLM(model="looping", calls=(GREP, READ), stop_at=None, limit=10), list[str]()
    with RepeatGuard():
        crew = crew_with(llm, ran)
        crew.agents[0].max_iter = 20
        assert raw(crew.kickoff()) == "stopped after 10 calls"
    assert all(reminders(m) == [] for m in llm.seen)


def test_two_crews_at_once_never_share_a_chain() -> None:
    llm, ran = LoopingLLM(model="looping"), list[str]()

    async def both() -> list[Any]:
        crews = [crew_with(llm, ran, role=f"searcher {n}") for n in range(2)]
        return list(await asyncio.gather(*(crew.kickoff_async() for crew in crews)))

    with RepeatGuard():
        outputs = asyncio.run(both())
    assert [raw(output) for output in outputs] == ["stopped after 3 calls"] * 2
    assert ran == ["grep"] * 6
    assert sum(len(reminders(m)) for m in llm.seen) == 2


def test_a_crew_kicked_off_again_starts_over() -> None:
    llm, ran = LoopingLLM(model="looping"), list[str]()
    crew = crew_with(llm, ran)
    with RepeatGuard():
        crew.kickoff()
        assert raw(crew.kickoff()) == "stopped after 3 calls"
    assert ran == ["grep"] * 6


def test_other_hooks_still_see_every_call_and_a_deny_says_why() -> None:
    llm, ran = LoopingLLM(model="looping", stop_at=DETAILED_MARK), list[str]()
    seen_before: list[str] = []
    seen_after: list[str | None] = []

    def before(context: ToolCallHookContext) -> None:
        seen_before.append(context.tool_name)

    def after(context: ToolCallHookContext) -> None:
        seen_after.append(context.tool_result)

    register_before_tool_call_hook(before)
    register_after_tool_call_hook(after)
    try:
        with RepeatGuard({"denyAt": 4}):
            assert raw(crew_with(llm, ran).kickoff()) == "stopped after 5 calls"
    finally:
        unregister_before_tool_call_hook(before)
        unregister_after_tool_call_hook(after)
    assert ran == ["grep"] * 3
    # registered first, the other hooks saw every call before the guard refused two
    assert seen_before == ["grep"] * 5
    assert seen_after[:3] == ["no match for TODO"] * 3
    results = [m["content"] for m in llm.seen[-1] if m["role"] == "tool"]
    assert "4th identical" in results[3]
    assert "5th identical" in results[4]
    assert DETAILED_MARK in reminders(llm.seen[-1])[-1]


RETRY_MARK = "has now failed 3 times the same way, with other calls between"
MAKE = ("make", {"target": "all"})
EDIT = ("edit", {"path": "main.c"})


def building_crew(llm: LoopingLLM, ran: list[str], failure: Any) -> Crew:
    """A crew whose agent has ``make``, failing as ``failure(n)`` does on its ``n``-th run (by
    raising or returning a ``ToolFailure``), and ``edit``."""

    @tool("make")
    def make(target: str) -> Any:
        """Build a target."""
        ran.append("make")
        return failure(ran.count("make"))

    @tool("edit")
    def edit(path: str) -> str:
        """Edit a file."""
        ran.append("edit")
        return f"{path} edited"

    agent = Agent(role="builder", goal="Build.", backstory="Careful.", llm=llm, tools=[make, edit])
    task = Task(description="Build it.", expected_output="An answer.", agent=agent)
    return Crew(agents=[agent], tasks=[task])


def test_a_tool_that_raises_fails_and_its_third_failure_between_edits_is_a_retry() -> None:
    def raises(n: int) -> str:
        raise RuntimeError(f"main.c:{n}: undefined reference to `main'")

    llm = LoopingLLM(model="looping", calls=(MAKE, EDIT), stop_at="has now failed")
    ran: list[str] = []
    with RepeatGuard({"retryWindow": 8}):
        output = building_crew(llm, ran, raises).kickoff()
    assert raw(output) == "stopped after 5 calls"
    assert ran == ["make", "edit"] * 2 + ["make"]
    *_, result, reminder = llm.seen[-1]
    assert result["content"] == "Error executing tool: main.c:3: undefined reference to `main'"
    assert RETRY_MARK in reminder["content"]
    assert reminders(llm.seen[-2]) == []  # not at the second failure
    # what the guard read is what CrewAI reports of the task
    assert isinstance(output, CrewOutput)
    assert [r.failure.reason.value for r in output.tasks_output[0].tool_failures] == [
        "exception"
    ] * 3


def test_a_reported_failure_is_no_progress_over_the_last_one() -> None:
    from crewai.tools.tool_failure import ToolFailure

    words = ["alpha", "beta", "gamma", "delta"]

    def reports(n: int) -> ToolFailure:
        return ToolFailure(message=f"build failed: {words[n - 1]}")

    llm, ran = LoopingLLM(model="looping", calls=(MAKE,)), list[str]()
    with RepeatGuard({"progress": "result"}):
        output = building_crew(llm, ran, reports).kickoff()
    # each failure's text differs, yet a failure is no progress over a failure
    assert raw(output) == "stopped after 3 calls"
    results = [m["content"] for m in llm.seen[-1] if m["role"] == "tool"]
    assert results == ["build failed: alpha", "build failed: beta", "build failed: gamma"]
    assert GENTLE_MARK in reminders(llm.seen[-1])[-1]
