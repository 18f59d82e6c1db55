"""Fuzzing every reader: any bytes give outcomes, never an exception.

``make test`` runs a few thousand transcripts; ``make fuzz`` sets ``REPEAT_GUARD_FUZZ`` to run
a long campaign of the same test (see the transcripts package's README for its figures).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from repeat_guard_cli import main

from .fuzzing import exercise, fuzz_settings, transcripts

EXAMPLES = int(os.environ.get("REPEAT_GUARD_FUZZ", "3000"))


@fuzz_settings(EXAMPLES)
@given(transcripts())
def test_any_transcript_replays_reports_and_annotates_without_an_exception(
    case: tuple[str, list[bytes]],
) -> None:
    fmt, lines = case
    assert exercise(fmt, lines) >= 1


@fuzz_settings(max(EXAMPLES // 20, 50))
@given(transcripts(), st.sampled_from(["text", "json", "check", "annotate"]))
def test_the_command_exits_0_or_3_on_any_transcript(
    case: tuple[str, list[bytes]], mode: str
) -> None:
    fmt, lines = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_bytes(b"".join(lines))
        argv = ["replay", "--from", fmt, str(path)]
        if mode in ("text", "json"):
            argv[1:1] = ["--format", mode]
        elif mode == "check":
            argv.insert(1, "--check")
        elif fmt == "acp":
            argv[1:1] = ["--annotate", str(Path(folder) / "out.jsonl")]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
    allowed = {0, 3, 1} if mode == "check" else {0, 3}
    assert status in allowed, err.getvalue()
    assert "Traceback" not in err.getvalue()
