"""Replay benchmark: throughput against bare JSON parsing, and peak memory at 10 MB and 100 MB.

Figures are ratios measured in one run. Peak memory is read from a fresh subprocess per input
(``ru_maxrss``), so each figure is that replay's own.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from repeat_guard import GuardConfig
from repeat_guard_transcripts import READERS, FileSummary, bounded_lines, collector_paused, replay

try:  # the fastest JSON parser available in the venv is the baseline
    import orjson  # in this workspace through langsmith, a dependency of the LangChain adapter

    parse: Callable[[bytes], object] = orjson.loads
    PARSER = "orjson"
except ImportError:
    parse = json.loads
    PARSER = "json"


def write_transcript(path: Path, megabytes: int, seed: int = 5) -> int:
    """Write a recorder-form transcript of about ``megabytes`` MB; return its tool calls."""
    rng = random.Random(seed)
    target = megabytes * 1_000_000
    written = calls = 0
    with path.open("w", encoding="utf-8") as out:

        def emit(direction: str, message: dict[str, object]) -> None:
            nonlocal written
            line = json.dumps({"dir": direction, "msg": message}) + "\n"
            out.write(line)
            written += len(line)

        session = 0
        while written < target:
            session += 1
            sid = f"s{session}"
            emit(
                "c2a",
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "session/prompt",
                    "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]},
                },
            )
            previous: dict[str, object] | None = None
            for n in range(40):
                if previous is not None and rng.random() < 0.30:
                    raw_input = previous
                else:
                    raw_input = {"command": f"grep -n item{rng.randrange(50)} src/", "cwd": "/w"}
                previous = raw_input
                tid = f"call_{n}"
                update = {
                    "sessionUpdate": "tool_call",
                    "toolCallId": tid,
                    "title": "grep",
                    "kind": "search",
                    "status": "pending",
                    "rawInput": raw_input,
                }
                emit(
                    "a2c",
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {"sessionId": sid, "update": update},
                    },
                )
                output = "match line\n" * rng.randrange(100, 3000)
                done = {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tid,
                    "status": "completed",
                    "rawOutput": {"stdout": output},
                }
                emit(
                    "a2c",
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {"sessionId": sid, "update": done},
                    },
                )
                calls += 1
            emit("a2c", {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}})
    return calls


def replay_file(path: Path) -> FileSummary:
    """Replay ``path`` as ``repeat-guard replay`` does, with the collector held off."""
    with path.open("rb") as stream, collector_paused():
        items = READERS["acp"].read(bounded_lines(stream), str(path))
        outcomes = [
            outcome
            for outcome in replay(items, GuardConfig(), file=str(path))
            if isinstance(outcome, FileSummary)
        ]
    return outcomes[-1]


def parse_file(path: Path) -> int:
    count = 0
    with path.open("rb") as lines:
        for line in lines:
            parse(line)
            count += 1
    return count


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def peak_rss_mb(path: Path) -> float:
    """Peak resident memory of a fresh process that replays ``path``.

    Read from ``VmHWM``, which starts afresh at exec; ``ru_maxrss`` would carry the parent's.
    """
    code = (
        "import sys\n"
        "from bench.replay import replay_file\n"
        "from pathlib import Path\n"
        "replay_file(Path(sys.argv[1]))\n"
        "status = Path('/proc/self/status').read_text()\n"
        "print(next(l.split()[1] for l in status.splitlines() if l.startswith('VmHWM:')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, check=True, text=True
    )
    return int(done.stdout.strip()) / 1024


def main() -> None:
    """Print the replay figures."""
    with tempfile.TemporaryDirectory() as folder:
        small, large = Path(folder) / "10mb.jsonl", Path(folder) / "100mb.jsonl"
        write_transcript(small, 10)
        calls = write_transcript(large, 100)
        size = large.stat().st_size / 1e6
        summary = replay_file(large)
        assert summary.tally.calls == calls
        assert summary.errors == 0
        replay = min(timed(lambda: replay_file(large)) for _ in range(2))
        baseline = min(timed(lambda: parse_file(large)) for _ in range(2))
        print(
            f"replay: {size:.0f} MB transcript, {calls:,} tool calls, "
            f"{summary.tally.wasted:,} wasted, {summary.tally.reminders:,} reminders"
        )
        print(f"  replay        {size / replay:8.1f} MB/s")
        print(f"  {PARSER}.loads  {size / baseline:8.1f} MB/s (every line, nothing else)")
        print(f"  ratio replay/parse: {baseline / replay:.2f}x (target >= 0.5x)")
        print(
            f"  peak RSS: 10 MB input {peak_rss_mb(small):.0f} MB, "
            f"100 MB input {peak_rss_mb(large):.0f} MB"
        )
        print(
            f"  (this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)"
        )
