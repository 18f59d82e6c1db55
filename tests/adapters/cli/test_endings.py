"""How the command ends when its surroundings fail: signals during ``--annotate``, Ctrl-C,
closed standard streams, an output that cannot be written, an encoding short of UTF-8.

Each ends with a message and a documented status (never 1, never a traceback), and
``--annotate`` never leaves its temporary file behind.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from repeat_guard_cli import main

from ..processes import children, running

LOOP = Path(__file__).parent / "fixtures" / "loop.jsonl"
SCRIPT = Path(sys.executable).parent / "repeat-guard"
SURROGATES = (
    b'{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s\\ud800", '
    b'"update": {"sessionUpdate": "tool_call", "toolCallId": "t%d", "title": "gr\\u00e9p", '
    b'"status": "completed", "rawInput": {"x": 1}}}}\n'
)


# The signals that stop the command, and the status each ends it with (128 + its number).
SIGNALS = [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]


def _default_sigint() -> None:
    # A test run started in the background of a shell inherits SIGINT ignored; the command
    # under test must see it as a terminal's Ctrl-C would deliver it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(("sent", "status"), SIGNALS)
def test_a_signal_during_annotate_removes_the_temporary_file(
    sent: signal.Signals, status: int, tmp_path: Path
) -> None:
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    target = tmp_path / "out.jsonl"
    process = subprocess.Popen(
        [SCRIPT, "replay", "--from", "acp", "--annotate", str(target), str(fifo)],
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,  # noqa: PLW1509  # only resets one signal
    )
    with open(fifo, "wb") as writer:  # blocks until the command opens the FIFO
        writer.write(LOOP.read_bytes()[:200])
        writer.flush()
        for _ in range(400):
            if any(p.name.endswith(".tmp") for p in tmp_path.iterdir()):
                break
            threading.Event().wait(0.05)
        process.send_signal(sent)
        assert process.wait(timeout=30) == status
    assert process.stderr is not None
    assert b"Traceback" not in process.stderr.read()
    process.stderr.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.fifo"]


def test_ctrl_c_ends_the_command_with_130_and_no_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr("repeat_guard_cli._replay.replay_files", interrupted)
    assert main(["replay", str(LOOP)]) == 130
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_a_hook_command_keeps_its_own_rules_for_interrupts_and_os_errors(
    error: type[BaseException], monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(*args: object) -> int:
        raise error

    from repeat_guard_cli._cli import _SEPARATE

    monkeypatch.setitem(_SEPARATE, "hook", failing)
    with pytest.raises(error):
        main(["hook", "codex", "--state=st.db"])  # argparse's way in


def test_an_output_that_cannot_be_written_exits_2_with_a_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    full = io.TextIOWrapper(io.FileIO("/dev/full", "w"), write_through=True)
    err = io.StringIO()
    monkeypatch.setattr("sys.stdout", full)
    monkeypatch.setattr("sys.stderr", err)
    assert main(["replay", "--format", "json", str(LOOP)]) == 2
    assert (
        err.getvalue() == "repeat-guard: error: cannot write the output: No space left on device\n"
    )
    full.write("after\n")  # stdout now points at /dev/null
    full.close()


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", str(LOOP)],
        ["replay", "--format", "json", str(LOOP)],
        ["replay", "--annotate", "-", str(LOOP)],
        ["serve"],
    ],
)
def test_an_output_that_cannot_be_written_in_a_real_process(argv: list[str]) -> None:
    with open(LOOP, "rb") as events, open("/dev/full", "wb") as full:
        done = subprocess.run(
            [SCRIPT, *argv], stdin=events, stdout=full, stderr=subprocess.PIPE, check=False
        )
    assert done.returncode == 2
    assert done.stderr == b"repeat-guard: error: cannot write the output: No space left on device\n"


def test_a_closed_stdout_or_stdin_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", None)
    assert main(["replay", "-"]) == 2
    assert capsys.readouterr().err == "repeat-guard: cannot read <stdin>: it is closed\n"
    assert main(["serve"]) == 2
    assert capsys.readouterr().err == "repeat-guard: error: cannot read <stdin>: it is closed\n"
    monkeypatch.setattr("sys.stdout", None)
    assert main(["replay", str(LOOP)]) == 2
    assert (
        capsys.readouterr().err
        == "repeat-guard: error: cannot write the output: stdout is closed\n"
    )
    monkeypatch.setattr("sys.stderr", None)
    assert main(["replay", str(LOOP)]) == 2


def test_closed_standard_streams_in_a_real_process() -> None:
    stdin_closed = subprocess.run(
        ["sh", "-c", '"$0" replay - <&-', SCRIPT], capture_output=True, check=False
    )
    assert (stdin_closed.returncode, stdin_closed.stderr) == (
        2,
        b"repeat-guard: cannot read <stdin>: it is closed\n",
    )
    stdout_closed = subprocess.run(
        ["sh", "-c", '"$0" replay "$1" >&-', SCRIPT, LOOP], stderr=subprocess.PIPE, check=False
    )
    assert (stdout_closed.returncode, stdout_closed.stderr) == (
        2,
        b"repeat-guard: error: cannot write the output: stdout is closed\n",
    )


@pytest.mark.parametrize(
    ("encoding", "fired"),
    [("ascii", b"gr\\xe9p \\xd7 3 (gentle)"), ("latin-1", b"gr\xe9p \xd7 3 (gentle)")],
)
def test_an_encoding_short_of_utf8_escapes_instead_of_crashing(
    encoding: str, fired: bytes, tmp_path: Path
) -> None:
    source = tmp_path / "s\udcff.jsonl"
    source.write_bytes(b"".join(SURROGATES % n for n in range(3)) + b'{"\xff": 1}\n')
    environment = {**os.environ, "PYTHONIOENCODING": encoding}
    outputs = []
    for form in ("text", "json"):
        done = subprocess.run(
            [SCRIPT, "replay", "--format", form, str(source)],
            capture_output=True,
            env=environment,
            check=False,
        )
        assert done.returncode == 3, done.stderr
        assert done.stderr.endswith(
            b"/s\\udcff.jsonl:4: not UTF-8 (invalid start byte at byte 2)\n"
        )
        outputs.append(done.stdout)
    text, records = outputs
    assert b"  session s\\ud800, 1 agent\n    line 3: " + fired + b"\n" in text
    assert b'"session": "s\\ud800"' in records


def _interleaved(tmp_path: Path) -> Path:
    # Two sessions whose calls alternate, each looping on its own call; one call never ends.
    frame = (
        b'{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "%s", '
        b'"update": {"sessionUpdate": "tool_call", "toolCallId": "t%d", "title": "%s", '
        b'"status": "%s", "rawInput": {"x": 1}}}}\n'
    )
    lines = [
        frame % (session, n, tool, b"completed")
        for n in range(4)
        for session, tool in ((b"a\\ud800", b"grep"), (b"b", b"ls"))
    ]
    lines.append(frame % (b"b", 9, b"sleep", b"pending"))
    source = tmp_path / "two.jsonl"
    source.write_bytes(b"".join(lines))
    return source


INTERLEAVED_REPORT = [
    "  session a\\ud800, 1 agent",
    "    line 5: grep × 3 (gentle)",
    "    calls 4, tracked 4, wasted 3, denied 0, reminders 1, longest run 4, unfinished 0",
    "  session b, 1 agent",
    "    line 6: ls × 3 (gentle)",
    "    line 9: sleep never finished",
    "    calls 4, tracked 4, wasted 3, denied 0, reminders 1, longest run 4, unfinished 1",
]


def test_the_text_report_groups_each_sessions_lines_in_input_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(_interleaved(tmp_path))]) == 0
    assert capsys.readouterr().out.splitlines()[1:-1] == INTERLEAVED_REPORT


def test_the_text_report_keeps_its_lines_in_memory_without_a_temporary_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def unwritable() -> None:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr("tempfile.TemporaryFile", unwritable)
    assert main(["replay", str(_interleaved(tmp_path))]) == 0
    assert capsys.readouterr().out.splitlines()[1:-1] == INTERLEAVED_REPORT


def _busy_folder(tmp_path: Path) -> Path:
    """Transcripts whose JSON report is far more than a pipe holds: an audit whose stdout is
    never read stays in the middle of its work."""
    folder = tmp_path / "many"
    folder.mkdir()
    common = {"cwd": "/p", "timestamp": "2026-12-01T10:00:00Z"}
    for number in range(60):
        lines = []
        for session in range(20):
            for call in range(3):
                use = {"type": "tool_use", "id": f"t{call}", "name": "Bash", "input": {"x": 1}}
                record = {**common, "sessionId": f"s{number}-{session}", "type": "assistant"}
                lines.append(json.dumps({**record, "message": {"content": [use]}}) + "\n")
        (folder / f"f{number}.jsonl").write_text("".join(lines))
    return folder


@pytest.mark.parametrize(("sent", "status"), SIGNALS)
def test_a_signal_to_a_multi_process_audit_leaves_no_process_behind(
    sent: signal.Signals, status: int, tmp_path: Path
) -> None:
    folder = _busy_folder(tmp_path)
    process = subprocess.Popen(
        [SCRIPT, "audit", "--format", "json", "--jobs", "2", str(folder)],
        stdout=subprocess.PIPE,  # never read: the audit blocks writing its report
        stderr=subprocess.DEVNULL,
        preexec_fn=_default_sigint,  # noqa: PLW1509  # only resets one signal
    )
    workers: set[int] = set()
    try:
        for _ in range(1200):  # the workers are started
            workers = children(process.pid)
            if len(workers) >= 2:
                break
            threading.Event().wait(0.05)
        assert len(workers) >= 2
        process.send_signal(sent)
        assert process.wait(timeout=60) == status
        for _ in range(1200):
            if not any(map(running, workers | children(process.pid))):
                break
            threading.Event().wait(0.05)
        assert not any(map(running, workers))
    finally:
        for pid in filter(running, workers):
            os.kill(pid, signal.SIGKILL)
        process.kill()
        process.communicate()
