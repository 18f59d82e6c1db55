"""Render ``adapters/cli/README.md`` from ``README.in.md``, running every example for real.

Each ``{{NAME}}`` in the template becomes a console block holding a command and the output it
printed when run here, in a scratch directory seeded with the test fixtures, so the README never
shows output the command did not produce. Run from the repository root after changing the
command or the replay library::

    .venv/bin/python adapters/cli/docs/render_readme.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FIXTURES = ROOT / "tests" / "adapters" / "cli" / "fixtures"
EVENTS = (
    '{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {"pattern": "x"}}\n'
    '{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {"pattern": "x"}}\n'
    "not json\n"
    '{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {"pattern": "x"}}\n'
    '{"type": "prompt", "agent": "a"}\n'
)
ASKS = (
    '{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {"pattern": "x"}}\n'
    '{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {"pattern": "x"}}\n'
    '{"type": "admit", "agent": "a", "tool": "grep", "arguments": {"pattern": "x"}}\n'
    '{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {"pattern": "x"}, '
    '"denied": true}\n'
)
EXAMPLES = {
    "DEMO": "repeat-guard demo",
    "REPLAY": "repeat-guard replay --config guard.toml session.jsonl",
    "JSON": "repeat-guard replay --format json --preview-chars 40 session.jsonl",
    "MIXED": "repeat-guard replay mixed.jsonl",
    "ANNOTATE": "repeat-guard replay --annotate annotated.jsonl session.jsonl",
    "CHECK": "repeat-guard replay --check annotated.jsonl",
    "CHECK2": "repeat-guard replay --check --thresholds 2,4 annotated.jsonl",
    "CONFIG": "repeat-guard check-config guard.toml",
    "BADCONFIG": "repeat-guard check-config bad.json",
    "BADREPLAY": "repeat-guard replay --config bad.json does-not-exist.jsonl",
    "SERVE": "repeat-guard serve --thresholds 3 < events.jsonl",
    "ADMIT": "repeat-guard serve --config deny.toml < asks.jsonl",
    "DASHM": "python -m repeat_guard_cli check-config guard.toml --thresholds 2,4 "
    "--preview-chars 80",
    "AUDIT": "repeat-guard audit --top 3 --jobs 1 session.jsonl mixed.jsonl",
}


def seed(work: Path) -> None:
    """Write the files the examples read into ``work``."""
    shutil.copy(FIXTURES / "loop.jsonl", work / "session.jsonl")
    shutil.copy(FIXTURES / "mixed.jsonl", work / "mixed.jsonl")
    (work / "guard.toml").write_text(
        'thresholds = [3, 5, 8]\nexclude = ["todo_write"]\nargumentsPreviewChars = 200\n',
        encoding="utf-8",
    )
    (work / "bad.json").write_text('{"thresholds": [3, 1]}\n', encoding="utf-8")
    (work / "events.jsonl").write_text(EVENTS, encoding="utf-8")
    (work / "deny.toml").write_text("thresholds = [3]\ndenyAt = 3\n", encoding="utf-8")
    (work / "asks.jsonl").write_text(ASKS, encoding="utf-8")


def console(command: str, work: Path) -> str:
    """Return a console block with ``command``, its output, and its status when not 0."""
    bin_dir = str(Path(sys.executable).parent)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(
        command, shell=True, cwd=work, env=env, capture_output=True, text=True, check=False
    )
    status = "" if done.returncode == 0 else f"$ echo $?\n{done.returncode}\n"
    return f"```console\n$ {command}\n{done.stdout}{done.stderr}{status}```"


def render() -> str:
    """Return the README text with every example run."""
    text = (HERE / "README.in.md").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        seed(work)
        for name, command in EXAMPLES.items():
            text = text.replace("{{" + name + "}}", console(command, work))
    text = text.replace("{{EVENTS}}", f"```console\n$ cat events.jsonl\n{EVENTS}```")
    text = text.replace("{{ASKS}}", f"```console\n$ cat asks.jsonl\n{ASKS}```")
    if "{{" in text:
        raise SystemExit("README.in.md names an example this script does not define")
    return text


if __name__ == "__main__":
    (HERE.parent / "README.md").write_text(render(), encoding="utf-8")
