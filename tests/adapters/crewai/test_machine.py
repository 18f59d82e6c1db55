"""The testing kit's state machine over the hooks: each agent is one run of CrewAI's hook
contexts (a task executed by an agent), its calls asked about by the before-tool hook, counted by
the after-tool hook, and its reminders read from the messages the before-LLM hook appends,
call for call against the reference model."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace

from crewai.tools.tool_failure import ToolFailure, ToolFailureRecord, tool_failure_collector
from hypothesis import settings

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    reduce,
)
from repeat_guard_crewai import RepeatGuard, reminder_message
from repeat_guard_testing import (
    ARGUMENTS,
    HarnessMachine,
    events,
    failure_events,
    policy_configs,
)

from ._support import Run

# CrewAI hands tools their arguments as a dict, always
DICT_ARGUMENTS = [arguments for arguments in ARGUMENTS if isinstance(arguments, dict)]


class CrewAIHarness(HarnessMachine):
    configs = policy_configs()
    events = events(arguments=DICT_ARGUMENTS)
    produced: tuple[Reminder, ...] = ()

    def start(self, config: GuardConfig) -> None:
        def recording(state: GuardState, event: Event) -> tuple[GuardState, tuple[Reminder, ...]]:
            state, self.produced = reduce(state, event)
            return state, self.produced

        self.guard = RepeatGuard(config, reducer=recording)
        self.runs: dict[str, Run] = {}
        self.retired: list[Run] = []  # kept alive, so no new run reuses their objects' ids
        self.blocked: set[str] = set()
        self.failures: list[ToolFailureRecord] | None = None

    def _run(self, agent: str) -> Run:
        if agent not in self.runs:
            run = self.runs[agent] = Run()
            self.guard.before_llm_call(run.model_call())  # a run starts with a model call
        return self.runs[agent]

    def admit(self, call: ToolCallFinished) -> bool | None:
        if call.agent is None:
            return None
        assert isinstance(call.arguments, dict)
        context = self._run(call.agent).tool_call(call.tool, dict(call.arguments))
        self.produced = ()  # a refused attempt is counted here, its reminders with it
        allowed = self.guard.before_tool_call(context) is None
        if not allowed:
            self.blocked.add(call.agent)
        return allowed

    def deliver(self, event: Event) -> Iterable[Reminder]:
        if event.agent is None:
            return ()
        if isinstance(event, AgentDisposed):
            if event.agent in self.runs:
                self.retired.append(self.runs.pop(event.agent))
            return ()
        run = self._run(event.agent)
        if isinstance(event, PromptSubmitted):
            run.iterations = 0  # the agent kicked off again: a new run of the same task
            self.guard.before_llm_call(run.model_call())
            return ()
        assert isinstance(event, ToolCallFinished)
        assert isinstance(event.arguments, dict)
        blocked = event.agent in self.blocked
        self.blocked.discard(event.agent)
        if not blocked:
            self.produced = ()
        result = f"Tool execution blocked by hook. Tool: {event.tool}" if blocked else "done"
        if event.result is not None:  # drawn with its result (the failures' machine)
            result = json.dumps(event.result)
        self.guard.after_tool_call(run.tool_call(event.tool, dict(event.arguments), result))
        if event.failed and self.failures is not None:  # CrewAI records it after the hooks
            self.failures.append(
                ToolFailureRecord(
                    tool_name=event.tool,
                    failure=ToolFailure(message=result),
                    tool_args=dict(event.arguments),
                    agent_role=None,  # what CrewAI writes for the stand-in's agent and task
                    task_id=None,
                )
            )
        before = len(run.messages)
        # a finished call is counted at the next model call (a refused one when refused)
        self.guard.before_llm_call(run.model_call())
        produced: tuple[Reminder, ...] = self.produced
        # the call's reminders are exactly the messages the next model call was given
        assert run.messages[before:] == [reminder_message(reminder) for reminder in produced]
        return tuple(replace(each, agent=event.agent) for each in produced)


# as the other adapters' model checks: each step runs the framework's own objects, and no
# deadline, since a loaded machine may take longer than Hypothesis's default for one
CrewAIHarness.TestCase.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
TestCrewAIHarness = CrewAIHarness.TestCase


class CrewAIFailuresHarness(CrewAIHarness):
    """The same with results drawn, and a failure recorded in CrewAI's collector for each call
    drawn failed, over one agent's calls of two tools with one argument each (the kit's narrow
    breadth)."""

    configs = policy_configs(refusals=False)
    events = failure_events(arguments=DICT_ARGUMENTS[:1])

    def start(self, config: GuardConfig) -> None:
        super().start(config)
        self.collector = tool_failure_collector()  # one execution: the whole run
        self.failures = self.collector.__enter__()

    def teardown(self) -> None:
        self.collector.__exit__(None, None, None)


CrewAIFailuresHarness.TestCase.settings = settings(
    max_examples=200, stateful_step_count=40, deadline=None
)
TestCrewAIFailuresHarness = CrewAIFailuresHarness.TestCase
