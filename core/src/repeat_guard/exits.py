"""A shell command's exit status as a host writes it into the text of a tool's result.

Some hosts say that a command failed only in the text they give the model: their own
success flag stays true. Each host's hook and transcript adapters read the same text, so the
shape is read here, once: whether the call failed and what its result is decide what the
guard sees (a failure feeds ``retryWindow``; the result is compared under
``progress = "result"``).

``copilot_shell_exit(text)``: GitHub Copilot CLI (1.0.102) ends its ``bash`` tool's result
with ``<shellId: N completed with exit code K>``, N a new number for every command, and
reports the call a success whatever K is (``result_type: "success"`` to its hooks,
``success: true`` in its session events). It returns the text with the shell's id dropped
(``...<completed with exit code K>``), so that the same output of the same command is the
same result, and K; ``None`` for a text that does not end so.
"""

from __future__ import annotations

import re

__all__ = ["copilot_shell_exit"]

# "<shellId: N completed with exit code K>" at the end of the text, N a new number for every
# command.
_COPILOT_SHELL_END = re.compile(r"<shellId: \d+ (completed with exit code (-?\d{1,9}))>\s*\Z")


def copilot_shell_exit(text: str) -> tuple[str, int] | None:
    """Copilot CLI's bash result ``text`` without its shell id, and the command's exit code;
    ``None`` when ``text`` does not end with ``<shellId: N completed with exit code K>``."""
    ended = _COPILOT_SHELL_END.search(text)
    if ended is None:
        return None
    return f"{text[: ended.start()]}<{ended[1]}>", int(ended[2])
