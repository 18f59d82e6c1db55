"""The short way in for ``repeat-guard hook``: the same reading as argparse, or none at all."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

import repeat_guard_entry
from repeat_guard_cli import build_parser, main
from repeat_guard_hookcall._process import HookArguments, parse_hook_arguments
from repeat_guard_hooks import DIALECTS, EXIT_BAD_CONFIG

PRE = {
    "session_id": "s",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "ls"},
}

# Command lines the short way reads itself.
READ = [
    ["hook", "claude-code"],
    ["hook", "codex", "--state", "/s.db"],
    ["hook", "claude-code", "--config", "g.toml", "--state", ""],
    ["hook", "codex", "--expire-days", " 1.5", "--state", "s", "--config", "c c"],
    ["hook", "codex", "--expire-days", "inf"],
]
# Command lines it leaves to argparse (some valid, some errors, some help).
LEFT = [
    [],
    ["replay", "x"],
    ["hook"],
    ["hook", "claude"],
    ["hook", "--state", "s", "codex"],
    ["hook", "codex", "--help"],
    ["hook", "codex", "--state"],
    ["hook", "codex", "--state=s"],
    ["hook", "codex", "--sta", "s"],
    ["hook", "codex", "--state", "a", "--state", "b"],
    ["hook", "codex", "--state", "-"],
    ["hook", "codex", "--expire-days", "-1"],
    ["hook", "codex", "--expire-days", "seven"],
    ["hook", "codex", "--", "x"],
    ["hook", "codex", "extra", "x"],
]


@pytest.mark.parametrize("argv", READ)
def test_what_the_short_way_reads_argparse_reads_the_same(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    expected = HookArguments(args.agent, args.state, args.config, args.expire_days)
    assert parse_hook_arguments(argv) == expected


@pytest.mark.parametrize("argv", LEFT)
def test_anything_else_is_left_to_argparse(argv: list[str]) -> None:
    assert parse_hook_arguments(argv) is None


def test_argparse_still_runs_the_hook_it_was_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(PRE).encode())))
    state = tmp_path / "st.db"
    assert main(["hook", f"--state={state}", "--expire-days", "-1", "codex"]) == 0
    assert capsysbinary.readouterr() == (b"", b"")
    assert state.exists()


def test_a_reader_gone_while_the_answer_is_written_fails_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader: every write to the pipe fails with EPIPE
    stdout = io.TextIOWrapper(io.FileIO(write_end, "w"), write_through=True)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setenv("REPEAT_GUARD_STATE", str(tmp_path / "st.db"))
    (tmp_path / ".repeat-guard.toml").write_text("thresholds = [2]\n")
    (tmp_path / ".git").mkdir()
    monkeypatch.setitem(PRE, "cwd", str(tmp_path))
    statuses = []
    for _ in range(2):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(PRE).encode())))
        statuses.append(main(["hook", "codex"]))
    assert statuses == [0, 0]  # the second call's answer found no reader: the agent proceeds
    (line,) = (tmp_path / "st.db.log").read_text().splitlines()
    assert line.endswith(" codex -: cannot write the answer to stdout: Broken pipe")
    stdout.write("after\n")  # stdout now points at /dev/null
    stdout.close()


def test_closed_streams_fail_open_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the processes below do, seen by coverage: a closed stdin, a closed stdout when an
    # answer is due, a stderr whose reader went away when a configuration message is due.
    state = tmp_path / "st.db"
    argv = ["hook", "claude-code", "--state", str(state)]
    monkeypatch.setattr(sys, "stdin", None)
    assert main(argv) == 0
    monkeypatch.setattr(sys, "stdout", None)
    for _ in range(3):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(PRE).encode())))
        assert main(argv) == 0
    read_end, write_end = os.pipe()
    os.close(read_end)
    stderr = io.TextIOWrapper(io.FileIO(write_end, "w"))
    monkeypatch.setattr(sys, "stderr", stderr)
    (tmp_path / "guard.toml").write_text("thresholds = [1]\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(PRE).encode())))
    assert main([*argv, "--config", str(tmp_path / "guard.toml")]) == 1
    stderr.close()  # it points at /dev/null now
    reasons = [line.split(": ", 1)[1] for line in (tmp_path / "st.db.log").read_text().splitlines()]
    assert reasons[:2] == [
        "cannot read stdin: it is closed",
        "cannot write the answer to stdout: it is closed",
    ]
    assert reasons[2].startswith("cannot write to stderr (Broken pipe): repeat-guard: invalid")


def _hook_process(
    state: Path, redirect: str, config: str = "", module: str = "repeat_guard_entry"
) -> tuple[int, str]:
    """Run ``python -m MODULE hook claude-code`` in a shell with ``redirect`` applied to the
    command; return its status and what it wrote on stdout and stderr that was not redirected."""
    script = f'exec "$0" -m {module} hook claude-code --state "$1" {config} {redirect}'
    done = subprocess.run(
        ["sh", "-c", script, sys.executable, str(state)],
        input=json.dumps(PRE).encode(),
        capture_output=True,
        check=False,
    )
    return done.returncode, (done.stdout + done.stderr).decode()


@pytest.mark.parametrize(
    ("redirect", "reason"),
    [
        (">&-", "cannot write the answer to stdout: it is closed"),
        (">/dev/full", "cannot write the answer to stdout: No space left on device"),
    ],
)
def test_an_answer_that_cannot_be_written_fails_open(
    tmp_path: Path, redirect: str, reason: str
) -> None:
    state = tmp_path / "st.db"
    assert [_hook_process(state, ">/dev/null") for _ in range(2)] == [(0, ""), (0, "")]
    assert _hook_process(state, redirect) == (0, "")  # the third call: a reminder was due
    (line,) = (tmp_path / "st.db.log").read_text().splitlines()
    assert line.endswith(f" claude-code -: {reason}")


@pytest.mark.parametrize("module", ["repeat_guard_entry", "repeat_guard_cli"])
def test_the_line_an_install_writes_and_the_one_older_installs_wrote_both_run(
    tmp_path: Path, module: str
) -> None:
    state = tmp_path / "st.db"
    calls = [_hook_process(state, "2>/dev/null", module=module) for _ in range(3)]
    assert [status for status, _ in calls] == [0, 0, 0]
    assert [("You are repeating" in out) for _, out in calls] == [False, False, True]


def test_a_closed_stdin_fails_open(tmp_path: Path) -> None:
    assert _hook_process(tmp_path / "st.db", "<&-") == (0, "")
    (line,) = (tmp_path / "st.db.log").read_text().splitlines()
    assert line.endswith(" claude-code ?: cannot read stdin: it is closed")


@pytest.mark.parametrize("redirect", ["2>&-", "2>/dev/full"])
def test_a_config_message_that_cannot_be_shown_is_logged(tmp_path: Path, redirect: str) -> None:
    config = tmp_path / "guard.toml"
    config.write_text("thresholds = [1]\n")
    assert _hook_process(tmp_path / "st.db", redirect, f"--config {config}") == (1, "")
    (line,) = (tmp_path / "st.db.log").read_text().splitlines()
    assert f": repeat-guard: invalid configuration in {config}: key 'thresholds'" in line
    assert " claude-code -: cannot write to stderr (" in line


_PROBE = (
    "import sys\n"
    "from repeat_guard_entry import main\n"
    "status = main(['hook', 'claude-code', '--state', sys.argv[1]])\n"
    "loaded = sorted(m for m in ('argparse', 'shlex', 'tomllib', '_hashlib', 'returns',"
    " 'repeat_guard_cli._cli', 'repeat_guard_hooks._install') if m in sys.modules)\n"
    "print(status, loaded, file=sys.stderr)\n"
)


def _loaded(state: Path, payload: Mapping[str, object]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(state)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        check=True,
    )
    return done.stderr.decode().strip()


def test_the_hook_process_loads_only_what_it_uses(tmp_path: Path) -> None:
    # No configuration file: no TOML parser. Digests from BLAKE2 itself: no OpenSSL. No
    # Result on the way: no returns.
    assert _loaded(tmp_path / "st.db", PRE) == "0 []"
    # A configuration file adds the TOML parser, and nothing else.
    (tmp_path / ".repeat-guard.toml").write_text("thresholds = [2]\n")
    (tmp_path / ".git").mkdir()
    assert _loaded(tmp_path / "st.db", {**PRE, "cwd": str(tmp_path)}) == "0 ['tomllib']"


# A bad hook command line, and the host it names (None: none can be read from it).
BAD_HOOK_LINES = [
    (["hook", "copilot", "--bogus"], "copilot"),
    (["hook", "copilot", "extra"], "copilot"),
    (["hook", "--state", "s", "copilot", "--bogus"], "copilot"),
    (["hook", "--sta", "s", "copilot", "--bogus"], "copilot"),
    (["hook", "--state=s", "--help-me", "copilot"], "copilot"),
    (["hook", "--", "copilot", "x"], "copilot"),
    (["hook", "claude-code", "--state"], "claude-code"),
    (["hook", "gemini", "--expire-days", "seven"], "gemini"),
    (["hook"], None),
    (["hook", "copilt"], None),
    (["hook", "-", "copilot"], None),
    (["hook", "--state", "copilot"], None),
    (["hook", "--config", "c", "--"], None),
]


@pytest.mark.parametrize(("argv", "host"), BAD_HOOK_LINES)
def test_a_bad_hook_command_line_exits_with_the_named_hosts_non_blocking_status(
    argv: list[str], host: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    # Copilot denies a call on any status but 0, Claude Code on 2: a bad command line must not.
    expected = EXIT_BAD_CONFIG if host is None else DIALECTS[host].error_status
    assert main(argv) == expected
    assert " error: " in capsys.readouterr().err  # argparse says why


@pytest.mark.parametrize("host", sorted(DIALECTS))
def test_every_hosts_bad_hook_command_line_gets_its_own_status(host: str) -> None:
    assert main(["hook", host, "--no-such-option"]) == DIALECTS[host].error_status


class _Recorded(io.StringIO):
    """A standard stream that notes each flush in ``events`` (failing with ``failure``)."""

    def __init__(self, events: list[object], failure: Exception | None = None) -> None:
        super().__init__()
        self.events, self.failure = events, failure

    def flush(self) -> None:
        self.events.append(("flush", self.getvalue()))
        if self.failure is not None:
            raise self.failure


def test_the_console_script_flushes_its_output_then_ends_with_mains_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[object] = []
    monkeypatch.setattr(sys, "stdout", _Recorded(events))
    monkeypatch.setattr(sys, "stderr", _Recorded(events))
    monkeypatch.setattr(repeat_guard_entry, "main", lambda: print("report") or 3)
    monkeypatch.setattr(os, "_exit", lambda status: events.append(("end", status)))
    repeat_guard_entry.console()
    assert events == [("flush", "report\n"), ("flush", ""), ("end", 3)]


@pytest.mark.parametrize("failure", [BrokenPipeError(32, "Broken pipe"), ValueError("closed")])
def test_a_console_script_whose_flush_fails_leaves_the_end_to_the_interpreter(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    events: list[object] = []
    monkeypatch.setattr(sys, "stdout", None)  # closed when the command started
    monkeypatch.setattr(sys, "stderr", _Recorded(events, failure))
    monkeypatch.setattr(repeat_guard_entry, "main", lambda: 4)
    monkeypatch.setattr(os, "_exit", lambda status: events.append(("end", status)))
    assert repeat_guard_entry.console() == 4
    assert events == [("flush", "")]


@pytest.mark.parametrize("module", ["repeat_guard_entry", "repeat_guard_cli"])
def test_a_command_run_as_a_process_writes_all_it_writes_in_process(
    module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = Path(__file__).parent / "fixtures" / "loop.jsonl"
    pages = tmp_path / "process.html", tmp_path / "in-process.html"
    argv = ["audit", str(fixture), "--format", "json", "--html"]
    done = subprocess.run(
        [sys.executable, "-m", module, *argv, str(pages[0])],
        capture_output=True,
        text=True,
        check=False,
    )
    status = main([*argv, str(pages[1])])
    out, err = capsys.readouterr()
    assert (done.returncode, done.stdout, done.stderr) == (status, out, err)
    assert json.loads(out.splitlines()[-1])["type"] == "totals"
    assert pages[0].read_bytes() == pages[1].read_bytes().replace(
        b"in-process.html", b"process.html"
    )
