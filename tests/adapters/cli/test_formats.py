"""``repeat-guard replay`` across formats: sniffing, --from, directories, and hostile inputs."""

from __future__ import annotations

import errno
import io
import json
import os
import re
from pathlib import Path

import pytest

import repeat_guard_transcripts._registry as registry_module
from repeat_guard_cli import build_parser, main

FIXTURES = Path(__file__).parents[1] / "transcripts" / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "projects"
LOOP = Path(__file__).parent / "fixtures" / "loop.jsonl"
MID_WAY = FIXTURES / "acp" / "starts_mid_way.jsonl"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_directory_is_walked_and_each_file_sniffed(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "replay", "--format", "json", str(CLAUDE))
    # A file the walk finds and does not read is named on stderr, and is no error.
    meta = next(CLAUDE.glob("*/*/subagents/*.meta.json"))
    assert (status, err) == (0, f"repeat-guard: {meta}: skipped, no reader recognises it\n")
    summaries = [r for r in map(json.loads, out.splitlines()) if r["type"] == "summary"]
    assert [Path(str(r["file"])).name for r in summaries] == [
        "3bcf06ff-d567-4b8e-a8ab-f80cab4dd62e.jsonl",
        "75ed4efb-ff36-4160-9d16-d209eefb574b.jsonl",
        "d40ac318-ccf9-4ebc-9129-faa2c1b3ec26.jsonl",
        "fe29ca76-f36a-4506-9a56-d8a0ac7a41ca.jsonl",
        "agent-a9db1cda3af2c2cce.jsonl",
    ]
    assert [r["wasted"] for r in summaries] == [4, 4, 5, 1, 2]


def test_a_walk_opens_each_file_once_and_never_a_fifo(
    tmp_path: Path,
    fifo_never_opened: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = next(CLAUDE.glob("*/75ed*.jsonl"))
    (tmp_path / "s.jsonl").write_bytes(session.read_bytes())
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    opened: list[str] = []
    guarded = os.open

    def counted(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        opened.append(Path(path).name)
        return guarded(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", counted)
    # A walk passes over what no reader recognises (the notes), even with --from, and the
    # FIFO, naming each: it replays the transcripts it finds, in the format named.
    skipped = (
        f"repeat-guard: {tmp_path / 'notes.txt'}: skipped, no reader recognises it\n"
        f"repeat-guard: {fifo_never_opened}: skipped, not a regular file\n"
    )
    for forced in ([], ["--from", "claude-code"]):
        opened.clear()
        status, out, err = run(capsys, "replay", "--format", "json", *forced, str(tmp_path))
        assert (status, err) == (0, skipped)
        summaries = [r for r in map(json.loads, out.splitlines()) if r["type"] == "summary"]
        assert [(Path(r["file"]).name, r["wasted"]) for r in summaries] == [("s.jsonl", 4)]
        assert sorted(opened) == ["notes.txt", "s.jsonl"]
    assert fifo_never_opened.exists()


def test_a_folder_that_cannot_be_listed_exits_2_and_the_rest_is_replayed(
    tmp_path: Path, unlistable_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s.jsonl").write_bytes(LOOP.read_bytes())
    status, out, err = run(capsys, "replay", str(tmp_path))
    assert status == 2
    assert err == f"repeat-guard: cannot list {unlistable_folder}: Permission denied\n"
    assert "Grep × 3 (gentle)" in out


def test_a_walked_file_that_cannot_be_read_is_reported_and_the_rest_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As for a user other than root: one file cannot be opened, one cannot even be looked at.
    # A third goes after the walk lists it: that one is passed over.
    for name in ("a.jsonl", "b.jsonl", "gone.jsonl", "s.jsonl"):
        (tmp_path / name).write_bytes(LOOP.read_bytes())
    real_open, real_stat = os.open, os.stat

    def refused(path: str) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", path)

    def guarded_open(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if Path(path).name == "a.jsonl":
            refused(path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def guarded_stat(path: str, *, follow_symlinks: bool = True) -> os.stat_result:
        if Path(path).name == "b.jsonl":
            refused(path)
        if Path(path).name == "gone.jsonl":
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        return real_stat(path, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(os, "open", guarded_open)
    monkeypatch.setattr(os, "stat", guarded_stat)
    status, out, err = run(capsys, "replay", str(tmp_path))
    assert status == 2
    assert err == (
        f"repeat-guard: cannot read {tmp_path / 'a.jsonl'}: Permission denied\n"
        f"repeat-guard: cannot read {tmp_path / 'b.jsonl'}: Permission denied\n"
        f"repeat-guard: {tmp_path / 'gone.jsonl'}: skipped, gone before its turn\n"
    )
    assert out.count("Grep × 3 (gentle)") == 1


def test_from_forces_a_format(capsys: pytest.CaptureFixture[str]) -> None:
    session = next(CLAUDE.glob("*/75ed*.jsonl"))
    status, out, err = run(capsys, "replay", "--from", "acp", str(session))
    assert status == 3  # Claude Code records are not JSON-RPC messages
    assert "neither a request, a notification nor a response" in err
    assert "calls 0" in out


def test_a_file_in_no_known_format_exits_2_and_the_rest_is_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unknown = tmp_path / "notes.txt"
    unknown.write_text("hello\n", encoding="utf-8")
    status, out, err = run(capsys, "replay", str(unknown), str(LOOP))
    assert status == 2
    assert f"{unknown}: cannot tell the transcript format; name it with --from" in err
    assert "Grep × 3 (gentle)" in out


def test_notes_are_printed_but_do_not_change_the_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "replay", str(MID_WAY))
    assert status == 0
    assert err.splitlines()[0].startswith(f"{MID_WAY}:1: note: ")
    assert "line 5: execute × 3 (gentle)" in out


def test_unfinished_calls_are_reported_in_text_and_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    never = str(FIXTURES / "acp" / "never_finished.jsonl")
    status, out, _ = run(capsys, "replay", never)
    assert status == 0
    assert "    line 2: execute never finished" in out
    status, out, _ = run(capsys, "replay", "--format", "json", never)
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0] == {
        "type": "unfinished",
        "file": never,
        "line": 2,
        "session": "s-open",
        "tool": "execute",
    }
    assert records[-1]["unfinished"] == 2


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null"])
def test_a_device_is_refused_not_read(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "replay", "--from", "acp", path)
    assert status == 2
    assert err == f"repeat-guard: cannot read {path}: not a regular file\n"


def test_proc_self_mem_gets_a_diagnostic(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "replay", "/proc/self/mem")
    assert status == 3
    assert err == "/proc/self/mem:1: read failed: Input/output error\n"


def test_a_folder_deeper_than_the_recursion_limit_is_replayed(
    tmp_path: Path, deep_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (deep_folder / "loop.jsonl").write_bytes(LOOP.read_bytes())
    status, out, err = run(capsys, "replay", "--format", "json", str(tmp_path / "deep"))
    assert (status, err) == (0, "")
    assert [json.loads(line)["type"] for line in out.splitlines()][-1] == "summary"


def test_a_fifo_without_a_writer_is_refused_not_waited_for_forever(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("repeat_guard_transcripts._files.FIFO_WAIT_SECONDS", 0.1)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for forced in ([], ["--from", "acp"]):
        status, out, err = run(capsys, "replay", *forced, str(fifo))
        assert (status, out) == (2, "")
        assert err == f"repeat-guard: cannot read {fifo}: no writer opened the FIFO within 0.1 s\n"


LONE_SURROGATES = (
    b'{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s\\ud800", '
    b'"update": {"sessionUpdate": "tool_call", "toolCallId": "t%d", "title": "\\udfff", '
    b'"status": "completed", "rawInput": {"x": "\\ud800"}}}}\n'
)


def test_lone_surrogates_never_crash_the_text_or_json_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "bad\udcff.jsonl"
    source.write_bytes(b"".join(LONE_SURROGATES % n for n in range(5)) + b'{"\xff": 1}\n')
    status, out, err = run(capsys, "replay", str(source))
    assert status == 3
    assert "session s\\ud800, 1 agent" in out
    assert "line 3: \\udfff × 3 (gentle)" in out
    assert "bad\\udcff.jsonl:6: not UTF-8" in err
    status, out, _ = run(capsys, "replay", "--format", "json", str(source))
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0]["session"] == "s\ud800"
    assert records[0]["tool"] == "\udfff"


def test_lone_surrogates_never_crash_the_annotated_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_bytes(b"".join(LONE_SURROGATES % n for n in range(5)))
    target = tmp_path / "out.jsonl"
    status, _, _ = run(capsys, "replay", "--annotate", str(target), str(source))
    assert status == 0
    lines = target.read_bytes().splitlines()
    assert len(lines) == 7
    injected = json.loads(lines[3])
    assert injected["params"]["sessionId"] == "s\ud800"


@pytest.mark.parametrize("kind", ["fifo", "device", "symlink"])
def test_annotate_refuses_a_target_that_is_not_a_regular_file(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if kind == "fifo":
        target = tmp_path / "fifo"
        os.mkfifo(target)
        reason = "not a regular file"
    elif kind == "device":
        target = Path("/dev/null")
        reason = "not a regular file"
    else:
        other = tmp_path / "other.jsonl"
        other.write_bytes(b"keep\n")
        target = tmp_path / "link.jsonl"
        target.symlink_to(other)
        reason = "it is a symbolic link; name its target"
    status, _, err = run(capsys, "replay", "--annotate", str(target), str(LOOP))
    assert status == 2
    assert err == f"repeat-guard: error: cannot write {target}: {reason}\n"
    if kind == "symlink":
        assert (tmp_path / "other.jsonl").read_bytes() == b"keep\n"
        assert target.is_symlink()


def test_annotate_refuses_a_format_that_cannot_carry_reminders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = next(CLAUDE.glob("*/75ed*.jsonl"))
    status, _, err = run(capsys, "replay", "--annotate", str(tmp_path / "o"), str(session))
    assert status == 2
    assert "is a claude-code transcript, which cannot carry reminders" in err
    assert list(tmp_path.iterdir()) == []


def test_annotate_of_an_unknown_format_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unknown = tmp_path / "notes.txt"
    unknown.write_text("hello\n", encoding="utf-8")
    status, _, err = run(capsys, "replay", "--annotate", str(tmp_path / "o"), str(unknown))
    assert status == 2
    assert "cannot tell the transcript format" in err


def test_annotate_does_not_replace_the_target_when_a_line_was_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import repeat_guard_transcripts._lines as lines_module

    monkeypatch.setattr(lines_module, "MAX_LINE_BYTES", 4096)
    source = tmp_path / "t.jsonl"
    source.write_bytes(LOOP.read_bytes() + b'{"x": "' + b"y" * 5000 + b'"}\n')
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"before\n")
    status, _, err = run(capsys, "replay", "--annotate", str(target), str(source))
    assert status == 2
    assert "line 18 of" in err
    assert target.read_bytes() == b"before\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "t.jsonl"]


def test_stdin_is_sniffed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    session = next(CLAUDE.glob("*/75ed*.jsonl"))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(session.read_bytes())))
    status, out, _ = run(capsys, "replay", "-")
    assert status == 0
    assert out.startswith("<stdin>: 17 lines, 1 session")
    assert "line 15: Bash × 5 (detailed)" in out


def test_a_target_whose_folder_is_a_file_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    target = f"{LOOP}/out.jsonl"
    status, _, err = run(capsys, "replay", "--annotate", target, str(LOOP))
    assert status == 2
    assert err == f"repeat-guard: error: cannot write {target}: Not a directory\n"


def test_a_failed_rename_leaves_no_temporary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.replace", refuse)
    status, _, err = run(capsys, "replay", "--annotate", str(tmp_path / "o"), str(LOOP))
    assert status == 2
    assert err.endswith(f"cannot write {tmp_path / 'o'}: No space left on device\n")
    assert list(tmp_path.iterdir()) == []


def test_a_bug_exits_70_with_a_traceback_never_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object) -> int:
        raise KeyError("bug")

    monkeypatch.setattr("repeat_guard_cli._replay.replay_files", broken)
    status, _, err = run(capsys, "replay", str(LOOP))
    assert status == 70
    assert "KeyError: 'bug'" in err
    assert err.endswith("repeat-guard: internal error (exit 70); please report it\n")


def test_a_bug_in_a_hook_command_is_left_to_the_hook_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object) -> int:
        raise KeyError("bug")

    from repeat_guard_cli._cli import _SEPARATE

    monkeypatch.setitem(_SEPARATE, "hook", broken)
    with pytest.raises(KeyError):
        main(["hook", "codex", "--state=st.db"])  # argparse's way in


class _Plain:
    """A format of one's own: one module with a reader, one ``register`` line."""

    name = "plain"
    description = "one tool name a line"

    def sniff(self, head: bytes) -> bool:
        return False

    def read(self, lines: object, file: str) -> list[object]:
        return []


def test_the_formats_offered_are_the_registrys(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry_module._READERS, "plain", _Plain())
    assert build_parser().parse_args(["replay", "--from", "plain", "f"]).source_format == "plain"
    status, out, _ = run(capsys, "replay", "--help")
    assert status == 0
    # One column of names, as wide as the longest name needs.
    assert re.search(r"\n  plain +one tool name a line\n", out)
    assert re.search(r"\n  claude-code +~/\.claude/projects/<project>/<session>\.jsonl", out)
