"""What agents' shell tools write about how a command ended, and what they make new for every
call: one place for the hook dialects (a host's result event) and the transcript readers (its
recorded session), which read the same text. Whether a call failed and what its result is
decide what the guard sees (a failure feeds ``retryWindow``; the result is compared under
``progress = "result"``). A module of its own, which ``import repeat_guard`` does not load; it
imports only ``re``.

Gemini CLI 0.61.0's ``run_shell_command`` ends its output with the process ids of that run
(lines ``Background PIDs: 3841`` and ``Process Group PGID: 3839``), says ``Command moved to
background (PID: 3841)`` for a command sent to the background, and writes an ``Exit Code: K``
line only for a command that exited with a status other than 0. Its hook's ``AfterTool`` sees
that text in ``tool_response.llmContent`` (inside ``<untrusted_context>``), its chat in the
``functionResponse``'s ``output``.

Qwen Code 0.24.4, a fork of Gemini CLI, ends its ``run_shell_command`` output with the same
``Process Group PGID: N`` line (N, the shell's process id when the command ran in a terminal),
and for a command it starts in the background writes ``Background shell started.``, ``id:
bg_<8 hex digits>``, ``pid: N`` and an ``output file:`` named after that id, all new for every
call: ``qwen_without_process_ids`` leaves out the ``pid:`` line too and writes the id
``bg_<id>``.

GitHub Copilot CLI (1.0.102) ends its ``bash`` tool's result with ``<shellId: N completed with
exit code K>``, N a new number for every command, and reports the call a success whatever K is
(``result_type: "success"`` to its hooks, ``success: true`` in its session events).
``copilot_shell_exit(text)`` returns the text with the shell's id dropped (``...<completed with
exit code K>``), so that the same output of the same command is the same result, and K;
``None`` for a text that does not end so.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for the annotation alone: at run time the module imports only re
    from collections.abc import Callable

__all__ = [
    "copilot_shell_exit",
    "exit_failed",
    "output_failed",
    "qwen_responses_without_process_ids",
    "qwen_without_process_ids",
    "responses_without_process_ids",
    "without_process_ids",
]

_PROCESS_LINE = re.compile(
    r"^(?:Background PIDs: [0-9][0-9, ]*|Process Group PGID: [0-9]+)$\n?", re.MULTILINE
)
_BACKGROUND_PID = re.compile(r"\(PID: [0-9]+\)")
# Qwen Code's background shell: its id (the core's hex rule misses it, "_" being a word
# character) and the line naming its process.
_QWEN_SHELL_ID = re.compile(r"\bbg_[0-9a-f]{8}\b")
_QWEN_PID_LINE = re.compile(r"^pid: [0-9]+$\n?", re.MULTILINE)
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


def qwen_without_process_ids(text: str) -> str:
    """``without_process_ids(text)``, less what Qwen Code writes anew when it starts a command
    in the background: its ``pid: N`` line left out, its shell id ``bg_<8 hex digits>``
    written ``bg_<id>``."""
    kept = _QWEN_SHELL_ID.sub("bg_<id>", without_process_ids(text))
    return _QWEN_PID_LINE.sub("", kept)


def _each_string(response: object, rewrite: Callable[[str], str]) -> object:
    if not isinstance(response, dict):
        return response
    return {
        key: rewrite(value) if isinstance(value, str) else value for key, value in response.items()
    }


def responses_without_process_ids(response: object) -> object:
    """A tool's response object with ``without_process_ids`` applied to each of its strings
    (Gemini CLI's hook ``tool_response``, its chat's ``functionResponse.response``); any other
    shape is returned as it is."""
    return _each_string(response, without_process_ids)


def qwen_responses_without_process_ids(response: object) -> object:
    """``responses_without_process_ids`` for Qwen Code: ``qwen_without_process_ids`` applied
    to each of the response object's strings; any other shape is returned as it is."""
    return _each_string(response, qwen_without_process_ids)


def output_failed(text: str) -> bool:
    """Whether a shell tool's output says its command exited with a failing status: an ``Exit
    Code:`` line of its own whose code ``exit_failed``."""
    found = _EXIT_CODE.search(text)
    return found is not None and exit_failed(int(found[1]))


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
