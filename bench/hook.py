"""Hook benchmark: one ``repeat-guard hook`` process against a do-nothing Python hook.

A hook runs before the agent may go on, so its whole process is the cost: interpreter start,
imports, reading the JSON, the SQLite transaction, the answer. Each hook process here handles
its call itself (``REPEAT_GUARD_DAEMON=off``), as it does when no resident guard runs. Both
commands get the same ``PreToolUse`` JSON on stdin and are run alternately, so load on the
machine falls on both alike. The hook runs twice over: with no configuration file to find
(the defaults), and in a project whose ``.repeat-guard.toml`` it reads (TOML parsing and the
config loader on top).
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

Then what a plain ``install`` costs a host per ``Bash`` or ``Read`` call (``_result_hooks``): its
``PreToolUse`` hook process, and the ``PostToolUse`` one its result entry (the preset's polling
tools) adds, with a tool output of 4 KB (``Bash``) and of 1 MB (``Read`` of a large file), each
after an untimed ``PreToolUse`` of the same call, so that the result fills in a waiting call.
Each is timed with a resident guard running (the hook hands the call over its socket) and
without one (``REPEAT_GUARD_DAEMON=off``: the hook does the call itself), beside the
do-nothing hook reading the same JSON: the median wall and CPU time of the hook process, and
the resident guard's CPU time per call (its mean: the kernel counts it in 10 ms ticks). Last,
an event over ``INPUT_LIMIT`` (a 17 MB result): the hook must stand aside (status 0, no answer)
and log one line, and its cost is printed.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from repeat_guard_hookcall import INPUT_LIMIT, ask_daemon

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
# The hook processes timed first handle each call themselves: else the first would start a
# resident guard and the others hand their calls to it (bench/daemon.py and _result_hooks).
ALONE = {**os.environ, "REPEAT_GUARD_DAEMON": "off"}


def _time(command: Sequence[str], data: bytes) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=data, stdout=subprocess.DEVNULL, env=ALONE, check=True)
    return time.perf_counter() - start


def _p95(samples: Sequence[float]) -> float:
    return sorted(samples)[max(0, round(0.95 * len(samples)) - 1)]


def _heaviest_imports(command: Sequence[str], data: bytes, top: int = 8) -> list[tuple[str, int]]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        input=data,
        capture_output=True,
        env=ALONE,
        check=True,
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
    _result_hooks(executable)


# The result hooks: one call's PreToolUse and PostToolUse events, ``@ID@`` its number.
CALL = {
    **PAYLOAD,
    "session_id": "result-hooks",
    "tool_use_id": "toolu_@ID@",
}


def _bash_call(size: int) -> tuple[dict[str, object], dict[str, object]]:
    command = {"command": "tail -n 80 build-@ID@.log", "description": "Show the build log"}
    line = "compiling module @ID@: ok, 0 warnings, 0 errors ..........\n"
    output = (line * (size // len(line) + 1))[:size]
    result = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
    pre: dict[str, object] = {**CALL, "tool_name": "Bash", "tool_input": command}
    return pre, {**pre, "hook_event_name": "PostToolUse", "tool_response": result}


def _read_call(size: int) -> tuple[dict[str, object], dict[str, object]]:
    path = "/nonexistent/project/data/export-@ID@.csv"
    line = '2026-12-06T08:00:00Z,42,export,batch,ok,0.125,"a quoted field"\n'
    content = (line * (size // len(line) + 1))[:size]
    lines = content.count("\n")
    file = {"filePath": path, "content": content, "numLines": lines, "startLine": 1}
    result = {"type": "text", "file": {**file, "totalLines": lines}}
    pre: dict[str, object] = {**CALL, "tool_name": "Read", "tool_input": {"file_path": path}}
    return pre, {**pre, "hook_event_name": "PostToolUse", "tool_response": result}


class _Timed:
    """One kind of hook call: its command, environment and stdin (``@ID@``: the run's number),
    and the untimed event sent before each (``None``: none)."""

    def __init__(
        self, command: list[str], env: dict[str, str], data: bytes, before: bytes | None = None
    ) -> None:
        self.command, self.env, self.data, self.before = command, env, data, before
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.guard = 0.0

    def run(self, number: int, guard: int | None) -> None:
        # Each kind's calls are calls of their own: no kind repeats another's.
        marker = f"{id(self)}-{number}".encode()
        if self.before is not None:
            self._call(self.before.replace(b"@ID@", marker))
        data = self.data.replace(b"@ID@", marker)
        started, used = _guard_cpu(guard), resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        self._call(data)
        self.wall.append(time.perf_counter() - start)
        done = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append(done.ru_utime - used.ru_utime + done.ru_stime - used.ru_stime)
        self.guard += _guard_cpu(guard) - started

    def _call(self, data: bytes) -> None:
        subprocess.run(
            self.command, input=data, stdout=subprocess.DEVNULL, env=self.env, check=True
        )


def _guard_cpu(pid: int | None) -> float:
    # The resident guard's user and system time so far, in seconds (0 without one).
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serving(state: str, timeout: float = 10.0) -> bool:
    """Whether the resident guard of ``state`` answers within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ask_daemon(state, b"S\n")[0][:1] == b"+":
            return True
        time.sleep(0.01)
    return False


def _result_kinds(
    directory: Path, executable: Path, warm: dict[str, str], off: dict[str, str]
) -> dict[str, _Timed]:
    hook = [str(executable), "hook", "claude-code"]
    kinds: dict[str, _Timed] = {}
    for label, (pre, result) in (
        ("Bash, 4 KB", _bash_call(4096)),
        ("Read, 1 MB", _read_call(1 << 20)),
    ):
        before, data = json.dumps(pre).encode(), json.dumps(result).encode()
        script = directory / "do_nothing_hook.py"
        script.write_text(DO_NOTHING)
        kinds[f"{label}: do-nothing hook"] = _Timed([sys.executable, str(script)], off, data)
        kinds[f"{label}: PreToolUse, guard"] = _Timed(hook, warm, before)
        kinds[f"{label}: PreToolUse, no guard"] = _Timed(hook, off, before)
        kinds[f"{label}: PostToolUse, guard"] = _Timed(hook, warm, data, before)
        kinds[f"{label}: PostToolUse, no guard"] = _Timed(hook, off, data, before)
    return kinds


def _print_results(kinds: dict[str, _Timed]) -> None:
    print(f"result hooks (plain install): one hook process, {RUNS} runs each, alternating")
    print(f"  {'':<38} {'wall':>8} {'CPU':>8} {'guard CPU':>10}   wall vs do-nothing")
    base: dict[str, float] = {}
    for name, kind in kinds.items():
        label = name.partition(": ")[0]
        wall, cpu = statistics.median(kind.wall), statistics.median(kind.cpu)
        base.setdefault(label, wall)
        guard = kind.guard / len(kind.wall)
        print(
            f"  {name:<38} {wall * 1000:5.1f} ms {cpu * 1000:5.1f} ms {guard * 1000:7.1f} ms"
            f"   {wall / base[label]:5.2f}x"
        )
    for label in base:
        for mode in ("guard", "no guard"):
            pre = statistics.median(kinds[f"{label}: PreToolUse, {mode}"].wall)
            post = statistics.median(kinds[f"{label}: PostToolUse, {mode}"].wall)
            print(
                f"  {label}, {mode:<8}: per call {(pre + post) * 1000:5.1f} ms "
                f"(PreToolUse {pre * 1000:.1f} + PostToolUse {post * 1000:.1f}), "
                f"result hook {post / pre:.2f}x the PreToolUse one"
            )


def _over_limit(executable: Path, env: dict[str, str], state: str, mode: str) -> None:
    """One event over ``INPUT_LIMIT``: the hook stands aside (status 0, no answer) and logs one
    line; print its wall time."""
    _, result = _read_call(INPUT_LIMIT + (1 << 20))
    log = Path(f"{state}.log")
    lines = log.read_text().count("\n") if log.exists() else 0
    start = time.perf_counter()
    done = subprocess.run(
        [str(executable), "hook", "claude-code"],
        input=json.dumps(result).encode(),
        capture_output=True,
        env=env,
        check=False,
    )
    elapsed = time.perf_counter() - start
    logged = log.read_text().splitlines()[lines:] if log.exists() else []
    assert done.returncode == 0, done.returncode
    assert not done.stdout, done.stdout[:200]
    assert len(logged) == 1, logged
    assert "INPUT_LIMIT" in logged[0], logged
    size = len(json.dumps(result)) / 1e6
    print(
        f"  over INPUT_LIMIT ({size:.1f} MB), {mode}: {elapsed * 1000:.1f} ms,"
        " status 0, one log line"
    )


def _result_hooks(executable: Path) -> None:
    """Time the hooks a plain install runs for each ``Bash`` or ``Read`` call (see the module's
    docstring) and print them."""
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        state, alone = str(folder / "warm" / "state.sqlite3"), str(folder / "off" / "state.sqlite3")
        warm = {**os.environ, "REPEAT_GUARD_STATE": state, "REPEAT_GUARD_DAEMON": "auto"}
        off = {**os.environ, "REPEAT_GUARD_STATE": alone, "REPEAT_GUARD_DAEMON": "off"}
        os.makedirs(os.path.dirname(state), mode=0o700)
        kinds = _result_kinds(folder, executable, warm, off)
        guard = subprocess.Popen([str(executable), "daemon", "serve", "--state", state], env=warm)
        try:
            assert serving(state), "the guard did not start"
            for run in range(WARMUP + RUNS):
                order = list(kinds.values())
                for kind in order if run % 2 else reversed(order):
                    kind.run(run, guard.pid if kind.env is warm else None)
            for kind in kinds.values():
                del kind.wall[:WARMUP], kind.cpu[:WARMUP]
            _print_results(kinds)
            _over_limit(executable, warm, state, "guard")
        finally:
            ask_daemon(state, b"Q\n")
            guard.wait(timeout=30)
        _over_limit(executable, off, alone, "no guard")


if __name__ == "__main__":
    main()
