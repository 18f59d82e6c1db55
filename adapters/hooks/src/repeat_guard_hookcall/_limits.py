"""What one hook event may cost. Imported by the hook client, the path every tool call takes
before it knows whether the core is needed, so it imports nothing."""

from __future__ import annotations

__all__ = ["INPUT_LIMIT"]

INPUT_LIMIT = 16 * 1024 * 1024
"""The most bytes one hook event may hold (16 MiB). A larger one (a runaway tool call's input or
result) is not read past this: the hook stands aside for it and logs why. Parsing JSON takes
several times its size in memory (a 300 MB ``tool_input`` had taken 1.2 GB), which a hook run
on every tool call must not risk."""
