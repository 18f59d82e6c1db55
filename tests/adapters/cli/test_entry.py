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

from repeat_guard_cli import build_parser, main
from repeat_guard_cli._entry import HookArguments, parse_hook_arguments

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


def test_a_closed_stdout_ends_the_hook_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader: every write to the pipe fails with EPIPE
    stdout = io.TextIOWrapper(io.FileIO(write_end, "w"), write_through=True)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(PRE).encode())))
    monkeypatch.setenv("REPEAT_GUARD_STATE", str(tmp_path / "st.db"))
    (tmp_path / ".repeat-guard.toml").write_text("thresholds = [2]\n")
    (tmp_path / ".git").mkdir()
    monkeypatch.setitem(PRE, "cwd", str(tmp_path))
    statuses = []
    for _ in range(2):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(PRE).encode())))
        statuses.append(main(["hook", "codex"]))
    assert statuses == [0, 141]  # the second call's answer found no reader
    stdout.write("after\n")  # stdout now points at /dev/null
    stdout.close()


_PROBE = (
    "import sys\n"
    "from repeat_guard_cli import main\n"
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
