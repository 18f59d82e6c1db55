"""Summarise ``mutmut results --all true``: counts, the killed share, and every survivor.

Usage: ``python mutation/summary.py results.txt``. Exits 1 when fewer than 97% of the mutants
are killed (a timeout counts as detected, as mutmut's own score does, and is listed).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

TARGET = 0.97


def main(path: str) -> int:
    statuses: dict[str, str] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep:
            statuses[name] = status
    counts = Counter(statuses.values())
    total = len(statuses)
    detected = counts["killed"] + counts["timeout"]
    share = detected / total if total else 0.0
    print(", ".join(f"{status} {count}" for status, count in sorted(counts.items())))
    print(f"detected {detected} of {total} mutants: {share:.1%} (target {TARGET:.0%})")
    for name, status in sorted(statuses.items()):
        if status != "killed":
            print(f"  {status}: {name}")
    return 0 if share >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
