"""What agents' shell tools write about how a command ended, and what they make new for every
call: one place for the hooks (a host's result event) and the transcript readers (its recorded
chat), which read the same text.

A module of its own, which ``import repeat_guard_hookcall`` does not load; it imports only
``re``, so a hook process and a reader pay for nothing else.

Gemini CLI 0.61.0's ``run_shell_command`` ends its output with the process ids of that run
(lines ``Background PIDs: 3841`` and ``Process Group PGID: 3839``), says ``Command moved to
background (PID: 3841)`` for a command sent to the background, and writes an ``Exit Code: K``
line only for a command that exited with a status other than 0. Its hook's ``AfterTool`` sees
that text in ``tool_response.llmContent`` (inside ``<untrusted_context>``), its chat in the
``functionResponse``'s ``output``.
"""

from __future__ import annotations

import re

__all__ = ["exit_failed", "output_failed", "responses_without_process_ids", "without_process_ids"]

_PROCESS_LINE = re.compile(
    r"^(?:Background PIDs: [0-9][0-9, ]*|Process Group PGID: [0-9]+)$\n?", re.MULTILINE
)
_BACKGROUND_PID = re.compile(r"\(PID: [0-9]+\)")
_EXIT_CODE = re.compile(r"^Exit Code: (-?[0-9]{1,9})$", re.MULTILINE)


def exit_failed(code: object) -> bool:
    """Whether a command's exit status says it failed: an integer other than 0, and other than
    -1, which the formats that write it use for a command still running or never started."""
    return isinstance(code, int) and not isinstance(code, bool) and code not in (0, -1)


def without_process_ids(text: str) -> str:
    """``text`` less the process ids a shell tool's output names: its ``Background PIDs:`` and
    ``Process Group PGID:`` lines left out, each ``(PID: N)`` written ``(PID: <n>)``. The
    output, ``Error:``, ``Exit Code:`` and ``Signal:`` stay."""
    return _BACKGROUND_PID.sub("(PID: <n>)", _PROCESS_LINE.sub("", text))


def responses_without_process_ids(response: object) -> object:
    """A tool's response object with ``without_process_ids`` applied to each of its strings
    (Gemini CLI's hook ``tool_response``, its chat's ``functionResponse.response``); any other
    shape is returned as it is."""
    if not isinstance(response, dict):
        return response
    return {
        key: without_process_ids(value) if isinstance(value, str) else value
        for key, value in response.items()
    }


def output_failed(text: str) -> bool:
    """Whether a shell tool's output says its command exited with a failing status: an ``Exit
    Code:`` line of its own whose code ``exit_failed``."""
    found = _EXIT_CODE.search(text)
    return found is not None and exit_failed(int(found[1]))
