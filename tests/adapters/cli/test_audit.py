"""The ``audit`` command: arguments, default places, outputs written safely, progress on a
terminal, and errors that exit 2 before any input is read."""

from __future__ import annotations

import gc
import gzip
import io
import json
import lzma
import os
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import BinaryIO

import pytest

from repeat_guard_audit import _engine as engine
from repeat_guard_audit import _fold as fold
from repeat_guard_cli import _audit as command
from repeat_guard_cli import main
from repeat_guard_cli._errors import UsageError

from .terminal import Terminal, screen

STAMP = "2026-12-01T10:00:00Z"


def claude_session(path: Path, repeats: int, session: str = "s1") -> None:
    """A Claude Code session with one call repeated ``repeats`` times."""
    common = {"sessionId": session, "cwd": "/home/dev/p", "timestamp": STAMP}
    lines = [{**common, "type": "user", "message": {"role": "user", "content": "go"}}]
    for n in range(repeats):
        use = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "ls"}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "a b"}
        usage = {"output_tokens": 10, "input_tokens": 3, "cache_read_input_tokens": 1000 * n}
        lines.append({**common, "type": "assistant", "message": {"content": [use], "usage": usage}})
        lines.append({**common, "type": "user", "message": {"content": [result]}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def run(args: list[str], err: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), err or io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["audit", *args])
    return status, out.getvalue(), err.getvalue()


def test_a_clean_audit_exits_0_with_the_summary(tmp_path: Path) -> None:
    claude_session(tmp_path / "p" / "s1.jsonl", 5)
    status, out, err = run([str(tmp_path), "--jobs", "1"])
    assert (status, err) == (0, "")
    assert "calls 5   tracked 5   wasted 4 (80.0%)" in out
    # Calls 2 to 5 were wasted: 4 turns of 10 output and 3 + 1000 * n input tokens each.
    assert "wasted calls: 40 output, 10,012 input, over 4 turns" in out


def test_csv_counts_the_cycle_and_budget_reminders(tmp_path: Path) -> None:
    common = {"sessionId": "s1", "cwd": "/home/dev/p", "timestamp": STAMP}
    lines = [{**common, "type": "user", "message": {"role": "user", "content": "go"}}]
    for n in range(12):  # ls, pwd, ls, pwd, ...: a cycle of two calls, no repeat in a row
        command_ = ("ls", "pwd")[n % 2]
        use = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": command_}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "a b"}
        lines.append({**common, "type": "assistant", "message": {"content": [use]}})
        lines.append({**common, "type": "user", "message": {"content": [result]}})
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "guard.toml").write_text('cyclePeriod = 2\n\n[budgets]\n"Bash" = 5\n')
    argv = [str(tmp_path / "s.jsonl"), "--config", str(tmp_path / "guard.toml"), "--jobs", "1"]
    expected = {"gentle": 0, "detailed": 0, "cycle": 2, "budget": 1}
    status, out, _ = run([*argv, "--format", "csv"])
    assert status == 0
    header, *rows = (line.split(",") for line in out.splitlines())
    assert [row[0] for row in rows] == ["session", "totals"]
    for row in rows:
        counts = dict(zip(header, row, strict=True))
        assert counts["reminders"] == "3"
        assert {form: int(counts[form]) for form in expected} == expected
    _, out, _ = run([*argv, "--format", "json"])
    assert json.loads(out.splitlines()[-1])["reminders_by_form"] == expected


def test_json_lines_stream_sessions_then_totals(tmp_path: Path) -> None:
    claude_session(tmp_path / "a.jsonl", 3, "one")
    claude_session(tmp_path / "b.jsonl", 1, "two")
    status, out, _ = run([str(tmp_path), "--format", "json", "--jobs", "1"])
    records = [json.loads(line) for line in out.splitlines()]
    assert status == 0
    assert [(r["type"], r.get("session")) for r in records] == [
        ("session", "one"),
        ("session", "two"),
        ("totals", None),
    ]
    assert (records[2]["files"], records[2]["sessions"], records[2]["wasted"]) == (2, 2, 2)


def test_no_path_audits_the_agents_own_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    claude_session(tmp_path / ".claude" / "projects" / "-home-dev-p" / "s.jsonl", 2)
    status, out, _ = run(["--format", "csv", "--jobs", "1"])
    assert status == 0
    assert out.splitlines()[-1].startswith("totals,,,,,1,1,2,2,1,")


def test_no_path_and_no_agent_places_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    status, out, err = run([])
    assert (status, out) == (2, "")
    assert "no PATH given and none of ~/" in err
    assert "~/.claude/projects, ~/.codex/sessions, " in err


def test_no_path_audits_every_place_a_registered_reader_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # opencode's and goose's databases (files, not folders) and an OpenHands conversation.
    import shutil

    monkeypatch.setenv("HOME", str(tmp_path))
    fixtures = Path(__file__).parents[1] / "transcripts" / "fixtures"
    share = tmp_path / ".local" / "share"
    (share / "opencode").mkdir(parents=True)
    shutil.copyfile(fixtures / "opencode" / "opencode.db", share / "opencode" / "opencode.db")
    (share / "goose" / "sessions").mkdir(parents=True)
    shutil.copyfile(fixtures / "goose" / "sessions.db", share / "goose/sessions/sessions.db")
    conversations = tmp_path / ".openhands" / "conversations"
    shutil.copytree(fixtures / "openhands" / "conversation", conversations / "c1")
    status, out, _ = run(["--format", "json", "--jobs", "1"])
    assert status == 0
    sessions = [json.loads(line) for line in out.splitlines()[:-1]]
    # opencode's steps say 5 output and 10 input tokens (3 wasted calls); goose's and the
    # OpenHands conversation's files hold no step's tokens.
    found = [
        (s["format"], s["calls"], s["wasted_tokens"], s["wasted_input_tokens"]) for s in sessions
    ]
    assert found == [
        ("opencode", 5, 15, 30),
        ("opencode", 1, 0, 0),
        ("goose", 4, 0, 0),
        ("goose", 1, 0, 0),
        ("openhands-events", 6, 0, 0),
    ]
    totals = json.loads(out.splitlines()[-1])
    assert (totals["files"], totals["calls"], totals["wasted"]) == (3, 17, 8)


def test_no_path_finds_the_chats_of_gemini_copilot_pi_cline_and_qwen_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each recorded fixture where its agent keeps it; the counts are its reader test's.
    import shutil

    monkeypatch.setenv("HOME", str(tmp_path))
    fixtures = Path(__file__).parents[1] / "transcripts" / "fixtures"
    (gemini,) = (fixtures / "gemini-cli").glob("*.jsonl")
    (pi,) = (fixtures / "pi").glob("*/*.jsonl")
    (cline,) = (fixtures / "cline").glob("*.messages.json")
    (qwen,) = (fixtures / "qwen-code").glob("*/chats/*.jsonl")
    places = {
        gemini: ".gemini/tmp/h/chats",
        fixtures / "copilot-cli" / "events.jsonl": ".copilot/session-state/id",
        pi: ".pi/agent/sessions/--home-dev-project--",
        cline: f".cline/data/sessions/{cline.name.split('.')[0]}",
        qwen: ".qwen/projects/-home-dev-project/chats",
    }
    for source, folder in places.items():
        (tmp_path / folder).mkdir(parents=True)
        shutil.copyfile(source, tmp_path / folder / source.name)
    status, out, _ = run(["--format", "json", "--jobs", "1"])
    assert status == 0
    sessions = [json.loads(line) for line in out.splitlines()[:-1]]
    # The stand-in that recorded them answered each model request with 5 output and 10 input
    # tokens: each wasted call's step cost that, and each reader reads it.
    found = sorted(
        (s["format"], s["calls"], s["wasted"], s["wasted_tokens"], s["wasted_input_tokens"])
        for s in sessions
    )
    assert found == [
        ("cline", 5, 3, 15, 30),
        ("copilot-cli", 5, 3, 15, 30),
        ("gemini-cli", 7, 4, 20, 40),
        ("pi", 7, 4, 20, 40),
        ("qwen-code", 5, 3, 15, 30),
    ]


def test_the_page_is_written_atomically(tmp_path: Path) -> None:
    claude_session(tmp_path / "in" / "s.jsonl", 3)
    page = tmp_path / "report.html"
    page.write_text("old")
    status, _, _ = run([str(tmp_path / "in"), "--html", str(page), "--jobs", "1"])
    assert status == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert 'id="total-wasted" data-value="2"' in text
    assert sorted(os.listdir(tmp_path)) == ["in", "report.html"]


@pytest.mark.parametrize("named", ["the file", "its folder", "the config"])
def test_a_page_that_would_replace_what_the_audit_reads_is_refused_before_reading(
    tmp_path: Path, named: str
) -> None:
    claude_session(tmp_path / "in" / "s.jsonl", 3)
    config = tmp_path / "guard.json"
    config.write_text('{"thresholds": [3, 5]}')
    kept = {path: path.read_bytes() for path in (tmp_path / "in" / "s.jsonl", config)}
    paths = {"the file": tmp_path / "in" / "s.jsonl", "its folder": tmp_path / "in"}
    page = config if named == "the config" else tmp_path / "in" / "s.jsonl"
    argv = [str(paths.get(named, tmp_path / "in")), "--config", str(config)]
    status, out, err = run([*argv, "--html", str(page), "--jobs", "1"])
    assert (status, out) == (2, "")
    assert err.startswith(f"repeat-guard: error: --html {page} would overwrite ")
    assert {path: path.read_bytes() for path in kept} == kept


def test_a_page_beside_the_transcripts_it_audits_is_written(tmp_path: Path) -> None:
    claude_session(tmp_path / "s.jsonl", 3)
    page = tmp_path / "report.html"
    page.write_text("an earlier page")
    for _ in range(2):  # the second audit reads the folder with the first one's page in it
        status, _, err = run([str(tmp_path), "--html", str(page), "--jobs", "1"])
        assert (status, err) == (0, "")
        assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("name", "message"),
    [("", "--html needs a file name, got ''"), ("-", "--html needs a file name: stdout")],
)
def test_a_page_with_no_file_name_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, message: str
) -> None:
    claude_session(tmp_path / "s.jsonl", 3)
    monkeypatch.chdir(tmp_path)
    status, out, err = run([str(tmp_path), "--html", name, "--jobs", "1"])
    assert (status, out) == (2, "")
    assert err.startswith(f"repeat-guard: error: {message}")
    assert os.listdir(tmp_path) == ["s.jsonl"]


@pytest.mark.parametrize("kind", ["device", "symlink", "directory"])
def test_an_output_that_is_not_a_regular_file_is_refused_before_reading(
    tmp_path: Path, kind: str
) -> None:
    target = {"device": Path("/dev/null"), "directory": tmp_path}.get(kind, tmp_path / "link")
    if kind == "symlink":
        (tmp_path / "elsewhere").write_text("keep")
        target.symlink_to(tmp_path / "elsewhere")
    status, out, err = run([str(tmp_path / "missing"), "--html", str(target)])
    assert (status, out) == (2, "")
    reason = "it is a symbolic link; name its target" if kind == "symlink" else "not a regular file"
    assert f"cannot write {target}: {reason}" in err
    if kind == "symlink":
        assert (tmp_path / "elsewhere").read_text() == "keep"


def test_a_page_in_a_missing_folder_is_refused_before_reading(tmp_path: Path) -> None:
    claude_session(tmp_path / "s.jsonl", 1)
    page = tmp_path / "no" / "page.html"
    status, out, err = run([str(tmp_path), "--html", str(page), "--jobs", "1"])
    # Nothing on stdout: the audit did not run.
    assert (status, out) == (2, "")
    assert err == f"repeat-guard: error: cannot write {page}: No such file or directory\n"


def test_a_page_in_a_folder_that_refuses_files_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude_session(tmp_path / "in" / "s.jsonl", 1)
    (tmp_path / "out").mkdir()
    # Root may write anywhere: the refusal (its modes, a read-only mount) is os.access's answer.
    monkeypatch.setattr(os, "access", lambda path, mode: path != str(tmp_path / "out"))
    page = tmp_path / "out" / "page.html"
    status, out, err = run([str(tmp_path / "in"), "--html", str(page), "--jobs", "1"])
    assert (status, out) == (2, "")
    assert f"cannot write {page}: cannot create files in {tmp_path / 'out'}" in err


def test_a_failed_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(UsageError, match="No space left"):
        command.write_atomically(str(tmp_path / "page.html"), "text")
    assert os.listdir(tmp_path) == []


def test_an_unreadable_output_place_is_a_usage_error(tmp_path: Path) -> None:
    looping = tmp_path / "loop"
    looping.symlink_to(looping)
    status, _, err = run([str(tmp_path), "--html", str(looping / "page.html")])
    assert status == 2
    assert "cannot write" in err


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (["--top", "0"], "expected a whole number of 1 or more, got '0'"),
        (["--jobs", "x"], "expected a whole number of 1 or more, got 'x'"),
        (["--jobs", "99999999999999999999"], "expected at most 1024 jobs"),
        (["--since", "yesterday"], "expected a date YYYY-MM-DD, got 'yesterday'"),
        (["--thresholds", "1"], "invalid configuration"),
    ],
)
def test_bad_arguments_exit_2(tmp_path: Path, flag: list[str], message: str) -> None:
    status, out, err = run([str(tmp_path), *flag])
    assert (status, out) == (2, "")
    assert message in err


def test_diagnostics_go_to_stderr_and_exit_3(tmp_path: Path) -> None:
    claude_session(tmp_path / "s.jsonl", 2)
    with (tmp_path / "s.jsonl").open("ab") as stream:
        stream.write(b"{oops\n")
    status, out, err = run([str(tmp_path), "--format", "json", "--jobs", "1"])
    assert status == 3
    assert err.startswith(f"{tmp_path / 's.jsonl'}:6: invalid JSON")
    assert json.loads(out.splitlines()[-1])["diagnostics"] == 1


def test_a_folder_that_cannot_be_listed_is_reported_and_the_rest_audited(
    tmp_path: Path, unlistable_folder: Path
) -> None:
    claude_session(tmp_path / "s.jsonl", 3)
    status, out, err = run([str(tmp_path), "--format", "json", "--jobs", "1"])
    assert status == 3
    assert err == f"{unlistable_folder}:0: cannot list this folder: Permission denied\n"
    totals = json.loads(out.splitlines()[-1])
    assert (totals["files"], totals["sessions"], totals["wasted"]) == (1, 1, 2)
    assert totals["diagnostics"] == 1


def test_compressed_transcripts_are_audited_as_the_plain_ones(tmp_path: Path) -> None:
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    claude_session(plain / "a.jsonl", 4, "one")
    claude_session(plain / "b.jsonl", 3, "two")
    packed.mkdir()
    (packed / "a.jsonl.gz").write_bytes(gzip.compress((plain / "a.jsonl").read_bytes()))
    (packed / "b.jsonl.xz").write_bytes(lzma.compress((plain / "b.jsonl").read_bytes()))
    reports = []
    for folder in (plain, packed):
        status, out, err = run([str(folder), "--format", "json", "--jobs", "1"])
        assert (status, err) == (0, "")
        records = [json.loads(line) for line in out.splitlines()]
        assert [r["session"] for r in records[:-1]] == ["one", "two"]
        assert records[-1]["wasted"] == 5
        del records[-1]["bytes"]  # the files' sizes on disk
        # Each file named by its first letter: the rest of the report must be the same.
        reports.append(
            re.sub(r'"file": "[^"]*/(\w)\.jsonl[^"]*"', r'"file": "\1"', json.dumps(records))
        )
    assert reports[0] == reports[1]


def test_notes_are_shown_as_notes_and_leave_the_status_alone() -> None:
    fixture = (
        Path(__file__).parents[1] / "transcripts" / "fixtures" / "acp" / "starts_mid_way.jsonl"
    )
    status, out, err = run([str(fixture), "--jobs", "1", "--format", "json"])
    assert status == 0
    assert err.startswith(f"{fixture}:1: note: tool_call_update for toolCallId 'toolu_a'")
    totals = json.loads(out.splitlines()[-1])
    # Not a diagnostic: not counted, and not listed with the diagnostics.
    assert (totals["diagnostics"], totals["first_diagnostics"]) == (0, [])


def test_names_in_text_output_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = {"sessionId": "s1", "cwd": "/p", "timestamp": STAMP}
    tool = "Ba\x1b[31msh\x07"
    lines = []
    for n in range(3):
        use = {"type": "tool_use", "id": f"t{n}", "name": tool, "input": {"command": "ls"}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "a"}
        lines.append({**common, "type": "assistant", "message": {"content": [use]}})
        lines.append({**common, "type": "user", "message": {"content": [result]}})
    path = tmp_path / "x\ny.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "not json\n")
    status, out, err = run([str(path), "--jobs", "1"])
    assert status == 3
    assert err.splitlines() == [
        f"{tmp_path}/x\\ny.jsonl:7: invalid JSON: Expecting value: line 1 column 1 (char 0)"
    ]
    assert "Ba\\x1b[31msh\\x07" in out
    assert "\x1b" not in out
    assert main(["replay", str(path)]) == 3
    replayed = capsys.readouterr()
    assert replayed.out.startswith(f"{tmp_path}/x\\ny.jsonl: 7 lines, 1 session\n")
    assert "line 6: Ba\\x1b[31msh\\x07 × 3 (gentle)" in replayed.out
    assert replayed.err.startswith(f"{tmp_path}/x\\ny.jsonl:7: ")
    assert "\x1b" not in replayed.out


def test_diagnostics_beyond_the_kept_ones_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fold, "MAX_PROBLEMS_KEPT", 1)
    claude_session(tmp_path / "s.jsonl", 1)
    with (tmp_path / "s.jsonl").open("ab") as stream:
        stream.write(b"{oops\n{again\n{and again\n")
    status, _, err = run([str(tmp_path), "--jobs", "1"])
    assert status == 3
    assert err.splitlines()[1] == f"{tmp_path / 's.jsonl'}: 2 more diagnostics not shown"


def test_since_counts_only_recent_calls(tmp_path: Path) -> None:
    claude_session(tmp_path / "s.jsonl", 4)
    _, out, _ = run([str(tmp_path), "--since", "2026-12-02", "--format", "json", "--jobs", "1"])
    assert json.loads(out.splitlines()[-1])["calls"] == 0
    _, out, _ = run([str(tmp_path), "--since", "2026-12-01", "--format", "json", "--jobs", "1"])
    assert json.loads(out.splitlines()[-1])["calls"] == 4


def test_files_last_written_before_since_are_counted_and_named_in_every_report(
    tmp_path: Path,
) -> None:
    # Never a silent zero: the files found and left out are said, in each report.
    old = [tmp_path / "p" / f"s{n}.jsonl" for n in (1, 2)]
    for path in old:
        claude_session(path, 3)
    argv = [str(tmp_path / "p"), "--since", "2030-01-01", "--jobs", "1"]
    page = tmp_path / "audit.html"
    status, out, err = run([*argv, "--html", str(page)])
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "audited 0 files (0.0 MB), 0 sessions, 0 diagnostics"
    start = lines.index("2 files found, 2 last written before 2030-01-01 (--since), left out:")
    assert lines[start + 1 : start + 3] == [f"  {path}" for path in old]
    shown = page.read_text(encoding="utf-8")
    assert 'id="total-written_before_since" data-value="2"' in shown
    assert "last written before 2030-01-01 (--since), left out: 2. " in shown
    assert all(f"<li><code>{path}</code></li>" in shown for path in old)
    status, out, err = run([*argv, "--format", "json"])
    totals = json.loads(out.splitlines()[-1])
    assert (status, err) == (0, "")
    assert (totals["since"], totals["files"], totals["files_found"]) == ("2030-01-01", 0, 2)
    assert totals["written_before_since"] == 2
    assert totals["written_before_since_files"] == [str(path) for path in old]


def test_a_terminal_gets_a_progress_bar_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    for n in range(3):
        claude_session(tmp_path / f"s{n}.jsonl", 2, f"s{n}")
    status, out, err = run([str(tmp_path), "--format", "json", "--jobs", "1"], Terminal())
    assert status == 0
    assert "audit [" in err
    assert " files " in err
    assert err.endswith("\r\x1b[K")
    assert "\r" not in out


def test_diagnostics_start_their_own_line_above_the_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    for n in range(7):
        claude_session(tmp_path / f"s{n}.jsonl", 2, f"s{n}")
    with (tmp_path / "s2.jsonl").open("ab") as stream:
        stream.write(b"{oops\n{again\n")
    status, _, err = run([str(tmp_path), "--format", "json", "--jobs", "1"], Terminal())
    assert status == 3
    where = tmp_path / "s2.jsonl"
    shown = screen(err)
    assert [line.split(": ")[0] for line in shown[:-1]] == [f"{where}:6", f"{where}:7"]
    assert shown[-1] == ""  # the bar, erased at the end
    # Drawn again below each diagnostic, and never wider than the terminal.
    assert re.search(r":7: invalid JSON[^\n]*\n\raudit \[", err)
    draws = [part for line in err.split("\n") for part in line.split("\r") if "audit [" in part]
    assert draws
    assert max(len(draw) for draw in draws) <= 79


def test_the_bar_is_erased_before_a_failure_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(*args: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(command, "_print_problems", failing)
    claude_session(tmp_path / "s.jsonl", 2)
    status, _, err = run([str(tmp_path), "--jobs", "1"], Terminal())
    assert status == 70
    assert "\raudit [" in err
    shown = screen(err)
    assert shown[0] == "Traceback (most recent call last):"
    assert shown[-2] == "repeat-guard: internal error (exit 70); please report it"


def test_report_lines_on_the_bars_terminal_start_their_own_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    for n in range(5):
        claude_session(tmp_path / f"s{n}.jsonl", 2, f"s{n}")
    tty = Terminal()  # stdout and stderr on one terminal
    with redirect_stdout(tty), redirect_stderr(tty):
        status = main(["audit", str(tmp_path), "--format", "json", "--jobs", "1"])
    assert status == 0
    *lines, last = screen(tty.getvalue())
    assert [json.loads(line)["type"] for line in lines] == ["session"] * 5 + ["totals"]
    assert last == ""
    assert "\raudit [" in tty.getvalue()


def test_the_bar_counts_every_file_found_and_ends_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from repeat_guard_cli import _progress

    claude_session(tmp_path / "s.jsonl", 2)
    (tmp_path / "notes.txt").write_text("not a transcript\n")
    seen: list[tuple[int, int]] = []

    class Recorder:
        def __init__(self, stream: object, label: str, files: int, size: int) -> None:
            seen.append((files, size))

        def advance(self, files: int, size: int) -> None:
            seen.append((files, size))

        def finish(self) -> None:
            pass

    monkeypatch.setattr(_progress, "FilesProgress", Recorder)
    status, out, _ = run([str(tmp_path), "--format", "json", "--jobs", "1"], Terminal())
    assert status == 0
    (files, size), *advances = seen
    # Both files listed and walked past; the transcript's size alone in the report.
    assert (files, size) == (2, sum(p.stat().st_size for p in tmp_path.iterdir()))
    assert [sum(column) for column in zip(*advances, strict=True)] == [files, size]
    assert json.loads(out.splitlines()[-1])["files"] == 1


def test_an_unreachable_dask_scheduler_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "CONNECT_SECONDS", 0.2)
    claude_session(tmp_path / "s.jsonl", 1)
    status, _, err = run([str(tmp_path), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"])
    assert status == 2
    assert "cannot reach the Dask scheduler" in err


@pytest.mark.parametrize("address", ["bogus", "tcp://host:notaport"])
def test_a_scheduler_that_is_no_address_exits_2(tmp_path: Path, address: str) -> None:
    claude_session(tmp_path / "s.jsonl", 1)
    status, out, err = run([str(tmp_path), "--engine", "dask", "--scheduler", address])
    assert (status, out) == (2, "")
    assert err == (
        f"repeat-guard: error: --scheduler {address} is neither an address (tcp://HOST:PORT) "
        "nor one of sync, synchronous, threads, processes\n"
    )


def test_the_dask_client_is_built_with_the_collector_held_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An earlier Client that failed to connect, collected while a new one starts, deadlocks
    # on distributed's loop-runner lock: no collection may run while a Client is built.
    import distributed

    collecting: list[bool] = []

    def client(address: str, timeout: float) -> None:
        collecting.append(gc.isenabled())
        raise OSError("refused")

    monkeypatch.setattr(distributed, "Client", client)
    claude_session(tmp_path / "s.jsonl", 1)
    status, _, err = run([str(tmp_path), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"])
    assert (status, collecting) == (2, [False])
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9: refused" in err
    assert gc.isenabled()


@pytest.mark.parametrize("engine", [[], ["--engine", "processes"]])
def test_a_scheduler_without_the_dask_engine_is_a_usage_error(
    tmp_path: Path, engine: list[str]
) -> None:
    claude_session(tmp_path / "s.jsonl", 1)
    status, out, err = run([str(tmp_path), *engine, "--scheduler", "threads", "--jobs", "1"])
    assert (status, out) == (2, "")
    assert err == "repeat-guard: error: --scheduler needs --engine dask\n"


def test_help_documents_the_outputs_and_engines() -> None:
    status, out, _ = run(["--help"])
    assert status == 0
    for text in ('{"type": "session"', "--html FILE", "tcp://HOST:8786", "exit status"):
        assert text in out
    # Both kinds of a turn's tokens are named, each with its key.
    for text in ('output tokens ("wasted_tokens"', 'cached or not ("wasted_input_tokens")'):
        assert text in out


def test_the_package_names_only_its_api() -> None:
    import repeat_guard_cli

    unknown = "audit_everything"
    with pytest.raises(AttributeError, match="has no attribute 'audit_everything'"):
        getattr(repeat_guard_cli, unknown)


def test_a_folder_deeper_than_the_recursion_limit_is_audited(
    tmp_path: Path, deep_folder: Path
) -> None:
    claude_session(deep_folder / "s1.jsonl", 3)
    status, out, err = run([str(tmp_path / "deep"), "--jobs", "1"])
    assert (status, err) == (0, "")
    assert "calls 3   tracked 3   wasted 2" in out


def test_a_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    # A regular file whose first read fails (EIO): the read error, not an unknown format.
    status, _, err = run(["/proc/self/mem", "--jobs", "1"])
    assert (status, err) == (3, "/proc/self/mem:1: read failed: Input/output error\n")


def test_a_walked_file_that_is_not_a_transcript_is_named_and_the_exit_stays_0(
    tmp_path: Path,
) -> None:
    claude_session(tmp_path / "s.jsonl", 2)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a transcript\n")
    status, out, err = run([str(tmp_path), "--jobs", "1"])
    assert (status, err) == (0, "")
    lines = out.splitlines()
    start = lines.index("2 files found, 1 not a transcript:")
    assert lines[start + 1] == f"  {notes}"
    status, out, _ = run([str(tmp_path), "--jobs", "1", "--format", "json"])
    totals = json.loads(out.splitlines()[-1])
    assert status == 0
    assert (totals["files"], totals["not_transcripts"]) == (1, 1)
    assert totals["not_transcript_files"] == [str(notes)]


def test_a_walked_fifo_socket_or_vanished_file_is_counted_and_named(
    tmp_path: Path, fifo_never_opened: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    claude_session(tmp_path / "s.jsonl", 2)
    gone = tmp_path / "t.jsonl"
    claude_session(gone, 2)
    listening = tmp_path / "u.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(listening))
        from repeat_guard_transcripts import _files

        real = _files.open_regular

        def vanishing(path: str) -> tuple[BinaryIO | None, os.stat_result]:
            if path == str(gone):  # it goes between the walk and its turn
                gone.unlink()
            return real(path)

        monkeypatch.setattr(_files, "open_regular", vanishing)
        status, out, err = run([str(tmp_path), "--jobs", "1", "--format", "json"])
        assert (status, err) == (0, "")
        totals = json.loads(out.splitlines()[-1])
        assert (totals["files"], totals["not_transcripts"]) == (1, 3)
        assert totals["not_transcript_files"] == [str(fifo_never_opened), str(gone), str(listening)]
        claude_session(gone, 2)  # to go again: the text summary names them too
        status, out, _ = run([str(tmp_path), "--jobs", "1"])
    lines = out.splitlines()
    start = lines.index("4 files found, 3 not a transcript:")
    named = [f"  {fifo_never_opened}", f"  {gone}", f"  {listening}"]
    assert lines[start + 1 : start + 4] == named


def test_what_the_wasted_calls_of_recorded_failures_cost() -> None:
    # Recorded with Copilot CLI 1.0.102 and Cline CLI 3.0.65, the stand-in answering request n
    # with 1000 + 100 n prompt tokens (600 of them cached) and 20 + n completion tokens. The
    # wasted calls are the 2nd and 3rd of a run of three: requests 1 and 2, so 21 + 22 = 43
    # output and 1100 + 1200 = 2300 input tokens (the cached ones are part of the input).
    fixtures = Path(__file__).parents[1] / "transcripts" / "fixtures"
    copilot = fixtures / "copilot-cli" / "failures" / "events.jsonl"
    (cline,) = (fixtures / "cline" / "usage").glob("*.messages.json")
    status, out, _ = run([str(copilot), str(cline), "--format", "json", "--jobs", "1"])
    assert status == 0
    sessions = [json.loads(line) for line in out.splitlines()[:-1]]
    found = sorted(
        (s["format"], s["calls"], s["wasted"], s["wasted_tokens"], s["wasted_input_tokens"])
        for s in sessions
    )
    assert found == [("cline", 4, 2, 43, 2300), ("copilot-cli", 4, 2, 43, 2300)]


def chat_session(path: Path, session: str) -> None:
    """A Claude Code session of a prompt and a text answer: no tool call."""
    common = {"sessionId": session, "cwd": "/home/dev/p", "timestamp": STAMP}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}
    lines = [
        {
            **common,
            "type": "user",
            "parentUuid": None,
            "message": {"role": "user", "content": "hi"},
        },
        {**common, "type": "assistant", "parentUuid": "u1", "message": answer},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_files_that_held_no_call_are_counted_in_the_report_not_a_note_each(
    tmp_path: Path,
) -> None:
    for n in (1, 2, 3):
        chat_session(tmp_path / f"chat{n}.jsonl", f"c{n}")
    claude_session(tmp_path / "loop.jsonl", 3)
    chats = [str(tmp_path / f"chat{n}.jsonl") for n in (1, 2, 3)]
    status, out, err = run([str(tmp_path), "--jobs", "1"])
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "audited 4 files (0.0 MB), 4 sessions, 0 diagnostics, 3 held no tool call"
    start = lines.index("4 files audited, 3 held no tool call:")
    assert lines[start + 1 : start + 4] == [f"  {chat}" for chat in chats]
    status, out, err = run([str(tmp_path), "--jobs", "2", "--format", "json"])
    totals = json.loads(out.splitlines()[-1])
    assert (status, err) == (0, "")
    assert (totals["files"], totals["diagnostics"], totals["held_no_call"]) == (4, 0, 3)
    assert totals["held_no_call_files"] == chats
    status, _, err = run([str(tmp_path), "--jobs", "1", "--format", "csv"])
    assert (status, err) == (0, "")
    # The replay of one such file keeps its note.
    replayed = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(replayed):
        assert main(["replay", chats[0]]) == 0
    assert (
        replayed.getvalue() == f"{chats[0]}:1: note: read as claude-code, none of it a tool call\n"
    )


def test_a_file_with_a_diagnostic_and_no_call_is_not_counted_as_held_no_call(
    tmp_path: Path,
) -> None:
    chat_session(tmp_path / "chat.jsonl", "c1")
    with (tmp_path / "chat.jsonl").open("a") as stream:
        stream.write("{not json\n")
    status, out, err = run([str(tmp_path), "--jobs", "1", "--format", "json"])
    totals = json.loads(out.splitlines()[-1])
    assert status == 3
    assert err.startswith(f"{tmp_path / 'chat.jsonl'}:3: invalid JSON")
    assert (totals["diagnostics"], totals["held_no_call"]) == (1, 0)
    (listed,) = totals["first_diagnostics"]
    assert (listed["line"], listed["severity"]) == (3, "error")


NO_CALL = Path(__file__).parents[1] / "transcripts" / "fixtures" / "no-call"
"""Chat-only transcripts, each cut from a recorded one (``fixtures/README.md``): readers that
end such a file with their own no-call note, saying what they read."""


@pytest.mark.parametrize(
    ("name", "fmt", "read"),
    [
        (
            "1796525878538_3yxtp.messages.json",
            "cline",
            "2 messages read, none with a tool_use block",
        ),
        ("chat_trajectory.json", "openhands", "2 events read"),
        ("conversation", "openhands-events", "3 events read"),
        (
            "chat_spans.jsonl",
            "otel-genai",
            "2 spans read, none a GenAI execute_tool or invoke_agent span",
        ),
    ],
)
def test_a_file_whose_reader_says_what_it_read_is_counted_as_held_no_call_too(
    tmp_path: Path, name: str, fmt: str, read: str
) -> None:
    import shutil

    copy = tmp_path / name
    if (NO_CALL / name).is_dir():
        shutil.copytree(NO_CALL / name, copy)
    else:
        shutil.copyfile(NO_CALL / name, copy)
    claude_session(tmp_path / "loop.jsonl", 3)
    page = tmp_path / "out" / "audit.html"
    page.parent.mkdir()
    status, out, err = run([str(tmp_path), "--jobs", "1", "--html", str(page)])
    assert (status, err) == (0, "")  # no line for the file: counted instead
    assert out.splitlines()[0].endswith(", 0 diagnostics, 1 held no tool call")
    shown = page.read_text(encoding="utf-8")
    assert 'id="total-held_no_call" data-value="1"' in shown
    assert f"<li><code>{copy}</code></li>" in shown  # and named, as in the JSON
    status, out, err = run([str(tmp_path), "--jobs", "1", "--format", "json"])
    totals = json.loads(out.splitlines()[-1])
    assert (status, err) == (0, "")
    assert (totals["files"], totals["held_no_call"]) == (2, 1)
    assert totals["held_no_call_files"] == [str(copy)]
    # The replay says what the reader read.
    replayed = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(replayed):
        assert main(["replay", str(copy)]) == 0
    note = f"read as {fmt}, none of it a tool call ({read})"
    assert replayed.getvalue() == f"{copy}:1: note: {note}\n"


_AUDIT_PROBE = (
    "import sys\n"
    "from repeat_guard_entry import main\n"
    "status = main(['audit', sys.argv[1], '--format', 'json', '--jobs', '1'])\n"
    "unused = ('sqlite3', 'tempfile', 'csv', 'concurrent.futures')\n"
    "print(status, sorted(m for m in unused if m in sys.modules), file=sys.stderr)\n"
)


@pytest.mark.parametrize("output", [[], ["--html", "report.html"]])
def test_an_audit_starts_without_what_it_does_not_use(tmp_path: Path, output: list[str]) -> None:
    # The command's start is paid before any file is read: no SQLite (the sidecar's store
    # and the database readers), no CSV writer, and the atomic writer's temporary files only
    # for a page.
    claude_session(tmp_path / "p" / "s.jsonl", 3)
    probe = _AUDIT_PROBE.replace("'1']", "'1', *sys.argv[2:]]")
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "p"), *output],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert done.stderr.splitlines()[-1] == ("0 []" if not output else "0 ['tempfile']")


def test_the_json_and_the_page_list_the_first_diagnostics_as_stderr_has_them(
    tmp_path: Path,
) -> None:
    # 5 bad lines in a file named with markup, 100 in another: the JSON totals and the page
    # list the first LISTED_DIAGNOSTICS as stderr printed them (the page escaped), and count
    # the rest.
    from html import unescape

    claude_session(tmp_path / "a.jsonl", 3)
    (tmp_path / "0<i>.jsonl").write_bytes((tmp_path / "a.jsonl").read_bytes() + b"{bad\n" * 5)
    (tmp_path / "b.jsonl").write_bytes((tmp_path / "a.jsonl").read_bytes() + b"{bad\n" * 100)
    page = tmp_path / "out" / "audit.html"
    page.parent.mkdir()
    status, out, err = run([str(tmp_path), "--jobs", "1", "--html", str(page), "--format", "json"])
    assert status == 3
    printed = err.splitlines()
    assert len(printed) == 105
    assert command.LISTED_DIAGNOSTICS == 100
    totals = json.loads(out.splitlines()[-1])
    assert totals["diagnostics"] == 105
    listed = totals["first_diagnostics"]
    assert [f"{d['file']}:{d['line']}: {d['message']}" for d in listed] == printed[:100]
    assert listed[0] == {
        "file": str(tmp_path / "0<i>.jsonl"),
        "line": 8,
        "message": "invalid JSON: Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1)",
        "severity": "error",
    }
    shown = page.read_text(encoding="utf-8")
    assert "<i>" not in shown
    items = re.search(r'<details id="files-diagnostics" data-value="105">.*?</details>', shown)
    assert items is not None
    listed = re.findall(r"<li><code>(.*?)</code></li>", items.group())
    assert [unescape(line) for line in listed] == printed[:100]
    assert listed[0].startswith(f"{tmp_path}/0&lt;i&gt;.jsonl:")
    assert '<li class="muted">… and 5 more</li>' in items.group()
    # No diagnostic: no list on the page, an empty one in the JSON.
    (tmp_path / "b.jsonl").unlink()
    (tmp_path / "0<i>.jsonl").unlink()
    status, out, _ = run([str(tmp_path), "--jobs", "1", "--html", str(page), "--format", "json"])
    assert status == 0
    assert "files-diagnostics" not in page.read_text(encoding="utf-8")
    assert json.loads(out.splitlines()[-1])["first_diagnostics"] == []
