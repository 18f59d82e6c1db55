"""Run every benchmark: ``make bench`` (``python -m bench``). Each prints ratios from one run."""

from __future__ import annotations

from bench.audit import main as audit_main
from bench.ccusage import main as ccusage_main
from bench.core import main as core_main
from bench.daemon import main as daemon_main
from bench.fingerprint import main as fingerprint_main
from bench.hook import main as hook_main
from bench.js_plugin import main as js_plugin_main
from bench.readers import main as readers_main
from bench.replay import main as replay_main


def main() -> None:
    """Run the core, transcript replay, reader, hook, fingerprint, JS plugin, resident guard
    and audit benchmarks, and the audit against ccusage."""
    core_main()
    replay_main()
    readers_main()
    hook_main()
    fingerprint_main()
    js_plugin_main()
    daemon_main()
    audit_main()
    ccusage_main()


if __name__ == "__main__":
    main()
