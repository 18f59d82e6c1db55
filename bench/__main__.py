"""Run every benchmark: ``make bench`` (``python -m bench``). Each prints ratios from one run."""

from __future__ import annotations

from bench.core import main as core_main
from bench.hook import main as hook_main
from bench.replay import main as replay_main


def main() -> None:
    """Run the core benchmark, the transcript replay benchmark, then the hook benchmark."""
    core_main()
    replay_main()
    hook_main()


if __name__ == "__main__":
    main()
