"""repeat-guard for recorded agent transcripts: one reader per format, one replay for all.

A reader turns a file's lines into located guard events and diagnostics; ``replay`` runs them
through the core and yields where the guard fires, then the file's counts::

    from repeat_guard import GuardConfig
    from repeat_guard_transcripts import READERS, FileSummary, Fired, replay

    lines = [
        b'{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", '
        b'"update": {"sessionUpdate": "tool_call", "toolCallId": "t%d", "title": "grep", '
        b'"status": "completed", "rawInput": {"pattern": "x"}}}}\\n' % n
        for n in range(3)
    ]
    items = READERS["acp"].read(lines, "example.jsonl")
    *fired, summary = replay(items, GuardConfig(), file="example.jsonl")
    assert [f.reminder.summary for f in fired if isinstance(f, Fired)] == ["grep × 3"]
"""

from collections.abc import Mapping

from ._acp import AcpReader, reminder_notification, tool_name
from ._annotate import annotate
from ._calls import DONE_MARKS, OPEN_CALLS
from ._claude_code import ClaudeCodeReader
from ._cline import ClineReader
from ._codex import CodexReader
from ._collector import collector_paused
from ._compressed import compressing, compression_for
from ._copilot_cli import CopilotCliReader
from ._document import MAX_DOCUMENT_BYTES
from ._files import (
    FIFO_WAIT_SECONDS,
    Input,
    PassedOver,
    Refused,
    Sniffed,
    Unlisted,
    discover,
    open_input,
    open_regular,
    open_transcript,
    sniff_format,
    sniff_stream,
    walk,
    with_head,
)
from ._gemini_cli import GeminiCliReader
from ._goose import GooseReader
from ._items import (
    Diagnostic,
    Item,
    Located,
    Location,
    Recorded,
    SessionSeen,
    Severity,
    Unfinished,
)
from ._lines import MAX_LINE_BYTES, LineFault, bounded_lines, json_lines
from ._mini_swe_agent import MiniSweAgentReader
from ._opencode import OpenCodeReader
from ._openhands import OpenHandsReader
from ._openhands_folder import OpenHandsEventsReader
from ._otel import OtelGenAiReader
from ._pi import PiReader
from ._qwen_code import QwenCodeReader
from ._registry import (
    HEAD_BYTES,
    NO_CALL,
    Annotating,
    FolderReading,
    PathReading,
    Reader,
    ResultsOptional,
    is_no_call_note,
    no_call_note,
    places,
    read_items,
    readers,
    register,
    sniff_head,
)
from ._replay import FileSummary, Fired, Outcome, SessionSummary, Step, Stepped, replay, steps
from ._swe_agent import SweAgentReader
from ._tallies import CHUNK_STEPS, SessionTallies
from ._text import counted, printable

# Sniffing tries the readers in this order: a new format is its module and one line here,
# with the places its agent keeps its transcripts (``audit`` with no path looks in them).
register(AcpReader())
# Before Claude Code's: Qwen Code's records have Claude Code's sessionId and parentUuid too.
register(QwenCodeReader(), "~/.qwen/projects")
register(ClaudeCodeReader(), "~/.claude/projects")
register(CodexReader(), "~/.codex/sessions")
register(OpenHandsReader())
register(SweAgentReader())
register(MiniSweAgentReader())
register(GeminiCliReader(), "~/.gemini/tmp")
register(CopilotCliReader(), "~/.copilot/session-state")
register(PiReader(), "~/.pi/agent/sessions")
register(ClineReader(), "~/.cline/data/sessions")
register(OpenCodeReader(), "~/.local/share/opencode/opencode.db")
register(GooseReader(), "~/.local/share/goose/sessions/sessions.db")
register(OpenHandsEventsReader(), "~/.openhands/conversations")
register(OtelGenAiReader())

READERS: Mapping[str, Reader] = readers()
"""Every reader by format name, in the order sniffing tries them."""

__all__ = [
    "CHUNK_STEPS",
    "DONE_MARKS",
    "FIFO_WAIT_SECONDS",
    "HEAD_BYTES",
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "NO_CALL",
    "OPEN_CALLS",
    "READERS",
    "AcpReader",
    "Annotating",
    "ClaudeCodeReader",
    "ClineReader",
    "CodexReader",
    "CopilotCliReader",
    "Diagnostic",
    "FileSummary",
    "Fired",
    "FolderReading",
    "GeminiCliReader",
    "GooseReader",
    "Input",
    "Item",
    "LineFault",
    "Located",
    "Location",
    "MiniSweAgentReader",
    "OpenCodeReader",
    "OpenHandsEventsReader",
    "OpenHandsReader",
    "OtelGenAiReader",
    "Outcome",
    "PassedOver",
    "PathReading",
    "PiReader",
    "QwenCodeReader",
    "Reader",
    "Recorded",
    "Refused",
    "ResultsOptional",
    "SessionSeen",
    "SessionSummary",
    "SessionTallies",
    "Severity",
    "Sniffed",
    "Step",
    "Stepped",
    "SweAgentReader",
    "Unfinished",
    "Unlisted",
    "annotate",
    "bounded_lines",
    "collector_paused",
    "compressing",
    "compression_for",
    "counted",
    "discover",
    "is_no_call_note",
    "json_lines",
    "no_call_note",
    "open_input",
    "open_regular",
    "open_transcript",
    "places",
    "printable",
    "read_items",
    "reminder_notification",
    "replay",
    "sniff_format",
    "sniff_head",
    "sniff_stream",
    "steps",
    "tool_name",
    "walk",
    "with_head",
]
