"""``python -m repeat_guard_acp_agent.record``: record a scripted run of the agent."""

import sys

from ._main import record_main

if __name__ == "__main__":
    sys.exit(record_main())
