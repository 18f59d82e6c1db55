"""The Cline reader: a task's ``api_conversation_history.json`` (the extension, and Roo Code and
Kilo Code, its forks: a JSON list of messages) and the Cline CLI's
``~/.cline/data/sessions/<id>/<id>.messages.json`` (an object whose ``messages`` is that list).

The messages are the Anthropic Messages API's, each with its ``ts``. An ``assistant``
message's ``tool_use`` blocks (``id``, ``name``, ``input``) are calls; each counts at the
``user`` message holding the ``tool_result`` block with its ``tool_use_id``, whose ``content``
is the result. The result failed when the block says ``is_error``, or when one of its items says
``"success": false`` (the CLI's results); it is a denial when its text says the user denied
the operation. A ``user`` message of text, without tool results, is a prompt. Calls the
extension wrote as XML in the assistant's text (its older tool format) are not read: a file
with messages and no call ends with the note of a file that held none (``no_call_note``),
saying how many messages it read. One file is one session (the task's folder, or the
CLI's session id) and one agent.

The CLI (3.0.65) gives each ``assistant`` message the ``metrics`` of its model step
(``inputTokens``, ``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens``); they go with
its first call: ``outputTokens`` out, ``inputTokens`` in, which already counts the cached
tokens (the recorded run's requests of 1000 prompt tokens, 600 of them cached, say
``inputTokens`` 1000 and ``cacheReadTokens`` 600: the CLI takes the AI SDK's total input).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._calls import OpenCall, OpenCalls
from ._document import Cursor, Element, document_array, walk_object
from ._items import Diagnostic, Item, Located, Location
from ._reading import document_items, file_session, string, token_count
from ._registry import no_call_note

__all__ = ["DENIED", "ClineReader"]

DENIED: Final = "The user denied this operation"
"""The text of a tool result when the user said no to the call."""


def _session(file: str) -> str:
    name = os.path.basename(file)
    if name.startswith("api_conversation_history"):
        return os.path.basename(os.path.dirname(file)) or file_session(file)
    return file_session(file).removesuffix(".messages") or file_session(file)


def _blocks(message: Mapping[str, object]) -> list[dict[str, object]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    items = content if isinstance(content, list) else ()
    return " ".join(str(i.get("text", "")) for i in items if isinstance(i, dict))


def _flags(block: Mapping[str, object]) -> tuple[bool, bool]:
    """(denied, failed) of a tool result."""
    content = block.get("content")
    if DENIED in _text(content):
        return True, False
    items = content if isinstance(content, list) else ()
    failed = any(isinstance(i, dict) and i.get("success") is False for i in items)
    return False, block.get("is_error") is True or failed


class _ClineFile:
    """The state of one conversation being read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.session = _session(file)
        self.calls: OpenCalls[str] = OpenCalls()
        self.messages = 0
        self.made_calls = False

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        yield from document_items(lines, self.file, self.session, _messages, self._element)
        yield from self.calls.drop_all()
        if self.messages and not self.made_calls:
            read = (self.messages, "message")
            yield no_call_note(self.file, ClineReader.name, read, "none with a tool_use block")

    def _element(self, text: str, element: Element) -> list[Item]:
        message, line = element.value, element.line
        if not isinstance(message, dict):
            return [Diagnostic(self.file, line, "a message that is not an object")]
        self.messages += 1
        where = Location(self.file, line, self.session)
        role, blocks = message.get("role"), _blocks(message)
        if role == "assistant":
            return self._calls(where, blocks, message.get("metrics"))
        if role != "user":
            return []
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results:
            return self._results(where, results)
        if any(b.get("type") == "text" for b in blocks) or isinstance(message.get("content"), str):
            items: list[Item] = list(self.calls.drop_agent(self.session))
            return [*items, Located(where, PromptSubmitted(self.session))]
        return []

    def _calls(
        self, where: Location, blocks: list[dict[str, object]], metrics: object
    ) -> list[Item]:
        items: list[Item] = []
        tokens = input_tokens = None
        if isinstance(metrics, dict):
            tokens = token_count(metrics, "outputTokens")
            input_tokens = token_count(metrics, "inputTokens")
        for block in blocks:
            ident, tool = string(block, "id"), string(block, "name")
            if block.get("type") == "tool_use" and ident is not None and tool is not None:
                self.made_calls = True
                arguments = block.get("input")
                call = OpenCall(
                    where, self.session, tool, arguments, None, tokens, None, None, input_tokens
                )
                tokens = input_tokens = None  # the step's tokens go with its first call
                items += self.calls.add(ident, call)
        return items

    def _results(self, where: Location, results: list[dict[str, object]]) -> list[Item]:
        items: list[Item] = []
        for block in results:
            ident = string(block, "tool_use_id")
            call = self.calls.finish(ident) if ident is not None else None
            if call is not None:
                denied, failed = _flags(block)
                result = block.get("content")
                event = ToolCallFinished(
                    self.session, call.tool, call.arguments, denied, result, failed
                )
                items.append(
                    Located(where, event, None, call.tokens, input_tokens=call.input_tokens)
                )
        return items


def _messages(cursor: Cursor) -> Iterator[Element | Diagnostic]:
    if cursor.skip_space() == "[":
        return document_array(cursor)
    return walk_object(cursor, "messages")


class ClineReader:
    """Reads Cline conversations (the extension's tasks and the CLI's sessions)."""

    name: Final = "cline"
    description: Final = (
        "Cline tasks/<id>/api_conversation_history.json, ~/.cline/data/sessions/<id>/"
        "<id>.messages.json"
    )

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a Cline conversation."""
        start = head.lstrip()[:1]
        if start == b"[":
            return b'"role"' in head and b'"ts"' in head and b'"content"' in head
        return start == b"{" and b'"messages"' in head and b'"origin"' in head and b'"ts"' in head

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one conversation; never raises for bad input."""
        return _ClineFile(file).read(lines)
