"""Reader benchmark: each reader (with the replay) against plain orjson parsing, memory at
1 GB, and many sessions in one file.

Figures are ratios from one run on generated data (nothing large is committed):

* throughput of each reader plus the replay, over orjson parsing the same file (every line of
  a JSON Lines file, the whole document of a trajectory), for 200,000 lines of 235 to 515
  bytes and for large lines (1 MiB each); target >= 0.5x; the reader alone is shown beside
  it, so the reader's share and the replay's can be told apart;
* peak RSS (``VmHWM`` of a fresh process) replaying a 1 GB ACP transcript over a 10 MB one,
  through the library and through ``repeat-guard replay`` (text report); the transcript loops
  (runs of four identical calls), so reminders pile up as they would in a real loop; target
  <= 1.2x;
* per-call cost with 100,000 sessions in one file over one session with as many calls;
  target close to 1x.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

from repeat_guard import GuardConfig
from repeat_guard_transcripts import READERS, FileSummary, bounded_lines, collector_paused, replay

SMALL_LINES = 200_000
LARGE_LINES = 40
LARGE_BYTES = 1 << 20


def _pad(text: str, size: int) -> str:
    return text + " " * max(0, size - len(text))


def _acp_line(session: str, call: int, payload: str, pattern: int | None = None) -> bytes:
    update = {
        "sessionUpdate": "tool_call",
        "toolCallId": f"c{call}",
        "status": "completed",
        "title": "grep",
        "kind": "search",
        "rawInput": {"pattern": f"item{call % 7 if pattern is None else pattern}", "path": "src/"},
        "rawOutput": {"text": payload},
    }
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }
    return orjson.dumps({"dir": "a2c", "msg": message}) + b"\n"


def acp_lines(count: int, payload: str, sessions: int = 1) -> Iterator[bytes]:
    for call in range(count):
        yield _acp_line(f"s{call % sessions}", call, payload)


def looping_acp_lines(count: int, payload: str, sessions: int) -> Iterator[bytes]:
    """Calls spread over ``sessions``, each session repeating every call four times."""
    for call in range(count):
        yield _acp_line(f"s{call % sessions}", call, payload, call // (4 * sessions) % 7)


def claude_lines(count: int, payload: str) -> Iterator[bytes]:
    for call in range(0, count, 2):
        use = {
            "type": "tool_use",
            "id": f"t{call}",
            "name": "Grep",
            "input": {"pattern": f"p{call % 7}"},
        }
        yield (
            orjson.dumps(
                {
                    "type": "assistant",
                    "sessionId": "s",
                    "isSidechain": False,
                    "message": {"content": [use]},
                }
            )
            + b"\n"
        )
        result = {"type": "tool_result", "tool_use_id": f"t{call}", "content": payload}
        yield (
            orjson.dumps(
                {
                    "type": "user",
                    "sessionId": "s",
                    "isSidechain": False,
                    "message": {"content": [result]},
                }
            )
            + b"\n"
        )


def codex_lines(count: int, payload: str) -> Iterator[bytes]:
    yield orjson.dumps({"type": "session_meta", "payload": {"id": "s"}}) + b"\n"
    for call in range(0, count, 2):
        arguments = json.dumps({"cmd": f"grep p{call % 7}"})
        item = {
            "type": "function_call",
            "name": "exec_command",
            "arguments": arguments,
            "call_id": f"c{call}",
        }
        yield orjson.dumps({"type": "response_item", "payload": item}) + b"\n"
        output = {"type": "function_call_output", "call_id": f"c{call}", "output": payload}
        yield orjson.dumps({"type": "response_item", "payload": output}) + b"\n"


def swe_document(count: int, payload: str) -> Iterator[bytes]:
    steps = [{"action": f"grep p{n % 7}\n", "observation": payload} for n in range(count)]
    yield from (
        json.dumps({"environment": "e", "trajectory": steps}, indent=2).encode().splitlines(True)
    )


def openhands_document(count: int, payload: str) -> Iterator[bytes]:
    events: list[object] = []
    for n in range(0, count, 2):
        events.append(
            {"id": n, "source": "agent", "action": "run", "args": {"command": f"grep p{n % 7}"}}
        )
        events.append(
            {"id": n + 1, "source": "agent", "observation": "run", "cause": n, "content": payload}
        )
    yield from json.dumps(events, indent=2).encode().splitlines(True)


WRITERS: dict[str, tuple[Callable[[int, str], Iterator[bytes]], bool]] = {
    "acp": (acp_lines, False),
    "claude-code": (claude_lines, False),
    "codex": (codex_lines, False),
    "swe-agent": (swe_document, True),
    "openhands": (openhands_document, True),
}


def write(path: Path, lines: Iterator[bytes]) -> int:
    size = 0
    with path.open("wb") as out:
        for line in lines:
            out.write(line)
            size += len(line)
    return size


def replay_file(path: Path, fmt: str) -> FileSummary:
    """Read and replay ``path`` as ``fmt``, keeping only the summary, with the collector held
    off as ``repeat-guard replay`` holds it."""
    with path.open("rb") as stream, collector_paused():
        summary = None
        for outcome in replay(
            READERS[fmt].read(bounded_lines(stream), str(path)), GuardConfig(), file="f"
        ):
            summary = outcome
    assert isinstance(summary, FileSummary)
    return summary


def read_file(path: Path, fmt: str) -> None:
    """Read ``path`` as ``fmt`` without the replay, dropping the items."""
    with path.open("rb") as stream:
        deque(READERS[fmt].read(bounded_lines(stream), str(path)), 0)


def parse_file(path: Path, document: bool) -> None:
    with path.open("rb") as stream:
        if document:
            orjson.loads(stream.read())
        else:
            for line in stream:
                orjson.loads(line)


def best(work: Callable[..., object], *args: object, runs: int = 2) -> float:
    """The fastest of ``runs`` calls of ``work(*args)``, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def throughput(folder: Path) -> None:
    print("readers: reader + replay against orjson parsing the same file (target >= 0.5x)")
    for label, count, size in (
        ("200,000 lines of 235-515 B", SMALL_LINES, 240),
        ("40 lines of 1 MiB", LARGE_LINES, LARGE_BYTES),
    ):
        for fmt, (writer, document) in WRITERS.items():
            path = folder / f"{fmt}.data"
            megabytes = write(path, writer(count, "x" * size)) / 1e6
            summary = replay_file(path, fmt)
            reader = best(replay_file, path, fmt)
            alone = best(read_file, path, fmt)
            parse = best(parse_file, path, document)
            print(
                f"  {label:26} {fmt:12} {megabytes:7.1f} MB  {summary.tally.calls:7,} calls  "
                f"reader {megabytes / reader:7.1f} MB/s  orjson {megabytes / parse:7.1f} MB/s  "
                f"ratio {parse / reader:4.2f}x  (reader alone {megabytes / alone:7.1f} MB/s, "
                f"{parse / alone:4.2f}x)"
            )


_PEAK = (
    "status = Path('/proc/self/status').read_text()\n"
    "peak = next(l.split()[1] for l in status.splitlines() if l.startswith('VmHWM:'))\n"
    "print(peak, file=sys.__stderr__)\n"
)
_LIBRARY = "from bench.readers import replay_file\nreplay_file(Path(sys.argv[1]), 'acp')\n"
_COMMAND = (
    "import os\n"
    "from repeat_guard_cli import main\n"
    "sys.stdout = open(os.devnull, 'w')\n"
    "assert main(['replay', sys.argv[1]]) == 0\n"
)


def peak_rss_mb(path: Path, command: bool = False) -> float:
    """Peak resident memory (``VmHWM``) of a fresh process that replays ``path``, with the
    library or with the command's text report."""
    code = "import sys\nfrom pathlib import Path\n" + (_COMMAND if command else _LIBRARY) + _PEAK
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, check=True, text=True
    )
    return int(done.stderr.strip()) / 1024


def memory(folder: Path) -> None:
    small, large = folder / "10mb.jsonl", folder / "1gb.jsonl"
    payload = "x" * 200
    line_size = len(_acp_line("s0", 0, payload))
    write(small, looping_acp_lines(10_000_000 // line_size, payload, sessions=8))
    size = write(large, looping_acp_lines(1_000_000_000 // line_size, payload, sessions=8))
    reminders = replay_file(small, "acp").tally.reminders
    for label, command in (("library", False), ("command, text report", True)):
        low, high = peak_rss_mb(small, command), peak_rss_mb(large, command)
        print(
            f"memory ({label}): peak RSS replaying 10 MB ({reminders:,} reminders) {low:.0f} MB, "
            f"{size / 1e9:.2f} GB {high:.0f} MB: ratio {high / low:.2f}x (target <= 1.2x)"
        )
    large.unlink()


def sessions(folder: Path) -> None:
    calls = 200_000
    one, many = folder / "one.jsonl", folder / "many.jsonl"
    write(one, acp_lines(calls, "", sessions=1))
    write(many, acp_lines(calls, "", sessions=100_000))
    for label, work in (("reader + replay", replay_file), ("reader alone", read_file)):
        # Alternating rounds, the fastest of each side: a slow spell of the machine falls on
        # both files rather than on whichever ran during it.
        rounds = [
            (best(work, one, "acp", runs=1), best(work, many, "acp", runs=1)) for _ in range(3)
        ]
        single, spread = (min(times) for times in zip(*rounds, strict=True))
        print(
            f"sessions, {label}: {calls:,} calls in 1 session {single / calls * 1e6:.2f} us/call, "
            f"in 100,000 sessions {spread / calls * 1e6:.2f} us/call: ratio {spread / single:.2f}x"
        )


def main() -> None:
    """Print the reader figures."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        throughput(folder)
        sessions(folder)
        memory(folder)


if __name__ == "__main__":
    main()
