"""CrewAI's import sets attributes its lazy ``crewai.rag`` module refuses, which Python reports
as an ``ImportWarning`` (an error under this suite's ``filterwarnings``); it is CrewAI's own
import and harmless, so it is imported here once with that warning silenced. Its telemetry is
off: these runs are offline."""

from __future__ import annotations

import os
import warnings

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "Cannot set an attribute on 'crewai.rag'", ImportWarning)
    import crewai  # noqa: F401
