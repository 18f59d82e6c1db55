"""``repeat-guard replay`` and ``demo`` end to end on small fixture transcripts."""

from __future__ import annotations

import bz2
import gc
import gzip
import io
import json
import lzma
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repeat_guard import GuardConfig
from repeat_guard_cli import UsageError, main
from repeat_guard_cli._replay import _annotate_atomically, _Input
from repeat_guard_cli._streams import Streams
from repeat_guard_transcripts import READERS, Outcome, replay

FIXTURES = Path(__file__).parent / "fixtures"
LOOP = str(FIXTURES / "loop.jsonl")
MIXED = str(FIXTURES / "mixed.jsonl")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def records(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def feed_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))


def bytes_stdout(monkeypatch: pytest.MonkeyPatch) -> io.BytesIO:
    buffer = io.BytesIO()
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(buffer, write_through=True))
    return buffer


def test_text_report_lists_firing_points_and_totals(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "replay", LOOP)
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        f"{LOOP}: 17 lines, 1 session",
        "  session s-loop, 1 agent",
        "    line 12: Grep × 3 (gentle)",
        "    line 16: Grep × 5 (detailed)",
        "    calls 5, tracked 5, wasted 4, denied 0, reminders 2, longest run 5, unfinished 0",
        "  total: calls 5, tracked 5, wasted 4, denied 0, reminders 2, longest run 5, "
        "unfinished 0, diagnostics 0, notes 0",
    ]


def test_diagnostics_go_to_stderr_and_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "replay", MIXED)
    assert status == 3
    assert err.startswith(f"{MIXED}:11: ")
    assert len(err.splitlines()) == 1
    lines = out.splitlines()
    assert lines[0] == f"{MIXED}: 20 lines, 2 sessions"
    assert lines[1:4] == [
        "  session s-alpha, 1 agent",
        "    line 16: Read × 3 (gentle)",
        "    calls 3, tracked 3, wasted 2, denied 0, reminders 1, longest run 3, unfinished 0",
    ]
    assert lines[4:6] == [
        "  session s-beta, 1 agent",
        "    calls 1, tracked 1, wasted 0, denied 0, reminders 0, longest run 1, unfinished 0",
    ]
    assert lines[6].endswith(", diagnostics 1, notes 0")


def test_json_output_is_one_record_per_reminder_then_a_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "replay", "--format", "json", "--preview-chars", "8", LOOP)
    assert status == 0
    first, second, summary = records(out)
    assert {k: first[k] for k in ("type", "file", "line", "session", "tool", "count")} == {
        "type": "reminder",
        "file": LOOP,
        "line": 12,
        "session": "s-loop",
        "tool": "Grep",
        "count": 3,
    }
    assert (first["form"], first["summary"]) == ("gentle", "Grep × 3")
    assert (second["form"], second["count"], second["line"]) == ("detailed", 5, 16)
    text = second["text"]
    assert isinstance(text, str)
    assert '{"path":… (+' in text  # --preview-chars 8 cut the quoted arguments
    assert summary["type"] == "summary"
    assert {k: summary[k] for k in ("calls", "wasted", "reminders", "diagnostics", "lines")} == {
        "calls": 5,
        "wasted": 4,
        "reminders": 2,
        "diagnostics": 0,
        "lines": 17,
    }
    assert summary["sessions"] == [
        {
            "session": "s-loop",
            "agents": 1,
            "calls": 5,
            "tracked": 5,
            "wasted": 4,
            "denied": 0,
            "reminders": 2,
            "longest_run": 5,
            "reminders_by_form": {"detailed": 1, "gentle": 1},
            "tools": {
                "Grep": {
                    "calls": 5,
                    "tracked": 5,
                    "wasted": 4,
                    "reminders": 2,
                    "longest_run": 5,
                }
            },
            "unfinished": 0,
        }
    ]


def test_stdin_and_several_files_and_an_unreadable_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    feed_stdin(monkeypatch, Path(LOOP).read_bytes())
    missing = str(tmp_path / "absent.jsonl")
    status, out, err = run(capsys, "replay", "--format", "json", "-", missing, LOOP)
    assert status == 2
    assert err == f"repeat-guard: cannot read {missing}: No such file or directory\n"
    summaries = [r["file"] for r in records(out) if r["type"] == "summary"]
    assert summaries == ["<stdin>", LOOP]


def test_exclude_makes_the_loop_invisible(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "replay", "--exclude", "Gr*", LOOP)
    assert status == 0
    assert "reminders 0" in out
    assert "tracked 0" in out
    assert "line 12" not in out


def test_a_bad_config_exits_2_before_reading_any_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "guard.json"
    config.write_text('{"thresholds": []}', encoding="utf-8")
    never_read = str(tmp_path / "never-opened.jsonl")
    for argv in (
        ["replay", "--config", str(config), never_read],
        ["replay", "--thresholds", "1", never_read],
        ["replay", "--check", "--config", str(config), never_read],
        ["replay", "--annotate", str(tmp_path / "out"), "--thresholds", "2,2", never_read],
    ):
        status, out, err = run(capsys, *argv)
        assert (status, out) == (2, "")
        assert err.startswith("repeat-guard: error: invalid configuration")
        assert "never-opened" not in err
    assert not (tmp_path / "out").exists()


def test_config_file_applies_to_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "guard.toml"
    config.write_text("thresholds = [2, 4]\n", encoding="utf-8")
    status, out, _ = run(capsys, "replay", "--config", str(config), LOOP)
    assert status == 0
    assert "line 10: Grep × 2 (gentle)" in out
    assert "line 14: Grep × 4 (detailed)" in out


def annotate(
    capsys: pytest.CaptureFixture[str], target: Path, *flags: str, written: str = "2 reminders"
) -> None:
    status, out, err = run(capsys, "replay", "--annotate", str(target), *flags, LOOP)
    assert (status, out) == (0, "")
    assert err == f"{LOOP}: {written} written into the transcript\n"


def test_annotate_then_check_round_trips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "annotated.jsonl"
    annotate(capsys, target)
    written = target.read_bytes().splitlines()
    assert len(written) == 17 + 2
    injected = [json.loads(line) for line in written if b"repeatGuard" in line]
    metas = [record["msg"]["params"]["update"]["_meta"]["repeatGuard"] for record in injected]
    assert [(m["tool"], m["count"], m["form"]) for m in metas] == [
        ("Grep", 3, "gentle"),
        ("Grep", 5, "detailed"),
    ]
    assert all(
        r["msg"]["params"]["update"]["sessionUpdate"] == "user_message_chunk" for r in injected
    )
    status, out, err = run(capsys, "replay", "--check", str(target))
    assert (status, err) == (0, "")
    assert out == f"{target}: ok, 2 reminders as recorded\n"
    # The injected reminders are not prompts: a plain replay still fires at the same points.
    status, out, _ = run(capsys, "replay", str(target))
    assert status == 0
    assert "Grep × 3 (gentle)" in out
    assert "Grep × 5 (detailed)" in out


DECOMPRESS = {".gz": gzip.decompress, ".bz2": bz2.decompress, ".xz": lzma.decompress}


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".GZ"])
@pytest.mark.parametrize("compressed_input", [False, True])
def test_annotate_compresses_a_target_named_so_whatever_the_input(
    suffix: str, compressed_input: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "annotated.jsonl"
    annotate(capsys, plain)
    source = LOOP
    if compressed_input:
        source = str(tmp_path / "loop.jsonl.gz")
        Path(source).write_bytes(gzip.compress(Path(LOOP).read_bytes()))
    target = tmp_path / f"annotated.jsonl{suffix}"
    status, out, err = run(capsys, "replay", "--annotate", str(target), source)
    assert (status, out) == (0, "")
    assert err == f"{source}: 2 reminders written into the transcript\n"
    assert DECOMPRESS[suffix.lower()](target.read_bytes()) == plain.read_bytes()
    status, out, _ = run(capsys, "replay", "--check", str(target))
    assert (status, out) == (0, f"{target}: ok, 2 reminders as recorded\n")


def test_check_fails_when_the_config_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "annotated.jsonl"
    annotate(capsys, target)
    status, out, _ = run(capsys, "replay", "--check", "--thresholds", "2,4", str(target))
    assert status == 1
    lines = out.splitlines()
    assert lines[0] == f"{target}: reminders differ from the recorded ones"
    assert [line.split(": ", 1)[1] for line in lines[1:]] == [
        "Grep × 3 (gentle)",
        "Grep × 5 (detailed)",
        "Grep × 2 (gentle)",
        "Grep × 4 (detailed)",
    ]
    assert [line[:12] for line in lines[1:]] == ["  - recorded"] * 2 + ["  + computed"] * 2


def test_check_shows_only_what_differs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "annotated.jsonl"
    annotate(capsys, target)
    status, out, _ = run(capsys, "replay", "--check", "--thresholds", "3,4", str(target))
    assert status == 1
    differences = out.splitlines()[1:]
    assert len(differences) == 2
    assert differences[0].startswith(f"  - recorded {target}:")
    assert differences[0].endswith("session s-loop: Grep × 5 (detailed)")
    assert differences[1].endswith("session s-loop: Grep × 4 (detailed)")


def test_check_reports_diagnostics_and_unreadable_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "replay", "--check", MIXED, str(tmp_path / "absent"))
    assert status == 2
    assert out.startswith(f"{MIXED}: reminders differ from the recorded ones\n")
    assert f"{MIXED}:11: " in err
    assert "cannot read" in err


def test_annotate_keeps_the_targets_mode_and_replaces_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "annotated.jsonl"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    annotate(capsys, target, "--thresholds", "4", written="1 reminder")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert b"old" not in target.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["annotated.jsonl"]


def test_a_new_target_gets_the_usual_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "new.jsonl"
    umask = os.umask(0o022)
    try:
        annotate(capsys, target)
    finally:
        os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_annotate_to_stdout_with_diagnostics(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    buffer = bytes_stdout(monkeypatch)
    status = main(["replay", "--annotate", "-", MIXED])
    err = capsys.readouterr().err
    assert status == 3
    assert f"{MIXED}:11: " in err
    assert err.endswith(f"{MIXED}: 1 reminder written into the transcript\n")
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 21
    assert lines[:10] == Path(MIXED).read_bytes().splitlines()[:10]


def test_annotate_refuses_to_overwrite_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "t.jsonl"
    source.write_bytes(Path(LOOP).read_bytes())
    status, _, err = run(capsys, "replay", "--annotate", str(source), str(source))
    assert status == 2
    assert "would overwrite its own input" in err
    assert source.read_bytes() == Path(LOOP).read_bytes()


def test_annotate_refuses_to_overwrite_the_configuration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "guard.json"
    config.write_text('{"thresholds": [3, 5]}')
    argv = ["replay", "--config", str(config), "--annotate", str(config), LOOP]
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert (
        err == f"repeat-guard: error: --annotate {config} would overwrite the configuration file\n"
    )
    assert config.read_text() == '{"thresholds": [3, 5]}'


def test_annotate_refuses_an_empty_name(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "replay", "--annotate", "", LOOP)
    assert status == 2
    assert err == "repeat-guard: error: --annotate needs a file name, got ''\n"


def test_annotate_reads_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    feed_stdin(monkeypatch, Path(LOOP).read_bytes())
    target = tmp_path / "out.jsonl"
    assert main(["replay", "--annotate", str(target), "-"]) == 0
    assert "<stdin>: 2 reminders written" in capsys.readouterr().err
    assert len(target.read_bytes().splitlines()) == 19


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay", "--annotate", "out", LOOP, LOOP], "--annotate takes exactly one FILE"),
        (["replay", "--annotate", "out", "/nonexistent/t.jsonl"], "cannot read /nonexistent"),
        (["replay", "--annotate", "/nonexistent/dir/out", LOOP], "cannot write /nonexistent"),
    ],
)
def test_annotate_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert message in err


def test_a_target_that_cannot_be_replaced_leaves_no_temporary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "a-directory"
    target.mkdir()
    status, _, err = run(capsys, "replay", "--annotate", str(target), LOOP)
    assert status == 2
    assert f"cannot write {target}" in err
    assert [p.name for p in tmp_path.iterdir()] == ["a-directory"]


class Interrupted(BaseException):
    pass


def test_an_interrupted_annotation_leaves_the_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"before\n")

    def lines() -> Iterator[bytes]:
        yield Path(LOOP).read_bytes().splitlines(keepends=True)[0]
        raise Interrupted

    streams = Streams(io.StringIO(), io.StringIO())
    opened = _Input("t.jsonl", READERS["acp"], lines())
    with pytest.raises(Interrupted):
        _annotate_atomically(opened, GuardConfig(), str(target), streams)
    assert target.read_bytes() == b"before\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]
    assert isinstance(UsageError("x"), Exception)
    assert GuardConfig() == GuardConfig()


def test_demo_prints_the_bundled_loop(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "demo")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("demo.jsonl: ")
    assert any(line.endswith("× 3 (gentle)") for line in lines)
    assert any(line.endswith("× 5 (detailed)") for line in lines)
    # two recorded sessions: a Bash loop through a denial, and five identical todo_writes
    assert "2 sessions" in lines[0]
    assert "wasted 6, denied 1, reminders 3" in out


def test_demo_json_honours_flags(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "demo", "--format", "json", "--thresholds", "2")
    assert status == 0
    reminders = [r for r in records(out) if r["type"] == "reminder"]
    assert [(r["tool"], r["count"], r["form"]) for r in reminders] == [
        ("Bash", 2, "gentle"),
        ("todo_write", 2, "gentle"),
    ]


@pytest.mark.parametrize(
    ("argv", "status"),
    [([], 2), (["replay"], 2), (["replay", "--help"], 0), (["--help"], 0), (["demo", "-h"], 0)],
)
def test_argparse_statuses_are_returned(
    capsys: pytest.CaptureFixture[str], argv: list[str], status: int
) -> None:
    assert main(argv) == status
    captured = capsys.readouterr()
    assert (captured.out if status == 0 else captured.err).startswith("usage: repeat-guard")


def test_replay_help_documents_statuses_and_keys(capsys: pytest.CaptureFixture[str]) -> None:
    main(["replay", "--help"])
    out = capsys.readouterr().out
    for text in ("exit status:", "  3  some input line", "argumentsPreviewChars", "--check"):
        assert text in out


def test_a_closed_stdout_ends_the_command_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader: every write to the pipe fails with EPIPE
    stdout = io.TextIOWrapper(io.FileIO(write_end, "w"), write_through=True)
    monkeypatch.setattr("sys.stdout", stdout)
    assert main(["demo", "--format", "json"]) == 141
    stdout.write("after\n")  # stdout now points at /dev/null
    stdout.close()


def test_a_closed_stdout_in_a_real_process() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    script = Path(sys.executable).parent / "repeat-guard"
    try:
        done = subprocess.run(
            [script, "demo"], stdout=write_end, stderr=subprocess.PIPE, check=False
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, b"")


def test_a_replay_runs_with_the_collector_held_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []

    def watched(*args: Any, **kwargs: Any) -> Iterator[Outcome]:
        seen.append(gc.isenabled())
        return replay(*args, **kwargs)

    monkeypatch.setattr("repeat_guard_cli._replay.replay", watched)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    was = gc.isenabled()
    gc.enable()
    try:
        status = main(["replay", "--from", "acp", str(path)])
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert (status, seen, after) == (0, [False], True)


def test_serve_with_no_reader_for_its_answers_ends_with_141_as_its_help_says() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    script = Path(sys.executable).parent / "repeat-guard"
    try:
        done = subprocess.run(
            [script, "serve"],
            input=b'{"type": "prompt", "agent": "a"}\n',
            stdout=write_end,
            stderr=subprocess.PIPE,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, b"")
    help_text = subprocess.run(
        [script, "serve", "--help"], capture_output=True, check=True, text=True
    ).stdout
    assert "141 when the reader of the answers goes away" in " ".join(help_text.split())


@pytest.mark.parametrize("command", [["replay", "/nonexistent"], ["check-config", "/nonexistent"]])
def test_a_stderr_that_cannot_be_written_keeps_the_commands_own_status(command: list[str]) -> None:
    # Exit 1 is --check's verdict alone; a message that cannot be told must not turn into it.
    script = Path(sys.executable).parent / "repeat-guard"
    with open("/dev/full", "w") as full:
        done = subprocess.run([script, *command], stderr=full, stdout=subprocess.PIPE, check=False)
    assert done.returncode == 2


def test_a_full_stderr_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # Both streams are the test's own: the command points what fails at /dev/null.
    with open(os.devnull, "w") as null, open("/dev/full", "w") as full:
        monkeypatch.setattr("sys.stdout", null)
        monkeypatch.setattr("sys.stderr", full)
        assert main(["replay", "/nonexistent"]) == 2
        full.write("after\n")  # stderr now points at /dev/null
