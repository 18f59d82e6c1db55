"""The core is sans-IO: importing it loads no adapter, no asyncio, no pluggy, no logging."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = [
    "asyncio",
    "pluggy",
    "logging",
    "socket",
    "subprocess",
    "threading",
    "repeat_guard_pluggy",
    "repeat_guard_agentloop",
    "repeat_guard_transcripts",
    "repeat_guard_acp_agent",
    "repeat_guard_cli",
]


def test_importing_the_core_loads_no_io_or_adapter_module() -> None:
    code = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "import repeat_guard\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, text=True
    ).stdout
    loaded = set(json.loads(output))
    assert "repeat_guard" in loaded
    assert "pyrsistent" in loaded
    assert [name for name in FORBIDDEN if name in loaded] == []
