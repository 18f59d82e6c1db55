"""The hosts beyond Claude Code and Codex, from the hook inputs their real binaries sent.

The fixtures under ``fixtures/<host>/`` were recorded from GitHub Copilot CLI 1.0.102,
Gemini CLI 0.61.0 and Cline 3.0.65 run offline against a scripted model, with hooks that saved
their stdin (paths rewritten to ``/tmp/project`` and ``/tmp/home``): ``loop`` is one session
asking for the same ``ls`` several times, ``subagent`` adds a subagent that asks for it three
times, and ``permission-deny`` / ``policy-deny`` has the calls refused by the host's own permissions
(Copilot's ``--deny-tool 'shell(ls)'``, a Gemini CLI policy rule denying ``ls``), and
``failure`` (Copilot) runs ``echo step N`` and a command failing the same way
(``echo 'pre-commit: ruff failed' >&2; exit 1``) three times each, alternating. The
``*.request.json`` files are the end of a request that reached the model, for the README.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import (
    AgentDisposed,
    GuardState,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    reduce,
)
from repeat_guard_hooks import (
    CLINE,
    COPILOT,
    DIALECTS,
    GEMINI,
    AfterCall,
    AgentEvent,
    HookOptions,
    SessionEnded,
    Unused,
    cancel_answer,
    copilot_answer,
    copilot_result,
    decision_answer,
    hook_input_or_reason,
    hook_specific_output,
    millisecond_group,
    run_hook,
)

FIXTURES = Path(__file__).parent / "fixtures"
LS = {"command": "ls", "description": "list"}


def _inputs(host: str, name: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / host / name).read_text().splitlines()
    return [json.loads(line) for line in lines]


def _reminder(count: int, tool: str, arguments: object) -> Reminder:
    state = GuardState.initial()
    fired: list[Reminder] = []
    for _ in range(count):
        state, reminders = reduce(state, ToolCallFinished("a", tool, arguments))
        fired.extend(reminders)
    return fired[-1]


def _replay(host: str, name: str, tmp_path: Path) -> list[tuple[str, object]]:
    """Each recorded input run through the hook: its event and what the answer said."""
    options = HookOptions(dialect=DIALECTS[host], state=str(tmp_path / "state.sqlite3"))
    seen: list[tuple[str, object]] = []
    for payload in _inputs(host, name):
        outcome = run_hook(options, json.dumps(payload).encode(), 100.0)
        assert (outcome.status, outcome.stderr) == (0, "")
        seen.append((payload["hook_event_name"], json.loads(outcome.stdout or "null")))
    assert not (tmp_path / "state.sqlite3.log").exists()
    return seen


def test_copilot_events_are_claude_codes() -> None:
    session = _inputs("copilot", "loop.hooks.jsonl")[0]["session_id"]
    actions = [
        hook_input_or_reason(COPILOT, json.dumps(p).encode())
        for p in _inputs("copilot", "loop.hooks.jsonl")
    ]
    kinds = [(a.hook_event, a.cwd, a.action) for a in actions if not isinstance(a, str)]
    assert len(kinds) == len(actions)
    assert kinds[0] == ("SessionStart", "/tmp/project", Unused())
    assert kinds[1] == (
        "UserPromptSubmit",
        "/tmp/project",
        AgentEvent(session, PromptSubmitted(session)),
    )
    assert kinds[2][2] == AgentEvent(session, ToolCallFinished(session, "Bash", LS))
    returned = kinds[3][2]
    assert isinstance(returned, AgentEvent)
    assert isinstance(returned.event, ToolCallReturned)
    # The shell's id (new for every command) is dropped, its exit code kept.
    assert returned.event.result == {
        "result_type": "success",
        "text_result_for_llm": "\n<completed with exit code 0>",
    }
    assert not returned.event.failed
    assert kinds[-1] == ("SessionEnd", "/tmp/project", SessionEnded(session))


def test_copilot_reports_a_failed_call_as_failed() -> None:
    # Copilot's tool result types are success, failure, rejected and denied: only a failure
    # is the tool failing (the others did not run it).
    (post,) = [
        p for p in _inputs("copilot", "loop.hooks.jsonl") if p["hook_event_name"] == "PostToolUse"
    ][:1]
    results = {}
    for kind in ("success", "failure", "denied", 7):
        payload = {**post, "tool_result": {**post["tool_result"], "result_type": kind}}
        read = hook_input_or_reason(COPILOT, json.dumps(payload).encode())
        assert not isinstance(read, str)
        assert isinstance(read.action, AgentEvent)
        assert isinstance(read.action.event, ToolCallReturned)
        results[kind] = read.action.event.failed
    assert results == {"success": False, "failure": True, "denied": False, 7: False}


def _returned(host: str, name: str) -> list[ToolCallReturned]:
    dialect = DIALECTS[host]
    found = []
    for payload in _inputs(host, name):
        read = hook_input_or_reason(dialect, json.dumps(payload).encode())
        assert not isinstance(read, str)
        if isinstance(read.action, AgentEvent) and isinstance(read.action.event, ToolCallReturned):
            found.append(read.action.event)
    return found


def test_copilot_says_a_command_failed_only_by_its_exit_code() -> None:
    # Recorded: `echo step N` and `echo 'pre-commit: ruff failed' >&2; exit 1`, three times each,
    # alternating. Copilot gives the failing command result_type "success", and ends its text
    # with the shell's id, a new one each time, and the exit code.
    returned = _returned("copilot", "failure.hooks.jsonl")
    raw = [p for p in _inputs("copilot", "failure.hooks.jsonl") if "tool_result" in p]
    assert {p["tool_result"]["result_type"] for p in raw} == {"success"}
    assert raw[1]["tool_result"]["text_result_for_llm"] == (
        "pre-commit: ruff failed\n<shellId: 1 completed with exit code 1>"
    )
    assert [r.failed for r in returned] == [False, True] * 3
    failing = {json.dumps(r.result) for r in returned if r.failed}
    assert failing == {
        json.dumps(
            {
                "result_type": "success",
                "text_result_for_llm": "pre-commit: ruff failed\n<completed with exit code 1>",
            }
        )
    }


@pytest.mark.parametrize(
    ("response", "read"),
    [
        ("text", ("text", False)),
        ({"result_type": "failure"}, ({"result_type": "failure"}, True)),
        ({"text_result_for_llm": 7}, ({"text_result_for_llm": 7}, False)),
        ({"text_result_for_llm": "no shell"}, ({"text_result_for_llm": "no shell"}, False)),
        (
            {"text_result_for_llm": "x\n<shellId: 12 completed with exit code -2>\n"},
            ({"text_result_for_llm": "x\n<completed with exit code -2>"}, True),
        ),
        (
            # The id and code mid-text are the command's own output, not Copilot's ending.
            {"text_result_for_llm": "<shellId: 1 completed with exit code 1> then more"},
            ({"text_result_for_llm": "<shellId: 1 completed with exit code 1> then more"}, False),
        ),
    ],
)
def test_copilot_results_read_by_their_shape(response: object, read: object) -> None:
    assert copilot_result("bash", response) == read


def test_copilot_gets_the_retry_reminder_with_the_third_identical_failure(tmp_path: Path) -> None:
    # The recorded run replayed under retryWindow: the third failure of the same command, other
    # calls between, is answered with the reminder at the top level, where Copilot reads a
    # postToolUse answer's context (it reads a preToolUse one's in hookSpecificOutput).
    config = tmp_path / "guard.toml"
    config.write_text("retryWindow = 12\n")
    options = HookOptions(COPILOT, str(tmp_path / "state.sqlite3"), config=str(config))
    answers = []
    for payload in _inputs("copilot", "failure.hooks.jsonl"):
        outcome = run_hook(options, json.dumps(payload).encode(), 100.0)
        assert (outcome.status, outcome.stderr) == (0, "")
        answers.append((payload["hook_event_name"], json.loads(outcome.stdout or "null")))
    said = [(n, event) for n, (event, answer) in enumerate(answers) if answer is not None]
    assert said == [(12, "PostToolUse")]
    answer = answers[12][1]
    assert answer["additionalContext"] == answer["hookSpecificOutput"]["additionalContext"]
    assert "has now failed 3 times the same way" in answer["additionalContext"]
    assert answer["additionalContext"].startswith("<system-reminder>")
    assert not (tmp_path / "state.sqlite3.log").exists()


def test_copilot_answers_a_call_as_claude_code_does() -> None:
    for context, denied in (("mind", None), (None, "no"), ("mind", "no")):
        claude = hook_specific_output("PreToolUse", context, denied)
        assert copilot_answer("PreToolUse", context, denied) == claude
    assert copilot_answer("PostToolUse", None, None) == hook_specific_output(
        "PostToolUse", None, None
    )


def test_copilot_subagent_calls_are_the_subagents_own_agent() -> None:
    inputs = _inputs("copilot", "subagent.hooks.jsonl")
    session = inputs[0]["session_id"]
    (stop,) = [p for p in inputs if p["hook_event_name"] == "SubagentStop"]
    sub = f"{session}/{stop['agent_id']}"
    actions = [hook_input_or_reason(COPILOT, json.dumps(p).encode()) for p in inputs]
    agents = [
        a.action.event.agent
        for a in actions
        if not isinstance(a, str)
        and isinstance(a.action, AgentEvent)
        and isinstance(a.action.event, ToolCallFinished)
    ]
    # Inside the subagent, session_id is the subagent's own id: the session is parent_agent_id.
    assert agents == [session, session, session, sub, sub, sub, session]
    prompts = [
        a.action.event
        for a in actions
        if not isinstance(a, str)
        and a.hook_event == "UserPromptSubmit"
        and isinstance(a.action, AgentEvent)
    ]
    assert prompts == [PromptSubmitted(session), PromptSubmitted(sub)]
    (ended,) = [a for a in actions if not isinstance(a, str) and a.hook_event == "SubagentStop"]
    assert ended.action == AgentEvent(session, AgentDisposed(sub))


def test_copilot_answers_the_third_call_of_the_subagent(tmp_path: Path) -> None:
    seen = _replay("copilot", "subagent.hooks.jsonl", tmp_path)
    answered = [(event, answer) for event, answer in seen if answer is not None]
    # Copilot adds no envelope: the reminder goes with the core's own.
    context = _reminder(3, "Bash", LS).text
    output = {"hookEventName": "PreToolUse", "additionalContext": context}
    assert answered == [("PreToolUse", {"hookSpecificOutput": output})]


def test_copilot_counts_calls_its_permissions_refused(tmp_path: Path) -> None:
    # Refused by --deny-tool: PreToolUse fired for both, and nothing after either.
    events = [p["hook_event_name"] for p in _inputs("copilot", "permission-deny.hooks.jsonl")]
    assert events.count("PreToolUse") == 2
    assert "PostToolUse" not in events
    options = HookOptions(dialect=COPILOT, state=str(tmp_path / "state.sqlite3"))
    pre = b""
    for payload in _inputs("copilot", "permission-deny.hooks.jsonl"):
        if payload["hook_event_name"] == "PreToolUse":
            pre = json.dumps(payload).encode()
            assert run_hook(options, pre, 100.0).stdout == b""
    # Both refused calls counted: one more identical call is the third in a row.
    answer = json.loads(run_hook(options, pre, 100.0).stdout)
    assert answer["hookSpecificOutput"]["additionalContext"] == _reminder(3, "Bash", LS).text


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit"])
def test_copilot_reports_a_bad_configuration_with_status_0(tmp_path: Path, event: str) -> None:
    # Copilot denies a call whose preToolUse hook exits non-zero: a bad configuration must not.
    (tmp_path / ".repeat-guard.toml").write_text("thresholds = 3\n")
    payload = {**_inputs("copilot", "loop.hooks.jsonl")[2], "cwd": str(tmp_path)}
    payload["hook_event_name"] = event
    options = HookOptions(dialect=COPILOT, state=str(tmp_path / "state.sqlite3"))
    outcome = run_hook(options, json.dumps(payload).encode(), 100.0)
    assert outcome.status == 0
    assert outcome.stdout == b""
    assert outcome.stderr.startswith("repeat-guard: invalid configuration in ")


def test_gemini_events_and_where_they_sit() -> None:
    inputs = _inputs("gemini", "loop.hooks.jsonl")
    session = inputs[0]["session_id"]
    actions = [hook_input_or_reason(GEMINI, json.dumps(p).encode()) for p in inputs]
    meaning = [(a.hook_event, a.action) for a in actions if not isinstance(a, str)]
    assert len(meaning) == len(inputs)
    call = AgentEvent(session, ToolCallFinished(session, "run_shell_command", {"command": "ls"}))
    output = {"llmContent": "<untrusted_context>\nOutput: (empty)\n</untrusted_context>"}
    result = {**output, "returnDisplay": ""}
    returned = ToolCallReturned(session, "run_shell_command", {"command": "ls"}, result, False)
    assert meaning[:4] == [
        ("SessionStart", Unused()),
        ("BeforeAgent", AgentEvent(session, PromptSubmitted(session))),
        ("BeforeTool", call),
        ("AfterTool", AfterCall(session, session, returned)),
    ]
    assert meaning[-2:] == [("AfterAgent", Unused()), ("SessionEnd", SessionEnded(session))]
    # Each AfterTool brings the call's result, less the process group id Gemini CLI writes
    # anew for every command (13523, 13617... in the recording): the four are one result.
    afters = [action for event, action in meaning if event == "AfterTool"]
    assert afters == [AfterCall(session, session, returned)] * 4
    assert len({json.dumps(p["tool_response"]) for p in inputs if "tool_response" in p}) == 4


def test_gemini_hears_the_third_calls_reminder_after_it_ran(tmp_path: Path) -> None:
    seen = _replay("gemini", "loop.hooks.jsonl", tmp_path)
    answered = [(i, event, answer) for i, (event, answer) in enumerate(seen) if answer]
    # Counted at the third BeforeTool (index 6), answered at its AfterTool, in Gemini CLI's
    # own envelope (<hook_context>), so with the reminder's body.
    body = _reminder(3, "run_shell_command", {"command": "ls"}).body
    output = {"hookEventName": "AfterTool", "additionalContext": body}
    assert answered == [(7, "AfterTool", {"hookSpecificOutput": output})]


def test_gemini_counts_calls_its_policy_refused(tmp_path: Path) -> None:
    # Refused by a policy rule: BeforeTool fired for both calls, AfterTool for neither.
    inputs = _inputs("gemini", "policy-deny.hooks.jsonl")
    assert [p["hook_event_name"] for p in inputs] == [
        "SessionStart",
        "BeforeAgent",
        "BeforeTool",
        "BeforeTool",
        "AfterAgent",
        "SessionEnd",
    ]
    options = HookOptions(dialect=GEMINI, state=str(tmp_path / "state.sqlite3"))
    for payload in inputs[:4]:
        assert run_hook(options, json.dumps(payload).encode(), 100.0).stdout == b""
    # One more identical call is the third; its reminder waits for its AfterTool.
    assert run_hook(options, json.dumps(inputs[3]).encode(), 100.0).stdout == b""
    after = {**inputs[3], "hook_event_name": "AfterTool", "tool_response": {}}
    answer = json.loads(run_hook(options, json.dumps(after).encode(), 100.0).stdout)
    assert answer["hookSpecificOutput"]["additionalContext"].startswith("You are repeating")


def test_gemini_subagent_calls_are_the_sessions_own(tmp_path: Path) -> None:
    # Gemini CLI 0.61.0 sends a subagent's calls with the session's id and nothing else: they
    # join the parent's chain (the README's "gaps").
    inputs = _inputs("gemini", "subagent.hooks.jsonl")
    agents = {
        a.action.event.agent
        for a in (hook_input_or_reason(GEMINI, json.dumps(p).encode()) for p in inputs)
        if not isinstance(a, str) and isinstance(a.action, AgentEvent)
    }
    assert agents == {inputs[0]["session_id"]}


def test_gemini_refuses_with_a_decision_and_says_the_reminder_with_it() -> None:
    assert decision_answer("BeforeTool", None, "no") == {"decision": "deny", "reason": "no"}
    assert decision_answer("BeforeTool", "stop", "no") == {
        "decision": "deny",
        "reason": "no\n\nstop",
    }
    group = millisecond_group("BeforeTool", "call", "rg hook gemini")
    assert group == {
        "matcher": "*",
        "hooks": [{"type": "command", "command": "rg hook gemini", "timeout": 10000}],
    }


def test_cline_events_and_where_they_sit() -> None:
    inputs = _inputs("cline", "subagent.hooks.jsonl")
    root = inputs[0]["sessionContext"]["rootSessionId"]
    main, sub = inputs[0]["agent_id"], inputs[6]["agent_id"]
    assert inputs[6]["parent_agent_id"] == main
    actions = [hook_input_or_reason(CLINE, json.dumps(p).encode()) for p in inputs]
    meaning = [(a.hook_event, a.cwd, a.action) for a in actions if not isinstance(a, str)]
    assert len(meaning) == len(inputs)
    assert {cwd for _, cwd, _ in meaning} == {"/tmp/project"}
    calls = [
        (action.event.agent, action.event.tool)
        for _, _, action in meaning
        if isinstance(action, AgentEvent) and isinstance(action.event, ToolCallFinished)
    ]
    ls = "run_commands"
    main_key, sub_key = f"{root}/{main}", f"{root}/{sub}"
    assert calls == [
        (main_key, ls),
        (main_key, ls),
        (main_key, "spawn_agent"),
        (sub_key, ls),
        (sub_key, ls),
        (sub_key, ls),
        (main_key, ls),
    ]
    ends = [action for event, _, action in meaning if event == "agent_end"]
    assert ends == [
        AgentEvent(root, AgentDisposed(sub_key)),
        AgentEvent(root, AgentDisposed(main_key)),
    ]


def test_cline_answers_the_third_call_with_context(tmp_path: Path) -> None:
    options = HookOptions(dialect=CLINE, state=str(tmp_path / "state.sqlite3"))
    answers = [
        run_hook(options, json.dumps(p).encode(), 100.0).stdout
        for p in _inputs("cline", "loop.hooks.jsonl")
    ]
    body = _reminder(3, "run_commands", {"commands": ["ls"]}).body
    assert [json.loads(a) for a in answers if a] == [{"context": body}]


def test_cline_refuses_by_cancelling() -> None:
    assert cancel_answer("tool_call", None, "no") == {"cancel": True, "errorMessage": "no"}
    assert cancel_answer("tool_call", "stop", "no") == {
        "cancel": True,
        "errorMessage": "no\n\nstop",
    }
    with pytest.raises(NotImplementedError):
        CLINE.entry("tool_call", "call", "repeat-guard hook cline")


def test_cline_prompt_starts_the_agent_over(tmp_path: Path) -> None:
    # Not recorded (a headless run is one prompt): a recorded call with Cline's prompt_submit.
    options = HookOptions(dialect=CLINE, state=str(tmp_path / "state.sqlite3"))
    call = _inputs("cline", "loop.hooks.jsonl")[1]
    prompt = {**call, "hookName": "prompt_submit"}
    del prompt["tool_call"]
    root, agent = call["sessionContext"]["rootSessionId"], call["agent_id"]
    parsed = hook_input_or_reason(CLINE, json.dumps(prompt).encode())
    assert not isinstance(parsed, str)
    assert parsed.action == AgentEvent(root, PromptSubmitted(f"{root}/{agent}"))
    for data in (call, call, prompt, call, call):
        assert run_hook(options, json.dumps(data).encode(), 100.0).stdout == b""
    # Without the reset this would be the fifth identical call; it is the third.
    answer = json.loads(run_hook(options, json.dumps(call).encode(), 100.0).stdout)
    assert answer == {"context": _reminder(3, "run_commands", {"commands": ["ls"]}).body}
