"""Run every benchmark: ``make bench`` (``python -m bench``). Each prints ratios from one run."""

from __future__ import annotations

from bench.core import main as core_main
from bench.replay import main as replay_main


def main() -> None:
    """Run the core benchmark, then the transcript replay benchmark."""
    core_main()
    replay_main()


if __name__ == "__main__":
    main()
