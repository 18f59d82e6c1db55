"""Hook benchmark: one ``repeat-guard hook`` process against a do-nothing Python hook.

A hook runs before the agent may go on, so its whole process is the cost: interpreter start,
imports, reading the JSON, the SQLite transaction, the answer. Both commands get the same
``PreToolUse`` JSON on stdin and are run alternately, so load on the machine falls on both
alike. The hook runs twice over: with no configuration file to find (the defaults), and in a
project whose ``.repeat-guard.toml`` it reads (TOML parsing and the config loader on top).
With ``install --results`` a ``PostToolUse`` hook process follows each call as well: it is timed
with the defaults (the result changes nothing, so the store is not opened) and in a project with
``progress = "result"``, where an untimed ``PreToolUse`` of its own session goes before each one,
so that every timed result fills in a waiting call (the SQLite transaction again).
Two more do-nothing hooks show what part of the hook's cost no code of its own could remove:
one that also imports the standard-library modules the core and the store are written with
(``typing``, ``dataclasses``, ``sqlite3``, ``_blake2``), and one that imports the core's two
dependencies (``orjson``, ``pyrsistent``) on top.
Printed: median and p95 wall time of each, their ratios (target: at most 2x), and the hook's
heaviest imports as ``python -X importtime`` reports them.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

RUNS = 40
WARMUP = 3
PAYLOAD = {
    "session_id": "75ed4efb-ff36-4160-9d16-d209eefb574b",
    "transcript_path": "/home/dev/.claude/projects/-home-dev-proj/75ed4efb.jsonl",
    "cwd": "/nonexistent/project",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "ls", "description": "List files"},
    "tool_use_id": "toolu_000_0",
}
DO_NOTHING = "import json, sys\njson.load(sys.stdin.buffer)\n"
# What the hook imports beyond the do-nothing hook and cannot do without: the standard library
# modules the core and the store use (each pulls more: dataclasses inspect and ast, sqlite3
# datetime), then the core's dependencies as well.
STDLIB = "import _blake2, dataclasses, sqlite3, typing\n" + DO_NOTHING
DEPENDENCIES = "import orjson, pyrsistent\n" + STDLIB
CONFIG = 'thresholds = [3, 5, 8]\nexclude = ["TodoWrite"]\n'
RESULT = {
    **PAYLOAD,
    "hook_event_name": "PostToolUse",
    "tool_response": {"stdout": "README.md\nsrc\n", "stderr": "", "interrupted": False},
}
PROGRESS_CONFIG = 'progress = "result"\n'


def _time(command: Sequence[str], data: bytes) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=data, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _p95(samples: Sequence[float]) -> float:
    return sorted(samples)[max(0, round(0.95 * len(samples)) - 1)]


def _heaviest_imports(command: Sequence[str], data: bytes, top: int = 8) -> list[tuple[str, int]]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command], input=data, capture_output=True, check=True
    )
    rows: list[tuple[str, int]] = []
    for line in done.stderr.decode().splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if not name.startswith("  ") and cumulative.strip().isdigit():
            rows.append((name.strip(), int(cumulative)))
    return sorted(rows, key=lambda row: -row[1])[:top]


def _sample(
    runs: dict[str, tuple[list[str], bytes]], before: dict[str, tuple[list[str], bytes]]
) -> dict[str, list[float]]:
    """Time every run alternately, forwards then backwards; ``before`` runs untimed first."""
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for run in range(WARMUP + RUNS):
        order = list(runs.items())
        for name, (command, stdin) in order if run % 2 else reversed(order):
            if name in before:
                _time(*before[name])
            elapsed = _time(command, stdin)
            if run >= WARMUP:
                samples[name].append(elapsed)
    return samples


def main() -> None:
    """Run both hooks alternately and print the comparison."""
    executable = Path(sys.executable).parent / "repeat-guard"
    data = json.dumps(PAYLOAD).encode()
    with tempfile.TemporaryDirectory() as directory:
        project = Path(directory) / "project"
        (project / ".git").mkdir(parents=True)
        (project / ".repeat-guard.toml").write_text(CONFIG)
        configured = json.dumps({**PAYLOAD, "cwd": str(project)}).encode()
        progress = Path(directory) / "progress"
        (progress / ".git").mkdir(parents=True)
        (progress / ".repeat-guard.toml").write_text(PROGRESS_CONFIG)
        result = json.dumps(RESULT).encode()
        recorded = json.dumps({**RESULT, "cwd": str(progress), "session_id": "progress"}).encode()
        counted = json.dumps({**PAYLOAD, "cwd": str(progress), "session_id": "progress"}).encode()
        scripts = {}
        for name, text in (("baseline", DO_NOTHING), ("stdlib", STDLIB), ("deps", DEPENDENCIES)):
            scripts[name] = Path(directory) / f"{name}_hook.py"
            scripts[name].write_text(text)
        state = str(Path(directory) / "state.sqlite3")
        ours = [str(executable), "hook", "claude-code", "--state", state]
        runs = {
            "baseline": ([sys.executable, str(scripts["baseline"])], data),
            "stdlib": ([sys.executable, str(scripts["stdlib"])], data),
            "deps": ([sys.executable, str(scripts["deps"])], data),
            "ours": (ours, data),
            "configured": (ours, configured),
            "result": (ours, result),
            "recorded": (ours, recorded),
        }
        samples = _sample(runs, {"recorded": (ours, counted)})
        # The console script itself, as an agent runs it (no runpy, unlike -m).
        imports = _heaviest_imports(ours, data)
    print(f"hook: one hook process, {RUNS} runs each, alternating")
    labels = {
        "baseline": "do-nothing Python hook",
        "stdlib": "  + stdlib the core uses",
        "deps": "  + orjson, pyrsistent",
        "ours": "repeat-guard hook",
        "configured": "  with .repeat-guard.toml",
        "result": "PostToolUse, defaults",
        "recorded": '  progress = "result"',
    }
    for name, label in labels.items():
        median, p95 = statistics.median(samples[name]), _p95(samples[name])
        print(f"  {label:<26} median {median * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms")
    for name, label in (
        ("stdlib", "floor: stdlib imports"),
        ("deps", "floor: + dependencies"),
        ("ours", "ratio (target <= 2.0)"),
        ("configured", "  with .repeat-guard.toml"),
        ("result", "PostToolUse, defaults"),
        ("recorded", '  progress = "result"'),
    ):
        median_ratio = statistics.median(samples[name]) / statistics.median(samples["baseline"])
        p95_ratio = _p95(samples[name]) / _p95(samples["baseline"])
        print(f"  {label:<26} median {median_ratio:6.2f}x    p95 {p95_ratio:6.2f}x")
    print("  heaviest imports of the hook process (-X importtime, cumulative, inflated):")
    for name, microseconds in imports:
        print(f"    {name:<34} {microseconds / 1000:6.1f} ms")


if __name__ == "__main__":
    main()
