"""Opt-in policies through one hook call at a time: cycles refused by ``cycleDenyAt``, cycles
that follow ``progress``, budgets counted over the session."""

from __future__ import annotations

import json
from pathlib import Path

from repeat_guard import GuardConfig
from repeat_guard_hooks import CLAUDE_CODE, CODEX, HookOptions, hook_config, run_hook


def _payload(cwd: Path, event: str, command: str, **more: object) -> bytes:
    payload = {
        "session_id": "s",
        "cwd": str(cwd),
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        **more,
    }
    return json.dumps(payload).encode()


def _project(tmp_path: Path, config: str) -> HookOptions:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".repeat-guard.toml").write_text(config)
    return HookOptions(dialect=CLAUDE_CODE, state=str(tmp_path / "st.db"))


def _answer(options: HookOptions, data: bytes) -> dict[str, object]:
    outcome = run_hook(options, data, 100.0)
    assert (outcome.status, outcome.stderr) == (0, "")
    answer: dict[str, object] = (
        json.loads(outcome.stdout)["hookSpecificOutput"] if outcome.stdout else {}
    )
    return answer


def test_cycle_deny_at_refuses_the_call_that_completes_the_cycle(tmp_path: Path) -> None:
    options = _project(tmp_path, "cyclePeriod = 2\ncycleDenyAt = 2\n")
    answers = [_answer(options, _payload(tmp_path, "PreToolUse", c)) for c in "abab"]
    decisions = [answer.get("permissionDecision") for answer in answers]
    assert decisions == [None, None, None, "deny"]
    reason = str(answers[3]["permissionDecisionReason"])
    assert reason.startswith("refused: this call would take the same cycle of 2 tool calls")
    assert '`Bash` {"command":"a"} → `Bash` {"command":"b"}' in reason
    # The refused attempt counted: going on round the cycle is refused, another call is not.
    assert _answer(options, _payload(tmp_path, "PreToolUse", "a"))["permissionDecision"] == "deny"
    assert _answer(options, _payload(tmp_path, "PreToolUse", "c")) == {}


def test_a_cycle_whose_output_changes_is_not_reported_under_progress(tmp_path: Path) -> None:
    options = _project(tmp_path, 'cyclePeriod = 2\ncycleThresholds = [2]\nprogress = "result"\n')
    contexts = []
    for step, command in enumerate("abababab"):
        output = f"{step // 4}"  # the output changes after the second round, then stays
        pre = _answer(options, _payload(tmp_path, "PreToolUse", command))
        post = _payload(tmp_path, "PostToolUse", command, tool_response={"stdout": output})
        after = _answer(options, post)
        contexts.append(
            str(pre.get("additionalContext", "")) + str(after.get("additionalContext", ""))
        )
    cycles = [n for n, text in enumerate(contexts, start=1) if "same cycle" in text]
    # Calls 1-4 answer "0": a cycle at the 4th. Calls 5 and 6 answer "1": progress over the calls
    # a round before, so the count starts over at call 5 and completes two rounds at the 8th.
    assert cycles == [4, 8]


def test_a_session_budget_counts_across_the_users_prompts(tmp_path: Path) -> None:
    options = _project(tmp_path, 'budgets = {"Bash" = 3}\nbudgetScope = "session"\n')
    prompt = json.dumps(
        {
            "session_id": "s",
            "cwd": str(tmp_path),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "go on",
        }
    ).encode()
    answers = []
    for command in "abcd":
        answers.append(_answer(options, _payload(tmp_path, "PreToolUse", command)))
        assert run_hook(options, prompt, 100.0).status == 0
    assert [answer.get("permissionDecision") for answer in answers] == [None, None, None, "deny"]
    assert "in this session, which is the budget" in str(answers[2]["additionalContext"])
    assert "matching `Bash` in this session is spent" in str(answers[3]["permissionDecisionReason"])


def _codex(cwd: Path, event: str, tool: str, output: str | None = None) -> bytes:
    payload: dict[str, object] = {
        "session_id": "s",
        "cwd": str(cwd),
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": {"session_id": 7, "chars": ""},
    }
    if output is not None:
        payload["tool_response"] = output
    return json.dumps(payload).encode()


def _codex_forms(tmp_path: Path, tool: str) -> list[bool]:
    options = HookOptions(dialect=CODEX, state=str(tmp_path / "st.db"))
    reminded = []
    for output in ["1 passed", "2 passed", "3 passed", "4 passed"]:
        pre = run_hook(options, _codex(tmp_path, "PreToolUse", tool), 100.0)
        post = run_hook(options, _codex(tmp_path, "PostToolUse", tool, output), 100.0)
        reminded.append(b"repeating" in pre.stdout + post.stdout)
    return reminded


def test_a_hook_uses_its_hosts_preset_unless_the_configuration_says_seed(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    # Codex's write_stdin polls a running command: its changing output is progress.
    assert _codex_forms(tmp_path, "write_stdin") == [False] * 4
    # A tool outside the preset keeps the design note's rule: the third identical call reminds.
    assert _codex_forms(tmp_path, "apply_patch") == [False, False, True, False]
    (tmp_path / ".repeat-guard.toml").write_text('preset = "seed"\n')
    (tmp_path / "st.db").unlink()
    assert _codex_forms(tmp_path, "write_stdin") == [False, False, True, False]


def test_a_host_with_no_preset_gets_none(tmp_path: Path) -> None:
    assert hook_config(None, str(tmp_path), "some-new-host") == GuardConfig()
    assert hook_config(None, str(tmp_path), "codex") == GuardConfig(preset="codex")
    assert hook_config(None, str(tmp_path)) == GuardConfig()


def test_the_same_command_failing_the_same_way_with_calls_between_is_a_retry(
    tmp_path: Path,
) -> None:
    # Claude Code counts the call at PreToolUse and reports its failure at PostToolUseFailure:
    # the failure fills in the call's place in the retry window, and the third one answers.
    options = _project(tmp_path, "retryWindow = 12\n")
    commit = "git add -A && git commit -m fix"
    contexts: list[str] = []
    for attempt in range(3):
        for command, ok in ((f"sed -i s/a/b/ f{attempt}.py", True), (commit, False)):
            pre = _answer(options, _payload(tmp_path, "PreToolUse", command))
            if ok:
                done = _payload(tmp_path, "PostToolUse", command, tool_response={"stdout": ""})
            else:
                error = f"Exit code 1\nruff....Failed\nf.py:{attempt + 3}:1: F401 unused import"
                done = _payload(
                    tmp_path, "PostToolUseFailure", command, error=error, is_interrupt=False
                )
            after = _answer(options, done)
            contexts += [str(pre.get("additionalContext", "")), str(after)]
    retries = [n for n, text in enumerate(contexts) if "failed 3 times the same way" in text]
    assert retries == [11]  # the third commit's PostToolUseFailure, and nothing before
    assert "'hookEventName': 'PostToolUseFailure'" in contexts[11]
    assert "F401 unused import" in contexts[11]


def test_without_a_retry_window_a_failure_opens_no_store(tmp_path: Path) -> None:
    options = _project(tmp_path, 'preset = "seed"\n')
    failure = _payload(
        tmp_path, "PostToolUseFailure", "make", error="Exit code 2", is_interrupt=False
    )
    assert _answer(options, failure) == {}
    assert not (tmp_path / "st.db").exists()
