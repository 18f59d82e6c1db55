"""The SDK's tracing would try to export every run's trace: these runs are offline."""

from __future__ import annotations

from agents import set_tracing_disabled

set_tracing_disabled(True)
