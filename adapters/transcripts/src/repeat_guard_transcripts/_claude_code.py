"""The Claude Code reader: ``~/.claude/projects/<project>/<session>.jsonl`` to guard events.

Each line is one record. An ``assistant`` record's ``message.content`` holds ``tool_use``
blocks (``id``, ``name``, ``input``); a ``user`` record answers them with ``tool_result``
blocks (``tool_use_id``), and a call counts at the line of its result, with the block's
``content`` (what the model was shown) as the call's result. A ``user`` record whose
content is text (not tool results, not ``isMeta``, not a compaction summary) is a prompt.

Agents: the session's main agent is ``<sessionId>``; a subagent (``isSidechain`` with an
``agentId``, in ``<session>/subagents/agent-<id>.jsonl``) is ``<sessionId>/<agentId>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, Final, cast

import msgspec

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._calls import OpenCall, OpenCalls
from ._items import Diagnostic, Item, Located, Location, SessionSeen
from ._lines import typed_lines
from ._registry import head_objects

__all__ = ["DENIAL_MARKERS", "ClaudeCodeReader"]

DENIAL_MARKERS: Final = (
    "The user doesn't want to proceed with this tool use",
    "User rejected tool use",
    "Permission to use",
)
"""Texts of an error ``tool_result`` that mean the call was refused, not that it failed."""

# An ``OpenCall`` per call without the named tuple's ``__new__`` in between.
_open_call: Callable[[type[OpenCall], tuple[object, ...]], OpenCall] = tuple.__new__

_RECORD_TYPES = frozenset({"user", "assistant", "system", "summary", "queue-operation"})


def _text(value: object) -> str:
    """The text in a tool result's content: a string, or the text blocks of a list."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            block["text"]
            for block in value
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    return ""


# What the reader reads of a line, as msgspec decodes it: the fields named here (each of any JSON
# type, as the reader checks each), nothing of the others. A tool result's ``content`` and a
# record's ``toolUseResult`` (most of a session's bytes) stay raw bytes until a denial or a
# result that is wanted asks for them. No instance is tracked by the garbage collector (``gc``):
# none can be part of a cycle, and a record is built for every line.
_RAW_NULL: Final = msgspec.Raw(b"null")


class _Block(msgspec.Struct, gc=False):
    type: Any = None
    id: Any = None
    name: Any = None
    input: Any = None
    tool_use_id: Any = None
    is_error: Any = None
    content: msgspec.Raw = _RAW_NULL


class _Usage(msgspec.Struct, gc=False):
    input_tokens: Any = None
    output_tokens: Any = None
    cache_creation_input_tokens: Any = None
    cache_read_input_tokens: Any = None


class _Message(msgspec.Struct, gc=False):
    id: Any = None
    content: list[_Block | None] | str | None = None
    usage: _Usage | None = None


class _Record(msgspec.Struct, gc=False):
    type: Any = None
    session: Any = msgspec.field(default=None, name="sessionId")
    sidechain: Any = msgspec.field(default=None, name="isSidechain")
    agent: Any = msgspec.field(default=None, name="agentId")
    turn: Any = msgspec.field(default=None, name="promptId")
    timestamp: Any = None
    cwd: Any = None
    meta: Any = msgspec.field(default=None, name="isMeta")
    summary: Any = msgspec.field(default=None, name="isCompactSummary")
    message: _Message | None = None
    tool_result: msgspec.Raw = msgspec.field(default=_RAW_NULL, name="toolUseResult")


_decode_record = msgspec.json.Decoder(_Record).decode
_decode_raw = msgspec.json.Decoder().decode


def _value(held: object) -> object:
    """A raw field's value: decoded from its bytes, or the value itself where a line the typed
    decoder refused was decoded whole (``_convert``)."""
    return _decode_raw(held) if type(held) is msgspec.Raw else held


def _raw(value: object) -> msgspec.Raw:
    # A line decoded whole keeps its values in the raw fields; ``_value`` tells them apart.
    return cast(msgspec.Raw, value)


def _convert(value: object) -> _Record | str:
    """The record of a line the typed decoder refused but the standard library took: what the
    reader reads of it the same way (a field of another type than declared reads as absent,
    as the reader would read it)."""
    if not isinstance(value, dict):
        return "expected a JSON object"
    message = value.get("message")
    return _Record(
        value.get("type"),
        value.get("sessionId"),
        value.get("isSidechain"),
        value.get("agentId"),
        value.get("promptId"),
        value.get("timestamp"),
        value.get("cwd"),
        value.get("isMeta"),
        value.get("isCompactSummary"),
        _convert_message(message) if isinstance(message, dict) else None,
        _raw(value.get("toolUseResult")),
    )


def _convert_message(message: dict[str, object]) -> _Message:
    content, usage = message.get("content"), message.get("usage")
    blocks = (
        [_convert_block(block) if isinstance(block, dict) else None for block in content]
        if isinstance(content, list)
        else None
    )
    return _Message(
        message.get("id"),
        blocks,
        _Usage(*(usage.get(key) for key in _USAGE_KEYS)) if isinstance(usage, dict) else None,
    )


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def _convert_block(block: dict[str, object]) -> _Block:
    get = block.get
    return _Block(
        get("type"),
        get("id"),
        get("name"),
        get("input"),
        get("tool_use_id"),
        get("is_error"),
        _raw(get("content")),
    )


def _is_denial(block: _Block, record: _Record) -> bool:
    """Whether an error result (``is_error``, checked by the caller) says it was refused."""
    said = _text(_value(block.content)) + " " + _text(_value(record.tool_result))
    return any(marker in said for marker in DENIAL_MARKERS)


def _input_tokens(usage: _Usage) -> int | None:
    """A response's input tokens: the new ones and those written to and read from the cache
    (the API counts them apart); ``None`` when none of the three is an integer."""
    total = None
    counts = (usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens)
    for count in counts:
        if type(count) is int:
            total = count if total is None else total + count
    return total


def _text_or_none(value: object) -> str | None:
    return value if type(value) is str else None


class _ClaudeFile:
    """The state of one file being read.

    Each record's items are collected in a list rather than yielded through a generator per
    layer: a line of a Claude Code transcript is small, and a generator per layer per line
    cost more than parsing the line."""

    def __init__(self, file: str, results: bool = True) -> None:
        self.file = file
        self.results = results
        self.line = 0
        self.sessions: set[str] = set()
        # By session and id: a session copied into another (the same ids) counts in each.
        self.calls: OpenCalls[tuple[str, str]] = OpenCalls()
        # Per agent, the id of the last assistant message whose tokens a call was charged
        # with: Claude Code writes each block of a message on a line of its own, every line
        # with the message's whole usage, so parallel calls would otherwise charge it again.
        self.charged: dict[str, str] = {}

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        decoded = typed_lines(lines, self.file, _decode_record, _convert)
        return chain(chain.from_iterable(map(self._record, decoded)), self.calls.drop_all())

    def _record(self, decoded: tuple[int, _Record] | Diagnostic) -> Sequence[Item]:
        """The items of one line."""
        if isinstance(decoded, Diagnostic):
            return (decoded,)
        line, record = decoded
        self.line = line
        session = record.session
        if type(session) is not str:
            return []
        items: list[Item] = []
        if session not in self.sessions:
            self.sessions.add(session)
            items.append(SessionSeen(Location(self.file, self.line, session)))
        message = record.message
        if message is not None:
            kind = record.type
            content = message.content
            if kind == "assistant" and type(content) is list:
                self._assistant(items, record, session, message, content)
            elif kind == "user":
                self._user(items, record, session, content)
        return items

    def _agent(self, record: _Record, session: str) -> str:
        if record.sidechain is True:
            return f"{session}/{_text_or_none(record.agent) or 'sidechain'}"
        return session

    def _assistant(
        self,
        items: list[Item],
        record: _Record,
        session: str,
        message: _Message,
        content: list[_Block | None],
    ) -> None:
        # Most assistant lines hold a thinking or text block and no call: nothing else of the
        # record is read for them.
        blocks = [block for block in content if block is not None and block.type == "tool_use"]
        if not blocks:
            return
        usage = message.usage
        if usage is not None:
            tokens = usage.output_tokens
            tokens = tokens if type(tokens) is int else None
            input_tokens = _input_tokens(usage)
        else:
            tokens = input_tokens = None
        where = Location(self.file, self.line, session)
        agent = self._agent(record, session)
        message_id = message.id
        if type(message_id) is not str:
            message_id = None
        elif self.charged.get(agent) == message_id:
            tokens = input_tokens = None
        turn = _text_or_none(record.turn)
        timestamp = _text_or_none(record.timestamp)
        project = _text_or_none(record.cwd)
        for block in blocks:
            ident, name = block.id, block.name
            if type(ident) is not str or type(name) is not str:
                items.append(
                    Diagnostic(self.file, self.line, "tool_use without a string id and name")
                )
                continue
            call = _open_call(
                OpenCall,
                (where, agent, name, block.input, turn, tokens, timestamp, project, input_tokens),
            )
            if message_id is not None and (tokens, input_tokens) != (None, None):
                self.charged[agent] = message_id
            tokens = input_tokens = None  # the step's tokens go with its first call
            items += self.calls.add((session, ident), call)

    def _user(self, items: list[Item], record: _Record, session: str, content: object) -> None:
        results = (
            [b for b in content if b is not None and b.type == "tool_result"]
            if type(content) is list
            else []
        )
        if results:
            for block in results:
                self._result(items, record, session, block)
        elif not (record.meta is True or record.summary is True):
            agent = self._agent(record, session)
            items += self.calls.drop_agent(agent)
            items.append(
                Located(
                    Location(self.file, self.line, session),
                    PromptSubmitted(agent),
                    turn=_text_or_none(record.turn),
                    timestamp=_text_or_none(record.timestamp),
                    project=_text_or_none(record.cwd),
                )
            )

    def _result(self, items: list[Item], record: _Record, session: str, block: _Block) -> None:
        ident = block.tool_use_id
        if type(ident) is not str:
            items.append(
                Diagnostic(self.file, self.line, "tool_result without a string tool_use_id")
            )
            return
        where, unknown = (self.file, self.line), ("tool_result for tool_use", ident)
        call = self.calls.finish_or_note((session, ident), items, where, unknown)
        if call is None:
            return
        _, agent, tool, arguments, turn, tokens, called_at, project, input_tokens = call
        is_error = block.is_error is True
        denied = is_error and _is_denial(block, record)
        # The call counts when its result comes, so it is dated by the result's line, or by
        # its own line when the result's has no timestamp.
        timestamp = record.timestamp
        result = _value(block.content) if self.results else None
        items.append(
            Located(
                Location(self.file, self.line, session),
                ToolCallFinished(agent, tool, arguments, denied, result, is_error and not denied),
                turn,
                tokens,
                timestamp if type(timestamp) is str else called_at,
                project,
                input_tokens,
            )
        )


def _is_record_type(value: object) -> bool:
    return isinstance(value, str) and value in _RECORD_TYPES


class ClaudeCodeReader:
    """Reads Claude Code session transcripts (and their subagents' files)."""

    name: Final = "claude-code"
    description: Final = "~/.claude/projects/<project>/<session>.jsonl, subagents/agent-*.jsonl"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a Claude Code transcript."""
        return any(
            isinstance(record.get("sessionId"), str)
            and ("parentUuid" in record or _is_record_type(record.get("type")))
            for record in head_objects(head)
        )

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one transcript's lines; never raises for bad input."""
        return _ClaudeFile(file).read(lines)

    def read_without_results(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """``read``, every call's result left out (``None``): a tool's output is not decoded
        unless it is an error (which may say the call was refused)."""
        return _ClaudeFile(file, results=False).read(lines)
