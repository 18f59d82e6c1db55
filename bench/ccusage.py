"""The audit against ccusage, the tool people already run over ``~/.claude/projects``, on the
same generated folder of real-shaped Claude Code sessions (``bench.sessions``).

Both are run as a user runs them, with the machine's cores: ``repeat-guard audit <folder>
--format json`` and ``ccusage session --json --offline`` (``CLAUDE_CONFIG_DIR`` pointing at
the folder), output to /dev/null, in alternating rounds; the medians give each one's MB/s and
their ratio, and the CPU seconds each spent (user and system, its every process): on a shared
machine the wall clock follows the load as much as the code, the CPU time much less. Beside
them, on one core: the audit (``--jobs 1``) against ``orjson.loads`` of every line of the
same files and against the floor's check of every line (below) in this process, also
alternating. The load average is printed with the figures.

The floor (``bench.floor``) runs in the same rounds: a pool of the machine's cores that only
reads every line and checks it is UTF-8 JSON, as any reader must to name a bad line by file
and line. Its MB/s against ccusage's is the best any audit keeping that promise can reach here.

ccusage is installed by ``make bench`` (pinned, into ``.tools/``), which names its executable
in ``REPEAT_GUARD_BENCH_CCUSAGE``; without it that comparison is left out.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson

from bench.floor import checked_lines
from bench.sessions import write_projects

ROUNDS = 5
MEGABYTES = float(os.environ.get("REPEAT_GUARD_BENCH_MB", "200"))
AUDIT = str(Path(sys.executable).with_name("repeat-guard"))
FLOOR = [sys.executable, "-m", "bench.floor"]


Timing = tuple[float, float]
"""Wall-clock seconds and CPU seconds (user and system, the process and its children)."""


def _run(command: Sequence[str], env: dict[str, str] | None = None) -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _timed(work: Callable[[], object]) -> Timing:
    start, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - start, time.process_time() - cpu


def _loads_every_line(files: Sequence[Path]) -> None:
    loads = orjson.loads
    for path in files:
        with path.open("rb") as lines:
            for line in lines:
                loads(line)


def alternating(contenders: Sequence[Callable[[], Timing]], rounds: int = ROUNDS) -> list[Timing]:
    """Each contender's median wall-clock and CPU seconds over ``rounds`` rounds, one run of
    each per round, the order turning round by round (so neither always runs first)."""
    times: list[list[Timing]] = [[] for _ in contenders]
    for round_ in range(rounds):
        order = list(range(len(contenders)))
        if round_ % 2:
            order.reverse()
        for index in order:
            times[index].append(contenders[index]())
    return [
        (statistics.median(t[0] for t in column), statistics.median(t[1] for t in column))
        for column in times
    ]


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} CPUs"


def main() -> None:
    """Print the audit's MB/s against ccusage's and against orjson's."""
    ccusage = os.environ.get("REPEAT_GUARD_BENCH_CCUSAGE")
    print("audit against ccusage and orjson, real-shaped Claude Code sessions:")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        size = write_projects(root, MEGABYTES) / 1e6
        projects = root / "projects"
        files = sorted(projects.rglob("*.jsonl"))
        print(f"  {len(files)} files, {size:.0f} MB, medians of {ROUNDS} alternating rounds")
        audit = [AUDIT, "audit", str(projects), "--format", "json"]
        floor = [*FLOOR, str(projects)]
        if ccusage and Path(ccusage).exists():
            env = {**os.environ, "CLAUDE_CONFIG_DIR": str(root)}
            ours, theirs, least = alternating(
                [
                    lambda: _run(audit),
                    lambda: _run([ccusage, "session", "--json", "--offline"], env),
                    lambda: _run(floor),
                ]
            )
            print(
                f"  all cores: audit {size / ours[0]:6.1f} MB/s, ccusage {size / theirs[0]:6.1f} "
                f"MB/s: audit/ccusage {theirs[0] / ours[0]:.2f}x (target >= 1.0x); {_load()}"
            )
            print(
                f"    CPU seconds (user + system, every process): audit {ours[1]:.2f}, ccusage "
                f"{theirs[1]:.2f}: MB per CPU second {theirs[1] / ours[1]:.2f}x ccusage's"
            )
            print(
                f"    floor (every line read and checked as UTF-8 JSON, nothing else): "
                f"{size / least[0]:6.1f} MB/s, {least[1]:.2f} CPU s: floor/ccusage "
                f"{theirs[0] / least[0]:.2f}x, audit/floor {least[0] / ours[0]:.2f}x"
            )
        else:
            print("  ccusage not installed (make bench installs it): that comparison left out")
        one, parse, checked = alternating(
            [
                lambda: _run([*audit, "--jobs", "1"]),
                lambda: _timed(lambda: _loads_every_line(files)),
                lambda: _timed(lambda: [checked_lines(str(path)) for path in files]),
            ]
        )
        print(
            f"  one core: audit {size / one[0]:6.1f} MB/s, orjson.loads of every line "
            f"{size / parse[0]:6.1f} MB/s: audit/orjson {parse[0] / one[0]:.2f}x; {_load()}"
        )
        print(
            f"    the floor's check of every line, in this process: {size / checked[0]:6.1f} "
            f"MB/s ({checked[1]:.2f} CPU s): audit/floor {checked[0] / one[0]:.2f}x"
        )


if __name__ == "__main__":
    main()
