"""JS plugin benchmark: one tool call through the pi extension, the client and the sidecar.

The pi extension's ``tool_call`` handler (the shipped build, ``repeat_guard_hooks/plugins``)
asks the real ``repeat-guard serve --state`` (one SQLite transaction per call) and waits for the
answer; the baseline is the host's own plugin call with no guard, a handler that returns at
once. Both run in one Node process, alternately, after a warm-up. Printed: median and p95 of
each in milliseconds, and what the guard adds (target: at most 1 ms median).
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from repeat_guard_hooks import PLUGIN_HOSTS
from repeat_guard_hooks.installer import plugin_path

RUNS = 2000
SCRIPT = Path(__file__).with_name("js_plugin.mjs")


def _p95(samples: list[float]) -> float:
    return sorted(samples)[max(0, round(0.95 * len(samples)) - 1)]


def main() -> None:
    """Run the comparison and print it (or why it cannot run)."""
    node = shutil.which("node")
    if node is None:
        print("js plugin: node is not on PATH; skipped")
        return
    plugins = str(Path(plugin_path(PLUGIN_HOSTS["pi"])).parent)
    executable = str(Path(sys.executable).parent / "repeat-guard")
    with tempfile.TemporaryDirectory() as directory:
        state = str(Path(directory) / "state.sqlite3")
        done = subprocess.run(
            [node, str(SCRIPT), plugins, executable, state, str(RUNS)],
            capture_output=True,
            text=True,
            check=True,
        )
    samples: dict[str, list[float]] = json.loads(done.stdout)
    guarded, bare = samples["guarded"], samples["bare"]
    added = statistics.median(guarded) - statistics.median(bare)
    print(f"js plugin (pi tool_call, {RUNS} calls each, alternating):")
    for name, values in (("guarded", guarded), ("no guard", bare)):
        median, p95 = statistics.median(values), _p95(values)
        print(f"  {name:9} median {median:.3f} ms  p95 {p95:.3f} ms")
    verdict = "within" if added <= 1.0 else "over"
    print(f"  added by the guard: {added:.3f} ms median ({verdict} the 1 ms target)")


if __name__ == "__main__":
    main()
