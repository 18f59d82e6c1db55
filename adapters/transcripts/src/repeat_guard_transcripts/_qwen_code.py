"""The Qwen Code reader: ``~/.qwen/projects/<cwd>/chats/<session>.jsonl`` to guard events.

Qwen Code (0.24) is a fork of Gemini CLI, but its chats are not Gemini CLI's: each line is a
record (``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``, ``type``, ``cwd``) whose
``message`` holds Gemini API ``parts``. An ``assistant`` record's ``functionCall`` parts
(``id``, ``name``, ``args``) are calls; each counts at the ``tool_result`` record whose
``functionResponse`` has its ``id``, with that part's ``response`` as the result, less what
Qwen Code 0.24.4's ``run_shell_command`` makes new for every call: the ``Process Group PGID:
N`` line that ends its output (N, the shell's process id when the command ran in a terminal;
the line is Gemini CLI's) and, when it starts a command in the background, the ``pid: N``
line and the shell's id ``bg_<8 hex digits>`` (in ``id:`` and the output file's name),
written ``bg_<id>`` (``repeat_guard.shell_output``); the record's ``toolCallResult.status``
``error`` marks it failed, ``cancelled`` denied (the user declined or cancelled it). A
``user`` record with text is a prompt. The session is the record's ``sessionId``, one agent.

An ``assistant`` record's ``usageMetadata`` goes with its first call: ``candidatesTokenCount``
out, ``promptTokenCount`` in. Qwen Code fills them from the provider's usage: for an
OpenAI-compatible API, ``prompt_tokens`` (cached ones included) and ``completion_tokens``
(reasoning included; ``thoughtsTokenCount`` is the reasoning part of it, not added); for
Anthropic, the input tokens with those read from and written to the cache, and the output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard.shell_output import qwen_responses_without_process_ids

from ._calls import OpenCall, OpenCalls
from ._items import Item, Located, Location, SessionSeen
from ._reading import object_items, string, token_count
from ._registry import head_objects

__all__ = ["QwenCodeReader"]


def _parts(record: Mapping[str, object]) -> list[dict[str, object]]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _inner(part: Mapping[str, object], key: str) -> dict[str, object]:
    value = part.get(key)
    return value if isinstance(value, dict) else {}


class _QwenFile:
    """The state of one chat being read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.sessions: set[str] = set()
        self.calls: OpenCalls[tuple[str, str]] = OpenCalls()

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        yield from object_items(lines, self.file, self._record)
        yield from self.calls.drop_all()

    def _record(self, line: int, record: dict[str, object]) -> list[Item]:
        session = string(record, "sessionId")
        if session is None:
            return []
        where = Location(self.file, line, session)
        items: list[Item] = []
        if session not in self.sessions:
            self.sessions.add(session)
            items.append(SessionSeen(where))
        kind, stamp, project = (
            record.get("type"),
            string(record, "timestamp"),
            string(record, "cwd"),
        )
        parts = _parts(record)
        if kind == "user" and any(isinstance(p.get("text"), str) for p in parts):
            items += self.calls.drop_agent(session)
            items.append(Located(where, PromptSubmitted(session), timestamp=stamp, project=project))
        elif kind == "assistant":
            usage = _inner(record, "usageMetadata")
            tokens = token_count(usage, "candidatesTokenCount")
            input_tokens = token_count(usage, "promptTokenCount")
            for part in parts:
                call = _inner(part, "functionCall")
                ident, tool = string(call, "id"), string(call, "name")
                if ident is not None and tool is not None:
                    arguments = call.get("args")
                    opened = OpenCall(
                        where, session, tool, arguments, None, tokens, stamp, project, input_tokens
                    )
                    tokens = input_tokens = None  # the step's tokens go with its first call
                    items += self.calls.add((session, ident), opened)
        elif kind == "tool_result":
            items += self._results(where, record, parts)
        return items

    def _results(
        self, where: Location, record: Mapping[str, object], parts: list[dict[str, object]]
    ) -> list[Item]:
        status = _inner(record, "toolCallResult").get("status")
        denied, failed = status == "cancelled", status == "error"
        items: list[Item] = []
        for part in parts:
            response = _inner(part, "functionResponse")
            ident = string(response, "id")
            call = self.calls.finish((where.session, ident)) if ident is not None else None
            if call is not None:
                result = qwen_responses_without_process_ids(response.get("response"))
                event = ToolCallFinished(
                    where.session, call.tool, call.arguments, denied, result, failed
                )
                stamp = string(record, "timestamp")
                located = Located(
                    where,
                    event,
                    None,
                    call.tokens,
                    stamp,
                    call.project,
                    input_tokens=call.input_tokens,
                )
                items.append(located)
        return items


def _is_qwen(record: Mapping[str, object]) -> bool:
    message = record.get("message")
    return (
        isinstance(record.get("sessionId"), str)
        and "uuid" in record
        and isinstance(message, dict)
        and "parts" in message
    )


class QwenCodeReader:
    """Reads Qwen Code chats."""

    name: Final = "qwen-code"
    description: Final = "~/.qwen/projects/<cwd>/chats/<session>.jsonl"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a Qwen Code chat (Gemini API parts in its messages)."""
        return any(_is_qwen(record) for record in head_objects(head))

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one chat; never raises for bad input."""
        return _QwenFile(file).read(lines)
