"""The Codex reader: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` to guard events.

Each line is a record ``{"timestamp", "type", "payload"}``; older rollouts hold the payloads
unwrapped. ``response_item`` payloads carry the calls: a ``function_call`` (``name``,
``arguments`` as a JSON string, ``call_id``), a ``custom_tool_call`` (``input`` as text, such as
``apply_patch``'s patch) or a ``local_shell_call`` (``action``); a call counts at the line of
its ``function_call_output`` / ``custom_tool_call_output``, whose ``output`` is the call's
result, less the lines of its header that Codex writes afresh for every call (``Chunk ID``,
``Wall time``: see ``_comparable_output``). An output that says the user rejected it (``exec
command rejected by user``, ``patch rejected by user``) is a denial; one whose header says the
command exited with a failing status (``Process exited with code 2``, ``Exit code: 1``) failed.

Tokens: a model step's output and input tokens go with the step's first call, as the audit
charges them (``input_tokens``, which in OpenAI's usage already include the cached ones).
Newer rollouts write a ``token_usage_record`` (``usage.output_tokens``) right after the
step's calls; older ones only an ``event_msg`` ``token_count`` (``info.last_token_usage``),
which may come after the calls' outputs, when they have already counted: those steps' tokens
are not known at the call. Once a file has shown a ``token_usage_record``, its ``token_count``
events are ignored, so no step is charged twice.

A prompt is the user's message: an ``event_msg`` ``user_message``, an ``item_completed``
``UserMessage``, or a ``user`` ``message`` that is not context Codex injects itself
(``<environment_context>``, ``<user_instructions>``, ``# AGENTS.md instructions``). The
session is the ``session_meta`` id (the file's name until one is seen); it is one agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._calls import OpenCall, OpenCalls
from ._items import Diagnostic, Item, Located, Location, SessionSeen
from ._lines import scan_json
from ._reading import exit_failed, file_session, object_items, string
from ._registry import head_objects

__all__ = ["DENIAL_OUTPUTS", "INJECTED_PREFIXES", "CodexReader"]

DENIAL_OUTPUTS: Final = ("exec command rejected by user", "patch rejected by user")
"""How Codex words a call the user declined, as the call's output (its prefix)."""

INJECTED_PREFIXES: Final = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
)
"""Starts of ``user`` messages that Codex writes itself: context, not a prompt."""

_VOLATILE_HEADER_LINES: Final = ("Chunk ID: ", "Wall time: ")
"""Starts of the lines of an output's header that differ on every call, whatever the tool did."""

_HEADER_CHARS = 400
_HEADER_END = "\nOutput:\n"
_EXIT_LINE = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d{1,9})$", re.MULTILINE)

_RECORD_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context"})
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


def _exited_failing(output: object) -> bool:
    """Whether ``output``'s header (its first ``_HEADER_CHARS`` characters, up to ``Output:``)
    says the command exited with a failing status."""
    if type(output) is not str:
        return False
    head = output[:_HEADER_CHARS]
    end = head.find(_HEADER_END)
    exited = _EXIT_LINE.search(head if end < 0 else head[:end])
    return exited is not None and exit_failed(int(exited[1]))


def _comparable_output(output: object) -> object:
    """``output`` as the call's result: without the header lines in ``_VOLATILE_HEADER_LINES``.

    Codex opens a command's output with a header (``Chunk ID: f663f8``, ``Wall time: 0.0000
    seconds``, ``Process exited with code 0``, ..., ``Output:``) and its ``sleep`` with a
    ``Wall time`` line. The chunk id and the wall time differ on every call, so an output that
    kept them would be progress every time under ``progress = "result"``; the exit status and
    what the command printed stay. Only the header is looked at: the lines before ``Output:``
    within its first ``_HEADER_CHARS`` characters, or without that line the leading ones."""
    if type(output) is not str or "Wall time: " not in output[:_HEADER_CHARS]:
        return output
    end = output.find(_HEADER_END, 0, _HEADER_CHARS)
    if end >= 0:
        header = output[:end].split("\n")
        kept = [line for line in header if not line.startswith(_VOLATILE_HEADER_LINES)]
        return "\n".join(kept) + output[end:]
    while output.startswith(_VOLATILE_HEADER_LINES):
        output = output.partition("\n")[2]
    return output


def _text(value: object) -> str:
    """The text of an output or a message: a string, ``{"content": ...}``, or the text of
    a list of content parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _text(value.get("content"))
    if isinstance(value, list):
        return "".join(
            part["text"]
            for part in value
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _arguments(payload: Mapping[str, object]) -> object:
    """A call's arguments: parsed JSON where Codex stores a string, else as stored."""
    kind = payload.get("type")
    if kind == "local_shell_call":
        return payload.get("action")
    raw = payload.get("arguments") if kind == "function_call" else payload.get("input")
    if kind == "function_call" and isinstance(raw, str):
        return _parsed(raw)
    return raw


def _parsed(text: str) -> object:
    """``json.loads(text)``, or ``text`` itself when it is not JSON (malformed argument
    JSON is itself a comparable value).

    ``scan_json`` first: a text it reads whole from its first character has no byte-order
    mark, no whitespace around it and no data after it, so ``json.loads`` would give the same
    value after checking for each (a quarter of the time); any other text goes to
    ``json.loads``."""
    try:
        value, end = scan_json(text, 0)
        if end == len(text):
            return value
    except (StopIteration, ValueError, RecursionError):
        pass
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


class _CodexFile:
    """The state of one file being read.

    Each record's items are collected in one list rather than yielded through a generator per
    layer (as in the Claude Code reader), and a payload's handler is found in one dict."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.line = 0
        self.session = file_session(file)
        self.seen = False
        self.project: str | None = None
        self.turn: str | None = None
        self.timestamp: str | None = None
        self.calls: OpenCalls[str] = OpenCalls()
        self.step: str | None = None  # the first call since the last token record or prompt
        self.usage_records = False

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        return chain(object_items(lines, self.file, self._record), self.calls.drop_all())

    def _where(self) -> Location:
        return Location(self.file, self.line, self.session)

    def _record(self, line: int, record: Mapping[str, object]) -> list[Item]:
        self.line = line
        self.timestamp = string(record, "timestamp")
        kind = record.get("type")
        payload = record.get("payload")
        if not isinstance(payload, dict):
            payload = record  # an older rollout: the item itself
        if kind == "session_meta":
            session = string(payload, "id") or string(payload, "session_id")
            self.session = session or self.session
            self.project = string(payload, "cwd") or self.project
        elif kind == "turn_context":
            self.turn = string(payload, "turn_id") or self.turn
            self.project = string(payload, "cwd") or self.project
        items: list[Item] = []
        if not self.seen:
            self.seen = True
            items.append(SessionSeen(self._where()))
        if kind == "token_usage_record":
            self._usage_record(payload)
            return items
        payload_kind = payload.get("type")
        handler = _HANDLERS.get(payload_kind) if isinstance(payload_kind, str) else None
        if handler is not None:
            handler(self, items, payload)
        return items

    def _usage_record(self, payload: Mapping[str, object]) -> None:
        self.usage_records = True
        self._charge(payload.get("usage"))

    def _token_count(self, items: list[Item], payload: Mapping[str, object]) -> None:
        if self.usage_records:
            return
        info = payload.get("info")
        self._charge(info.get("last_token_usage") if isinstance(info, dict) else None)

    def _charge(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        # OpenAI's input_tokens already include the cached ones (cached_input_tokens).
        tokens, input_tokens = usage.get("output_tokens"), usage.get("input_tokens")
        if type(tokens) is not int:
            return
        if self.step is not None:
            self.calls.charge(
                self.step, tokens, input_tokens if type(input_tokens) is int else None
            )
        self.step = None

    def _item_completed(self, items: list[Item], payload: Mapping[str, object]) -> None:
        item = payload.get("item")
        if isinstance(item, dict) and item.get("type") == "UserMessage":
            self._prompt(items, payload)

    def _message(self, items: list[Item], payload: Mapping[str, object]) -> None:
        if payload.get("role") == "user" and not _text(payload.get("content")).startswith(
            INJECTED_PREFIXES
        ):
            self._prompt(items, payload)

    def _prompt(self, items: list[Item], payload: Mapping[str, object]) -> None:
        self.step = None
        items += self.calls.drop_agent(self.session)
        event = PromptSubmitted(self.session)
        items.append(Located(self._where(), event, self.turn, None, self.timestamp, self.project))

    def _aborted(self, items: list[Item], payload: Mapping[str, object]) -> None:
        items += self.calls.drop_agent(self.session)

    def _call(self, items: list[Item], payload: Mapping[str, object]) -> None:
        ident = string(payload, "call_id") or string(payload, "id")
        name = string(payload, "name") or (
            "local_shell" if payload.get("type") == "local_shell_call" else None
        )
        if ident is None or name is None:
            items.append(
                Diagnostic(self.file, self.line, "a call without a string call_id and name")
            )
            return
        call = OpenCall(
            self._where(),
            self.session,
            name,
            _arguments(payload),
            turn=self.turn,
            timestamp=self.timestamp,
            project=self.project,
        )
        if self.step is None:
            self.step = ident
        items += self.calls.add(ident, call)

    def _output(self, items: list[Item], payload: Mapping[str, object]) -> None:
        ident = string(payload, "call_id")
        if ident is None:
            items.append(Diagnostic(self.file, self.line, "a call output without a string call_id"))
            return
        where, unknown = (self.file, self.line), ("output for call", ident)
        call = self.calls.finish_or_note(ident, items, where, unknown)
        if call is None:
            return
        output = payload.get("output")
        denied = _text(output).startswith(DENIAL_OUTPUTS)
        result = _comparable_output(output)
        failed = _exited_failing(output)
        event = ToolCallFinished(call.agent, call.tool, call.arguments, denied, result, failed)
        items.append(
            Located(
                self._where(),
                event,
                call.turn,
                call.tokens,
                self.timestamp,
                call.project,
                call.input_tokens,
            )
        )


_Handler = Callable[[_CodexFile, list[Item], Mapping[str, object]], None]
# A payload's type to what it does; the other types (reasoning, the agent's messages, ...)
# change nothing.
_HANDLERS: Mapping[str, _Handler] = {
    **dict.fromkeys(_CALLS, _CodexFile._call),
    **dict.fromkeys(_OUTPUTS, _CodexFile._output),
    "user_message": _CodexFile._prompt,
    "item_completed": _CodexFile._item_completed,
    "message": _CodexFile._message,
    "turn_aborted": _CodexFile._aborted,
    "token_count": _CodexFile._token_count,
}


def _is_rollout_record(record: Mapping[str, object]) -> bool:
    kind = record.get("type")
    return isinstance(kind, str) and kind in _RECORD_TYPES and "payload" in record


class CodexReader:
    """Reads Codex CLI rollouts."""

    name: Final = "codex"
    description: Final = "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a Codex rollout (its first line may be cut short: a
        ``session_meta`` line carries the whole base instructions)."""
        if any(_is_rollout_record(record) for record in head_objects(head)):
            return True
        opening = head.split(b"\n", 1)[0][:200]
        return b'"type":"session_meta","payload":{' in opening

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one rollout's lines; never raises for bad input."""
        return _CodexFile(file).read(lines)
