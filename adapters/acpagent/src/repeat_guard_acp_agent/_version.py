"""The package's version, read once from its installed metadata (``pyproject.toml``)."""

from __future__ import annotations

from importlib import metadata
from typing import Final

__all__ = ["VERSION"]

VERSION: Final = metadata.version("repeat-guard-acp-agent")
"""What the agent and the recorder report as their ``version`` in ``initialize``."""
