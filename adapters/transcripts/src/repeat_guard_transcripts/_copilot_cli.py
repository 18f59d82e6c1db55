"""The GitHub Copilot CLI reader: ``~/.copilot/session-state/<id>/events.jsonl`` to guard
events.

Each line is an event ``{"type", "data", "id", "timestamp", "parentId"}`` (undocumented; read
from files the real Copilot CLI 1.0.102 wrote). ``session.start`` names the session
(``data.sessionId``) and its working directory (``data.context.cwd``); ``user.message`` is a
prompt; ``tool.execution_start`` (``toolCallId``, ``toolName``, ``arguments``) opens a call,
which counts at its ``tool.execution_complete``: ``success`` false is a failure, and an
``error.code`` of ``denied`` (or a ``permission.completed`` for the call whose result's
``kind`` starts with ``denied``) a denial; its ``result.content`` is the result. A ``bash``
command that exited non-zero is ``success: true`` too: its exit code is in
``shellExecution.exitCode`` and at the end of the text (``<shellId: N completed with exit
code K>``, read by ``repeat_guard.shell_output.copilot_shell_exit``, as the hooks read it); such a
call is failed, and its result drops the shell's id, new for every command, so that the same
output of the same command is the same result. A call still open at the next prompt or at the
file's end never finished.

Tokens: a ``session.usage_record`` (``usage.inputTokens``, ``outputTokens``, ``apiCallId``)
comes before the ``assistant.message`` of the same ``apiCallId``, whose ``toolRequests`` name
the calls that model step made; its first call carries the step's ``outputTokens`` and, as
input, ``inputTokens``, which already counts the tokens read from the cache (1.0.102 wrote
``inputTokens`` 1000 and ``cacheReadTokens`` 600 for a request of 1000 prompt tokens, 600
of them cached). One file is one session and one agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard.shell_output import copilot_shell_exit

from ._calls import DONE_MARKS, OpenCall, OpenCalls, RecentMarks
from ._items import Item, Located, Location, SessionSeen
from ._reading import exit_failed, file_session, object_items, string, token_count
from ._registry import head_objects

__all__ = ["CopilotCliReader"]

_TYPES = frozenset({"session.start", "user.message", "assistant.message", "tool.execution_start"})


def _result(data: Mapping[str, object]) -> tuple[object, bool]:
    """What a completed call returned (its result's ``content``, else its error's message),
    and whether its command exited non-zero (``shellExecution.exitCode``, or the code at the
    end of the text, which the result keeps without the shell's id)."""
    result, error, shell = data.get("result"), data.get("error"), data.get("shellExecution")
    failed = isinstance(shell, dict) and exit_failed(shell.get("exitCode"))
    if isinstance(result, dict) and "content" in result:
        content = result["content"]
        ended = copilot_shell_exit(content) if isinstance(content, str) else None
        if ended is None:
            return content, failed
        return ended[0], failed or ended[1] != 0
    if isinstance(error, dict) and "message" in error:
        return error["message"], failed
    return result, failed


def _usage(data: Mapping[str, object]) -> tuple[str | None, int | None, int | None]:
    """A usage record's ``apiCallId``, output tokens and input tokens."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None, None, None
    output, input_ = token_count(usage, "outputTokens"), token_count(usage, "inputTokens")
    return string(usage, "apiCallId"), output, input_


class _CopilotFile:
    """The state of one events file being read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.session = file_session(file)
        self.project: str | None = None
        self.seen = False
        self.calls: OpenCalls[str] = OpenCalls()
        self.denied: RecentMarks[str] = RecentMarks(DONE_MARKS)
        # The last usage record (its apiCallId, output and input tokens), then the call that
        # carries them: the first its step made.
        self.usage: tuple[str | None, int | None, int | None] = (None, None, None)
        self.charged: tuple[str | None, int | None, int | None] = (None, None, None)

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        yield from object_items(lines, self.file, self._event)
        yield from self.calls.drop_all()

    def _event(self, line: int, event: dict[str, object]) -> list[Item]:
        kind, data = event.get("type"), event.get("data")
        if not isinstance(data, dict):
            return []
        items: list[Item] = []
        if kind == "session.start":
            self._start(data)
        if not self.seen:
            self.seen = True
            items.append(SessionSeen(Location(self.file, line, self.session)))
        where = Location(self.file, line, self.session)
        stamp = string(event, "timestamp")
        if kind == "user.message":
            items += self.calls.drop_agent(self.session)
            items.append(Located(where, PromptSubmitted(self.session), timestamp=stamp))
        elif kind == "tool.execution_start":
            items += self._start_call(where, data, stamp)
        elif kind == "tool.execution_complete":
            items += self._complete(where, data, stamp)
        else:
            self._remember(kind, data)
        return items

    def _remember(self, kind: object, data: Mapping[str, object]) -> None:
        """Keep what an event that is no item says about the calls to come."""
        if kind == "permission.completed":
            self._permission(data)
        elif kind == "session.usage_record":
            self.usage = _usage(data)
        elif kind == "assistant.message":
            self._message(data)

    def _message(self, data: Mapping[str, object]) -> None:
        """Give the step's tokens to its first call, if its usage record came before it."""
        step, tokens, input_tokens = self.usage
        requests = data.get("toolRequests")
        first = requests[0] if isinstance(requests, list) and requests else None
        ident = string(first, "toolCallId") if isinstance(first, dict) else None
        if ident is not None and step is not None and step == string(data, "apiCallId"):
            self.charged = (ident, tokens, input_tokens)
            self.usage = (None, None, None)

    def _start(self, data: Mapping[str, object]) -> None:
        session, context = string(data, "sessionId"), data.get("context")
        if session is not None and not self.seen:
            self.session = session
        if isinstance(context, dict):
            self.project = string(context, "cwd")

    def _start_call(
        self, where: Location, data: Mapping[str, object], stamp: str | None
    ) -> tuple[Item, ...]:
        ident, tool = string(data, "toolCallId"), string(data, "toolName")
        if ident is None or tool is None:
            return ()
        arguments = data.get("arguments")
        charged, tokens, input_tokens = self.charged
        if charged != ident:
            tokens = input_tokens = None
        turn = string(data, "turnId")
        call = OpenCall(
            where, self.session, tool, arguments, turn, tokens, stamp, None, input_tokens
        )
        return self.calls.add(ident, call)

    def _complete(
        self, where: Location, data: Mapping[str, object], stamp: str | None
    ) -> list[Item]:
        ident = string(data, "toolCallId")
        call = self.calls.finish(ident) if ident is not None else None
        if call is None:
            return []
        error = data.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        denied = code == "denied" or ident in self.denied
        result, exited = _result(data)
        failed = (data.get("success") is False or exited) and not denied
        event = ToolCallFinished(self.session, call.tool, call.arguments, denied, result, failed)
        located = Located(
            where,
            event,
            call.turn,
            call.tokens,
            stamp,
            self.project,
            input_tokens=call.input_tokens,
        )
        return [located]

    def _permission(self, data: Mapping[str, object]) -> None:
        ident, result = string(data, "toolCallId"), data.get("result")
        kind = result.get("kind") if isinstance(result, dict) else None
        denied = isinstance(kind, str) and kind.startswith("denied")
        if ident is not None and denied and ident not in self.denied:
            self.denied.mark(ident)


class CopilotCliReader:
    """Reads GitHub Copilot CLI session events."""

    name: Final = "copilot-cli"
    description: Final = "~/.copilot/session-state/<id>/events.jsonl"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a Copilot CLI events file."""
        return any(
            isinstance(record.get("type"), str)
            and record["type"] in _TYPES
            and isinstance(record.get("data"), dict)
            and "parentId" in record
            for record in head_objects(head)[:3]
        )

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one events file; never raises for bad input."""
        return _CopilotFile(file).read(lines)
