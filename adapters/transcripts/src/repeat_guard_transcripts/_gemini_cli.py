"""The Gemini CLI reader: ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (and the older
``session-*.json``, one document) to guard events.

Gemini CLI 0.61 writes a chat as JSON Lines: a metadata record (``sessionId``,
``projectHash``, ``startTime``, ``kind``), then each message as a record of its own
(``id``, ``timestamp``, ``type``: ``user``, ``gemini``, ``info``...), written again under the
same ``id`` each time it changes, and ``{"$set": {...}}`` records that update the metadata or
replace the whole list of ``messages`` (a resumed chat starts with one). A ``gemini``
message's ``toolCalls`` (``id``, ``name``, ``args``, ``result``, ``status``) are recorded once
they are done: a call counts at the first line where its ``status`` is ``success``,
``error`` (failed) or ``cancelled`` (denied: the user declined or cancelled it), with its
``result`` (the function responses the model read, less what Gemini CLI makes new for every
call: see ``comparable_result``) as the result; one seen only with another status never
finished. A ``run_shell_command`` recorded as a ``success`` whose output has an ``Exit
Code:`` line other than 0 failed too: Gemini CLI writes that line only for a command that
exited with another status. A ``user`` message whose content is text (not function responses, not
the ``<session_context>`` the CLI injects) is a prompt; ``$set`` lists of messages (history
rewritten) add the calls not yet seen, and no prompts. One file is one session
(``sessionId``) and one agent.

A ``gemini`` message's ``tokens`` (``input``, ``output``, ``cached``, ``thoughts``, ``tool``,
``total``: the response's ``usageMetadata`` ``promptTokenCount``, ``candidatesTokenCount``,
``cachedContentTokenCount``, ``thoughtsTokenCount``, ``toolUsePromptTokenCount`` and
``totalTokenCount``, as 0.61.0's ``recordMessageTokens`` writes them) go with its first call
(``toolCalls[0]``): output tokens ``output`` + ``thoughts`` (the model wrote both), input
tokens ``input`` + ``tool`` (``cached`` is part of ``input``, as the API counts it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard.shell_output import output_failed, responses_without_process_ids

from ._calls import DONE_MARKS, OPEN_CALLS, RecentMarks
from ._document import Cursor, Element, walk_object
from ._items import Diagnostic, Item, Located, Location, SessionSeen, Unfinished
from ._reading import (
    document_items,
    file_session,
    object_items,
    string,
    token_count,
)

__all__ = [
    "DONE",
    "SHELL",
    "GeminiCliReader",
    "comparable_response",
    "comparable_result",
    "exited_failing",
]

DONE: Final = {"success": (False, False), "error": (False, True), "cancelled": (True, False)}
"""A finished call's status: (denied, failed)."""

_CONTEXT = "<session_context>"

SHELL: Final = "run_shell_command"
"""Gemini CLI's shell tool, whose output says the command's exit status."""


def comparable_result(result: object) -> object:
    """A call's ``result`` (its list of ``functionResponse`` parts) less what Gemini CLI makes
    new for every call, whatever the tool did.

    Each response carries a fresh ``id`` (``run_shell_command__run_shell_command_<ms>_0``),
    left out. ``run_shell_command`` ends its output with the process ids of that run (lines
    ``Background PIDs: 3841`` and ``Process Group PGID: 3839``: left out), and says ``Command
    moved to background (PID: 3841)`` for a command sent to the background (the number becomes
    ``<n>``), as Gemini CLI 0.61.0 writes them. The output, ``Error:``, ``Exit Code:`` and
    ``Signal:`` stay (``repeat_guard.shell_output``, which the Gemini CLI hook's
    results share). Any other shape is returned as it is."""
    if not isinstance(result, list):
        return result
    return [_comparable_part(part) for part in result]


def _comparable_part(part: object) -> object:
    if not isinstance(part, dict) or not isinstance(part.get("functionResponse"), dict):
        return part
    response: dict[str, object] = part["functionResponse"]
    kept = {key: value for key, value in response.items() if key != "id"}
    if "response" in kept:
        kept["response"] = comparable_response(kept["response"])
    return {**part, "functionResponse": kept}


def comparable_response(response: object) -> object:
    """A ``functionResponse``'s ``response`` with the process ids of its shell run left out:
    in each of its strings, the lines ``Background PIDs: 3841`` and ``Process Group PGID:
    3839``, and ``(PID: 3841)`` written ``(PID: <n>)``, as Gemini CLI 0.61.0 writes them; the
    Gemini CLI hook's ``AfterTool`` shares it (``responses_without_process_ids``; Qwen Code's
    reader adds its own background lines, ``qwen_responses_without_process_ids``). Any other
    shape is returned as it is."""
    return responses_without_process_ids(response)


def exited_failing(result: object) -> bool:
    """Whether a ``run_shell_command`` result's output says the command exited with a failing
    status (its ``Exit Code:`` line)."""
    for part in result if isinstance(result, list) else ():
        response = part.get("functionResponse") if isinstance(part, dict) else None
        inner = response.get("response") if isinstance(response, dict) else None
        output = inner.get("output") if isinstance(inner, dict) else None
        if isinstance(output, str) and output_failed(output):
            return True
    return False


def _is_prompt(content: object) -> bool:
    """Whether a ``user`` message's content is text the user wrote."""
    if isinstance(content, str):
        return bool(content) and not content.startswith(_CONTEXT)
    parts = content if isinstance(content, list) else ()
    texts = [part.get("text") for part in parts if isinstance(part, dict)]
    said = [text for text in texts if isinstance(text, str)]
    return bool(said) and len(said) == len(parts) and not said[0].startswith(_CONTEXT)


class _GeminiFile:
    """The state of one chat being read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.session = file_session(file)
        self.seen = False
        self.done: RecentMarks[str] = RecentMarks(DONE_MARKS)
        self.pending: dict[str, Unfinished] = {}

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        iterator = iter(lines)
        first = next(iterator, b"")
        rest = chain([first], iterator)
        try:
            json.loads(first)
            whole = True
        except (ValueError, RecursionError):
            whole = False
        if first.lstrip()[:1] == b"{" and not whole:
            yield from document_items(rest, self.file, self.session, _messages, self._element)
        else:
            yield from object_items(rest, self.file, self._record)
        yield from self.pending.values()

    def _element(self, text: str, element: Element) -> list[Item]:
        if not isinstance(element.value, dict):
            return [Diagnostic(self.file, element.line, "a message that is not an object")]
        return self._message(element.line, element.value, prompts=True)

    def _record(self, line: int, record: dict[str, object]) -> list[Item]:
        items: list[Item] = []
        session = string(record, "sessionId")
        if session is not None and "projectHash" in record:
            self.session = session
        if not self.seen:
            self.seen = True
            items.append(SessionSeen(Location(self.file, line, self.session)))
        update = record.get("$set")
        if isinstance(update, dict):  # history rewritten: its calls not seen yet, no prompts
            return items + self._messages(line, update.get("messages"), prompts=False)
        if "messages" in record:  # a whole chat (the older format) on one line
            return items + self._messages(line, record["messages"], prompts=True)
        return items + self._message(line, record, prompts=True)

    def _messages(self, line: int, messages: object, *, prompts: bool) -> list[Item]:
        items: list[Item] = []
        for message in messages if isinstance(messages, list) else ():
            if isinstance(message, dict):
                items += self._message(line, message, prompts=prompts)
        return items

    def _message(self, line: int, message: Mapping[str, object], *, prompts: bool) -> list[Item]:
        where = Location(self.file, line, self.session)
        kind = message.get("type")
        if kind == "user" and prompts and _is_prompt(message.get("content")):
            return [Located(where, PromptSubmitted(self.session), timestamp=_stamp(message))]
        calls = message.get("toolCalls")
        if kind != "gemini" or not isinstance(calls, list):
            return []
        items: list[Item] = []
        for index, call in enumerate(calls):
            if not isinstance(call, dict):
                items.append(Diagnostic(self.file, line, "a tool call that is not an object"))
                continue
            cost = _tokens(message) if index == 0 else (None, None)
            items += self._call(where, call, f"{message.get('id')}#{index}", cost)
        return items

    def _call(
        self,
        where: Location,
        call: Mapping[str, object],
        fallback: str,
        cost: tuple[int | None, int | None],
    ) -> list[Item]:
        ident, tool = string(call, "id") or fallback, string(call, "name")
        if tool is None:
            return [Diagnostic(self.file, where.line, "a tool call without a name")]
        if ident in self.done:
            return []
        status = call.get("status")
        if not isinstance(status, str) or status not in DONE:
            if ident not in self.pending and len(self.pending) < OPEN_CALLS:
                self.pending[ident] = Unfinished(where, tool)
            return []
        self.pending.pop(ident, None)
        self.done.mark(ident)
        denied, failed = DONE[status]
        result = call.get("result")
        failed = failed or (tool == SHELL and exited_failing(result))
        event = ToolCallFinished(
            self.session,
            tool,
            call.get("args"),
            denied,
            comparable_result(result),
            failed,
        )
        tokens, input_tokens = cost
        located = Located(where, event, None, tokens, _stamp(call), input_tokens=input_tokens)
        return [located]


def _tokens(message: Mapping[str, object]) -> tuple[int | None, int | None]:
    """A ``gemini`` message's output tokens and input tokens."""
    tokens = message.get("tokens")
    if not isinstance(tokens, dict):
        return None, None
    return token_count(tokens, "output", "thoughts"), token_count(tokens, "input", "tool")


def _stamp(record: Mapping[str, object]) -> str | None:
    return string(record, "timestamp")


def _messages(cursor: Cursor) -> Iterator[Element | Diagnostic]:
    return walk_object(cursor, "messages")


class GeminiCliReader:
    """Reads Gemini CLI chats."""

    name: Final = "gemini-cli"
    description: Final = "~/.gemini/tmp/<project>/chats/session-*.jsonl (or .json)"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a Gemini CLI chat (its metadata first)."""
        start = head.lstrip()[:1]
        first = head.split(b"\n", 1)[0] if start == b"{" else b""
        if b'"projectHash"' in first and b'"sessionId"' in first:
            return True
        return start == b"{" and b'"projectHash"' in head and b'"messages"' in head

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one chat; never raises for bad input."""
        return _GeminiFile(file).read(lines)
