"""``repeat-guard serve``: the JSONL sidecar, in process and as a real interactive subprocess."""

from __future__ import annotations

import io
import json
import os
import runpy
import selectors
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from repeat_guard import (
    AgentDisposed,
    Deny,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    ToolCallReturned,
    admit,
    reduce,
)
from repeat_guard_cli import AdmitQuery, LineError, StoredState, main, parse_event, serve

GREP = b'{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {"p": "x"}}\n'


def answers(data: bytes, config: GuardConfig | None = None) -> list[dict[str, Any]]:
    output = io.BytesIO()
    assert serve(config or GuardConfig(), io.BytesIO(data), output) == 0
    return [json.loads(line) for line in output.getvalue().splitlines()]


def test_every_line_gets_one_answer_and_reminders_fire_at_thresholds() -> None:
    got = answers(GREP * 3 + b'{"type": "prompt", "agent": "a"}\n' + GREP * 3)
    assert len(got) == 7
    assert got[0] == got[1] == got[3] == got[4] == got[5] == {"reminders": []}
    for index in (2, 6):
        (reminder,) = got[index]["reminders"]
        assert reminder == {
            "agent": "a",
            "tool": "grep",
            "count": 3,
            "form": "gentle",
            "summary": "grep × 3",
            "text": reminder["text"],
        }
        assert reminder["text"].startswith("<system-reminder>")


def test_agents_are_isolated_and_dispose_drops_a_chain() -> None:
    other = GREP.replace(b'"a"', b'"b"')
    dispose = b'{"type": "dispose", "agent": "a"}\n'
    got = answers(GREP * 2 + other * 2 + dispose + GREP + other, GuardConfig(thresholds=(3,)))
    assert [len(a["reminders"]) for a in got] == [0, 0, 0, 0, 0, 0, 1]


def test_agentless_and_denied_calls() -> None:
    agentless = b'{"type": "tool_call", "agent": null, "tool": "grep", "arguments": {}}\n'
    denied = GREP.replace(b"}}", b'}, "denied": true}')
    got = answers(agentless * 3 + denied * 2, GuardConfig(thresholds=(2,)))
    assert [len(a["reminders"]) for a in got] == [0, 0, 0, 0, 1]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"\xff\xfe{}\n", "line 1: not UTF-8 (invalid start byte at byte 0)"),
        (b"\n", "line 1: blank line, expected a JSON event"),
        (b"  \r\n", "line 1: blank line, expected a JSON event"),
        (b'{"type": \n', "line 1: invalid JSON: Expecting value at column 10"),
        (b"[" * 100_000 + b"\n", "line 1: JSON nested too deeply to parse"),
        (b"[1]\n", "line 1: expected a JSON object, got an array"),
        (b'{"type": "call"}\n', "line 1: unknown event type 'call' (known: "),
        (b'{"type": 3}\n', "line 1: unknown event type 3"),
        (b'{"agent": "a"}\n', "line 1: unknown event type None"),
        (b'{"type": "tool_call", "agent": "a"}\n', "lacks 'arguments', 'tool'"),
        (b'{"type": "prompt", "agent": "a", "tool": "x"}\n', "has unknown field 'tool'"),
        (b'{"type": "prompt"}\n', "line 1: prompt event lacks 'agent'"),
        (b'{"type": "dispose", "agent": null}\n', "'agent' must be a string, got None"),
        (
            b'{"type": "tool_call", "agent": 1, "tool": "t", "arguments": 1}\n',
            "'agent' must be a string or null, got 1",
        ),
        (
            b'{"type": "tool_call", "agent": "a", "tool": ["t"], "arguments": 1}\n',
            "'tool' must be a string, got ['t']",
        ),
        (
            b'{"type": "tool_call", "agent": "a", "tool": "t", "arguments": 1, "denied": 0}\n',
            "'denied' must be true or false, got 0",
        ),
    ],
)
def test_bad_lines_are_answered_with_an_error_and_serving_goes_on(
    line: bytes, message: str
) -> None:
    got = answers(GREP * 2 + line + GREP)
    assert len(got) == 4
    error = got[2]["error"]
    assert isinstance(error, str)
    assert message.removeprefix("line 1: ") in error
    assert error.startswith("line 3: ")
    # The bad line neither broke nor reset the chain: the next grep is the third.
    assert got[3]["reminders"] != []


def test_parse_event_builds_core_events() -> None:
    assert parse_event(1, b'{"type": "prompt", "agent": "a"}') == PromptSubmitted("a")
    assert parse_event(2, b'{"type": "dispose", "agent": "a"}') == AgentDisposed("a")
    call = b'{"type": "tool_call", "agent": null, "tool": "t", "arguments": "raw"}'
    assert parse_event(3, call) == ToolCallFinished(None, "t", "raw", False)
    assert str(parse_event(7, b"nope")).startswith("line 7: invalid JSON")
    assert isinstance(parse_event(7, b"nope"), LineError)


def test_main_serve_uses_stdin_stdout_and_the_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "guard.json"
    config.write_text('{"thresholds": [2]}', encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(GREP * 2)))
    output = io.BytesIO()
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(output))
    assert main(["serve", "--config", str(config)]) == 0
    got = [json.loads(line) for line in output.getvalue().splitlines()]
    assert got[0] == {"reminders": []}
    assert got[1]["reminders"][0]["count"] == 2


@pytest.mark.parametrize("module", ["repeat_guard_entry", "repeat_guard_cli"])
def test_python_dash_m_runs_main(
    module: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", [module, "check-config", "/nonexistent.json"])
    # The command ends its process with os._exit (``console``); here that raises instead.
    monkeypatch.setattr("os._exit", sys.exit)
    with pytest.raises(SystemExit) as exit_:
        runpy.run_module(module, run_name="__main__")
    assert exit_.value.code == 2
    assert "cannot read config file /nonexistent.json" in capsys.readouterr().err


def read_answer(stream: IO[bytes]) -> dict[str, Any]:
    # A generous bound so a broken sidecar fails the test instead of hanging it; not a timing.
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        assert selector.select(timeout=60), "the sidecar did not answer"
    answer: dict[str, Any] = json.loads(stream.readline())
    return answer


def test_a_real_sidecar_answers_each_line_before_the_next_is_sent() -> None:
    command = [sys.executable, "-m", "repeat_guard_cli", "serve", "--thresholds", "2,3"]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ)
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        sent_and_seen = []
        for line in (GREP, b"\xff\n", GREP, b"{}\n", GREP):
            process.stdin.write(line)
            process.stdin.flush()
            sent_and_seen.append(read_answer(process.stdout))
        process.stdin.close()
        assert process.wait() == 0
        assert process.stdout.read() == b""
    assert sent_and_seen[0] == {"reminders": []}
    assert str(sent_and_seen[1]["error"]).startswith("line 2: not UTF-8")
    assert [r["form"] for r in sent_and_seen[2]["reminders"]] == ["gentle"]
    assert str(sent_and_seen[3]["error"]).startswith("line 4: unknown event type None")
    assert [r["form"] for r in sent_and_seen[4]["reminders"]] == ["detailed"]


def test_the_console_script_runs_the_demo_and_rejects_a_bad_config() -> None:
    script = Path(sys.executable).parent / "repeat-guard"
    demo = subprocess.run([script, "demo"], capture_output=True, check=False)
    assert demo.returncode == 0
    assert "(gentle)" in demo.stdout.decode()
    bad = subprocess.run(
        [script, "serve", "--thresholds", "0"], capture_output=True, input=GREP, check=False
    )
    assert (bad.returncode, bad.stdout) == (2, b"")
    assert b"thresholds must be 2 or more" in bad.stderr


def test_any_bytes_get_exactly_one_answer_each() -> None:
    """Regression: a 5,000-digit integer used to end the sidecar with a traceback."""
    lines = [
        b'{"type": "prompt", "agent": ' + b"9" * 5000 + b"}\n",
        b'{"type": "tool_call", "agent": "\\ud800", "tool": "\\udfff", "arguments": 1}\n',
        b"\xff\xfe not utf-8\n",
        b"[" * 100_000 + b"\n",
        b'{"type": "tool_call", "agent": "a", "tool": "t", "arguments": '
        + b"[" * 900
        + b"]" * 900
        + b"}\n",
        b"\n",
    ]
    got = answers(b"".join(lines))
    assert len(got) == len(lines)
    assert got[0]["error"] == "line 1: invalid JSON: a number has more than 4300 digits"
    assert got[1] == {"reminders": []}
    assert [("error" in answer) for answer in got[2:4]] == [True, True]
    assert len(got[4]) == 1
    assert "error" in got[5]


def test_a_line_over_the_limit_is_answered_without_being_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import repeat_guard_transcripts._lines as lines_module

    monkeypatch.setattr(lines_module, "MAX_LINE_BYTES", 100)
    data = b"x" * 200 + b"\n" + GREP
    output = io.BytesIO()
    assert serve(GuardConfig(), io.BufferedReader(io.BytesIO(data), 16), output) == 0
    first, second = (json.loads(line) for line in output.getvalue().splitlines())
    assert first == {"error": "line 1: line of 201 bytes is longer than the limit of 100"}
    assert second == {"reminders": []}


def test_a_call_may_report_its_result_for_result_aware_progress() -> None:
    line = {"type": "tool_call", "agent": "a", "tool": "poll", "arguments": {}, "result": "x"}
    assert parse_event(1, json.dumps(line).encode()) == ToolCallFinished(
        "a", "poll", {}, result="x"
    )
    polls = b"".join(
        json.dumps({**line, "result": status}).encode() + b"\n"
        for status in ("queued", "running", "passed")
    )
    config = GuardConfig(thresholds=(3,), progress="result")
    assert [answer["reminders"] for answer in answers(polls, config)] == [[], [], []]


def test_a_result_may_come_after_its_call() -> None:
    call = {"type": "tool_call", "agent": "a", "tool": "poll", "arguments": {}}
    result = {**call, "type": "tool_result", "result": "x"}
    assert parse_event(1, json.dumps(result).encode()) == ToolCallReturned("a", "poll", {}, "x")
    lines = [call, {**result, "result": "queued"}, call, {**result, "result": "running"}, call]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    progress = GuardConfig(thresholds=(3,), progress="result")
    assert [answer["reminders"] for answer in answers(data, progress)] == [[]] * 5
    # Without progress the results change nothing: the third call reminds.
    assert [len(answer["reminders"]) for answer in answers(data)] == [0, 0, 0, 0, 1]


def test_a_failure_reported_after_its_call_is_answered_with_the_retry_reminder() -> None:
    make = {"type": "tool_call", "agent": "a", "tool": "make", "arguments": {}}
    failed = {**make, "type": "tool_result", "result": "error 2", "failed": True}
    edit = {"type": "tool_call", "agent": "a", "tool": "edit", "arguments": {}, "result": "ok"}
    lines = [edit, make, failed] * 3
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    got = [
        [r["form"] for r in answer["reminders"]]
        for answer in answers(data, GuardConfig(retry_window=6))
    ]
    assert got == [[]] * 8 + [["retry"]]


def test_an_admit_line_asks_the_core_before_a_call_runs_and_changes_nothing() -> None:
    ask = GREP.replace(b'"tool_call"', b'"admit"')
    refused = GREP.replace(b"}}", b'}, "denied": true}')
    got = answers(GREP * 2 + ask * 2 + refused + ask, GuardConfig(thresholds=(5,), deny_at=3))
    assert got[:2] == [{"reminders": []}] * 2
    # the third identical call would reach denyAt = 3: refused, and asking twice changes nothing
    state = GuardState.initial(GuardConfig(thresholds=(5,), deny_at=3))
    for _ in range(2):
        state, _ = reduce(state, ToolCallFinished("a", "grep", {"p": "x"}))
    verdict = admit(state, ToolCallFinished("a", "grep", {"p": "x"}))
    assert isinstance(verdict, Deny)
    assert got[2] == got[3] == {"admit": False, "reason": verdict.reason}
    assert got[4] == {"reminders": []}  # the refused attempt is reported, and counts
    assert got[5]["admit"] is False
    assert answers(ask) == [{"admit": True}]


def test_an_admit_line_is_read_as_the_call_it_asks_about() -> None:
    ask = {"type": "admit", "agent": "a", "tool": "grep", "arguments": {"p": 1}}
    assert parse_event(1, json.dumps(ask).encode()) == AdmitQuery(
        ToolCallFinished("a", "grep", {"p": 1})
    )
    wrong = parse_event(2, json.dumps({**ask, "extra": 1}).encode())
    assert isinstance(wrong, LineError)
    assert "extra" in wrong.message


ATTEMPT = GREP.replace(b'"tool_call"', b'"attempt"')


def test_an_attempt_line_admits_and_counts_in_one_answer() -> None:
    got = answers(ATTEMPT * 5, GuardConfig(thresholds=(2, 4), deny_at=3))
    assert [a["admit"] for a in got] == [True, True, False, False, False]
    assert [[r["count"] for r in a["reminders"]] for a in got] == [[], [2], [], [4], []]
    assert got[2]["reason"].startswith("refused: this would be the 3rd identical call")
    assert "reason" not in got[1]
    assert parse_event(1, ATTEMPT) == AdmitQuery(ToolCallFinished("a", "grep", {"p": "x"}), True)


def served(state: StoredState, data: bytes) -> list[dict[str, Any]]:
    output = io.BytesIO()
    assert serve(state.config, io.BytesIO(data), output, state) == 0
    return [json.loads(line) for line in output.getvalue().splitlines()]


def test_a_stored_state_outlives_the_sidecar(tmp_path: Path) -> None:
    path = str(tmp_path / "state.sqlite3")
    config = GuardConfig(thresholds=(3,))
    agentless = b'{"type": "attempt", "agent": null, "tool": "grep", "arguments": {}}\n'
    first = StoredState(path, config, clock=lambda: 100.0)
    assert served(first, ATTEMPT * 2 + agentless * 3) == [{"admit": True, "reminders": []}] * 5
    first.close()
    first.close()  # closing twice is harmless
    again = StoredState(path, config, clock=lambda: 200.0)
    (third,) = served(again, ATTEMPT)
    assert [r["count"] for r in third["reminders"]] == [3]
    prompt = b'{"type": "prompt", "agent": "a"}\n'
    assert [len(a["reminders"]) for a in served(again, prompt + ATTEMPT * 3)] == [0, 0, 0, 1]
    again.close()


def test_a_store_that_cannot_be_used_answers_an_error_and_the_next_line_retries(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.sqlite3"
    path.mkdir()  # a directory where the file should be
    state = StoredState(str(path), GuardConfig())
    got = served(state, ATTEMPT)
    assert got == [{"error": "line 1: state store unusable: IsADirectoryError"}]
    path.rmdir()
    assert served(state, ATTEMPT) == [{"admit": True, "reminders": []}]
    state.close()


def test_a_corrupt_store_is_set_aside_and_started_afresh(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    path.write_bytes(b"not a database" * 1000)
    state = StoredState(str(path), GuardConfig(), clock=lambda: 7.0)
    assert served(state, ATTEMPT) == [{"admit": True, "reminders": []}]
    state.close()
    (aside,) = [p.name for p in tmp_path.iterdir() if ".corrupt-7-" in p.name]
    assert (tmp_path / aside).read_bytes().startswith(b"not a database")


def test_main_serve_with_a_state_finds_the_project_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".repeat-guard.toml").write_text("denyAt = 2\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for flags, expected in (([], [True, False]), (["--config", "/dev/null/x"], None)):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(ATTEMPT * 2)))
        output = io.BytesIO()
        monkeypatch.setattr("sys.stdout", io.TextIOWrapper(output))
        state = str(tmp_path / f"state{len(flags)}.sqlite3")
        status = main(["serve", "--state", state, *flags])
        if expected is None:
            assert status == 2  # an explicit config is read as given
            continue
        assert status == 0
        got = [json.loads(line) for line in output.getvalue().splitlines()]
        assert [a["admit"] for a in got] == expected


def test_main_serve_with_a_bare_state_uses_the_hook_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REPEAT_GUARD_STATE", str(tmp_path / "hooks.sqlite3"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(ATTEMPT)))
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(io.BytesIO()))
    assert main(["serve", "--state"]) == 0
    assert (tmp_path / "hooks.sqlite3").is_file()
