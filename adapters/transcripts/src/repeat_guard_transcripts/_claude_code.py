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

from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._calls import OpenCall, OpenCalls
from ._items import Diagnostic, Item, Located, Location, SessionSeen
from ._reading import object_items, string
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


def _is_denial(block: Mapping[str, object], record: Mapping[str, object]) -> bool:
    """Whether an error result (``is_error``, checked by the caller) says it was refused."""
    said = _text(block.get("content")) + " " + _text(record.get("toolUseResult"))
    return any(marker in said for marker in DENIAL_MARKERS)


_INPUT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _input_tokens(usage: Mapping[str, object]) -> int | None:
    """A response's input tokens: the new ones and those written to and read from the cache
    (the API counts them apart); ``None`` when none of the three is an integer."""
    counts = [usage.get(key) for key in _INPUT_KEYS]
    known = [count for count in counts if type(count) is int]
    return sum(known) if known else None


class _ClaudeFile:
    """The state of one file being read.

    Each record's items are collected in a list rather than yielded through a generator per
    layer: a line of a Claude Code transcript is small, and a generator per layer per line
    cost more than parsing the line."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.line = 0
        self.sessions: set[str] = set()
        # By session and id: a session copied into another (the same ids) counts in each.
        self.calls: OpenCalls[tuple[str, str]] = OpenCalls()
        # Per agent, the id of the last assistant message whose tokens a call was charged
        # with: Claude Code writes each block of a message on a line of its own, every line
        # with the message's whole usage, so parallel calls would otherwise charge it again.
        self.charged: dict[str, str] = {}

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        return chain(object_items(lines, self.file, self._record), self.calls.drop_all())

    def _record(self, line: int, record: Mapping[str, object]) -> list[Item]:
        self.line = line
        session = record.get("sessionId")
        if not isinstance(session, str):
            return []
        items: list[Item] = []
        if session not in self.sessions:
            self.sessions.add(session)
            items.append(SessionSeen(Location(self.file, self.line, session)))
        message = record.get("message")
        if isinstance(message, dict):
            kind = record.get("type")
            content = message.get("content")
            if kind == "assistant" and isinstance(content, list):
                self._assistant(items, record, session, message, content)
            elif kind == "user":
                self._user(items, record, session, content)
        return items

    def _agent(self, record: Mapping[str, object], session: str) -> str:
        if record.get("isSidechain") is True:
            return f"{session}/{string(record, 'agentId') or 'sidechain'}"
        return session

    def _assistant(
        self,
        items: list[Item],
        record: Mapping[str, object],
        session: str,
        message: Mapping[str, object],
        content: list[object],
    ) -> None:
        usage = message.get("usage")
        if isinstance(usage, dict):
            tokens = usage.get("output_tokens")
            # Values come from JSON, so ``type(...) is`` is ``isinstance`` without the bool
            # that is an int; here, once per record, each check inline rather than a call.
            tokens = tokens if type(tokens) is int else None
            input_tokens = _input_tokens(usage)
        else:
            tokens = input_tokens = None
        where = Location(self.file, self.line, session)
        agent = self._agent(record, session) if record.get("isSidechain") is True else session
        message_id = message.get("id")
        if type(message_id) is not str:
            message_id = None
        elif self.charged.get(agent) == message_id:
            tokens = input_tokens = None
        turn, timestamp, project = (
            record.get("promptId"),
            record.get("timestamp"),
            record.get("cwd"),
        )
        turn = turn if type(turn) is str else None
        timestamp = timestamp if type(timestamp) is str else None
        project = project if type(project) is str else None
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            ident, name = block.get("id"), block.get("name")
            if not isinstance(ident, str) or not isinstance(name, str):
                items.append(
                    Diagnostic(self.file, self.line, "tool_use without a string id and name")
                )
                continue
            call = _open_call(
                OpenCall,
                (
                    where,
                    agent,
                    name,
                    block.get("input"),
                    turn,
                    tokens,
                    timestamp,
                    project,
                    input_tokens,
                ),
            )
            if message_id is not None and (tokens, input_tokens) != (None, None):
                self.charged[agent] = message_id
            tokens = input_tokens = None  # the step's tokens go with its first call
            items += self.calls.add((session, ident), call)

    def _user(
        self, items: list[Item], record: Mapping[str, object], session: str, content: object
    ) -> None:
        results = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        if results:
            for block in results:
                self._result(items, record, session, block)
        elif not (record.get("isMeta") is True or record.get("isCompactSummary") is True):
            agent = self._agent(record, session)
            items += self.calls.drop_agent(agent)
            items.append(
                Located(
                    Location(self.file, self.line, session),
                    PromptSubmitted(agent),
                    turn=string(record, "promptId"),
                    timestamp=string(record, "timestamp"),
                    project=string(record, "cwd"),
                )
            )

    def _result(
        self,
        items: list[Item],
        record: Mapping[str, object],
        session: str,
        block: Mapping[str, object],
    ) -> None:
        ident = block.get("tool_use_id")
        if not isinstance(ident, str):
            items.append(
                Diagnostic(self.file, self.line, "tool_result without a string tool_use_id")
            )
            return
        where, unknown = (self.file, self.line), ("tool_result for tool_use", ident)
        call = self.calls.finish_or_note((session, ident), items, where, unknown)
        if call is None:
            return
        _, agent, tool, arguments, turn, tokens, called_at, project, input_tokens = call
        denied = block.get("is_error") is True and _is_denial(block, record)
        # The call counts when its result comes, so it is dated by the result's line, or by
        # its own line when the result's has no timestamp.
        timestamp = record.get("timestamp")
        items.append(
            Located(
                Location(self.file, self.line, session),
                ToolCallFinished(agent, tool, arguments, denied, block.get("content")),
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
