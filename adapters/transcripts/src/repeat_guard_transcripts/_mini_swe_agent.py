"""The mini-swe-agent reader: a ``*.traj.json`` file (one JSON document) to guard events.

The document's ``messages`` are the run (a bare JSON list of messages is read too). Every
action is a bash command: the call's tool is ``bash`` and its arguments ``{"command": ...}``,
whichever way the model gave it, so the same command is the same call.

- Format 1.1 keeps what the agent ran in each reply's ``extra.actions`` (``{"command"}``, with
  a ``tool_call_id`` when the model used tool calls); a reply with no ``extra`` (format 1.0)
  holds its command in its text, in exactly one ```` ```mswea_bash_command ```` block,
  ``<mswea_bash_command>`` tag or (format 1.0) ```` ```bash ```` block, else in its
  ``tool_calls``.
- A call counts at the line of its observation: the ``tool`` message (or Responses API
  ``function_call_output``) with its id, else the next ``user`` message, with that message's
  content as its result. Calls still open at the ``exit`` message (the command that submitted)
  count there, without a result; calls open at the next reply, or at the file's end, never
  finished. An answer saying ``action was not executed`` leaves its call open. An answer whose
  ``extra`` has a ``returncode`` other than 0, or an ``exception_info``, failed.
- A ``user`` message whose ``extra.interrupt_type`` is ``UserRejection`` denies the calls
  still open (interactive mode, the user said no); ``UserNewTask`` and ``UserInterruption``
  are prompts, as is the task (a ``user`` message before any action). A reply that gave no
  action the agent could run (``FormatError``, or a 1.0 reply without exactly one block) is a
  note: data about the run, no call.
- A reply's tokens (format 1.1: ``extra.response``, the model's response as litellm returns
  it) go with its first call: ``usage.completion_tokens`` out, ``usage.prompt_tokens`` in
  (litellm counts the cached tokens in it).

One file is one session and one agent, named after the file (``<id>.traj.json`` is ``<id>``).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._calls import OpenCall, OpenCalls
from ._document import Cursor, Element, document_array, walk_object
from ._items import Diagnostic, Item, Located, Location, Unfinished
from ._reading import document_items, file_session, string, token_count

__all__ = ["ACTION_PATTERNS", "MiniSweAgentReader", "actions_in_text"]

ACTION_PATTERNS: Final = (
    re.compile(r"```mswea_bash_command\s*\n(.*?)\n```", re.DOTALL),
    re.compile(r"<mswea_bash_command>(.*?)</mswea_bash_command>", re.DOTALL),
    re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL),
)
"""How a text-based model's reply carries its command, tried in order: the first that finds
any block is the one the run used."""

TOOL: Final = "bash"

NOT_EXECUTED: Final = "action was not executed"
"""The ``exception_info`` of the answer to a call the agent did not run (the user rejected it,
or an earlier command of the same reply ended the run): the call stays open."""

_NO_ACTION = "a reply with no action the agent could run ({why}): no call"
_PROMPTS = frozenset({"UserNewTask", "UserInterruption"})


def actions_in_text(text: str) -> list[str]:
    """The commands in a reply's text, stripped, by the first pattern that finds any."""
    for pattern in ACTION_PATTERNS:
        found = pattern.findall(text)
        if found:
            return [action.strip() for action in found]
    return []


def _text(content: object) -> str:
    """A message's text: a string, or the ``text`` of its parts."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else ()
    return "".join(
        part["text"]
        for part in parts
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    )


def _tool_calls(message: Mapping[str, object]) -> list[tuple[str | None, object]]:
    """(id, command) of each bash call in a reply's ``tool_calls``."""
    calls = message.get("tool_calls")
    found: list[tuple[str | None, object]] = []
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else None
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and "command" in parsed:
            assert isinstance(call, dict)  # a function was found in it
            found.append((string(call, "id"), parsed["command"]))
    return found


def _failed(extra: Mapping[str, object]) -> bool:
    """Whether an answer says its command failed: a return code other than 0, or an
    exception's text (a timeout)."""
    code, exception = extra.get("returncode"), extra.get("exception_info")
    return (type(code) is int and code != 0) or (isinstance(exception, str) and bool(exception))


def _usage(extra: Mapping[str, object]) -> tuple[int | None, int | None]:
    """A reply's output and input tokens: its ``extra.response`` (the model's response as
    litellm gives it) ``usage.completion_tokens`` and ``usage.prompt_tokens`` (which count the
    cached tokens too)."""
    response = extra.get("response")
    usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict):
        return None, None
    return token_count(usage, "completion_tokens"), token_count(usage, "prompt_tokens")


def _session(file: str) -> str:
    name = file_session(file)
    return name.removesuffix(".traj") or name


class _MiniFile:
    """The state of one trajectory being read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.session = _session(file)
        self.keyed: OpenCalls[str] = OpenCalls()
        self.queued: deque[OpenCall] = deque()  # answered in order by the next user messages
        self.acted = False
        self.step: tuple[int | None, int | None] = (None, None)  # a reply's tokens, not yet given

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        yield from document_items(lines, self.file, self.session, _messages, self._element)
        yield from self._drop()

    def _element(self, text: str, element: Element) -> Iterator[Item]:
        message, where = element.value, Location(self.file, element.line, self.session)
        if not isinstance(message, dict):
            yield Diagnostic(self.file, element.line, "a message that is not an object")
            return
        extra = message.get("extra")
        extra = extra if isinstance(extra, dict) else {}
        actions = extra.get("actions")
        role = message.get("role")
        if isinstance(actions, list):
            self.step = _usage(extra)
            yield from self._actions(where, actions)
        elif role == "assistant":
            self.step = _usage(extra)
            yield from self._reply(where, message)
        elif role == "tool" or message.get("type") == "function_call_output":
            if extra.get("exception_info") != NOT_EXECUTED:
                yield from self._keyed_answer(where, message, _failed(extra))
        elif role == "user":
            yield from self._user(where, message, extra)
        elif role == "exit":
            yield from self._exit(where)

    def _actions(self, where: Location, actions: list[object]) -> Iterator[Item]:
        yield from self._drop()
        self.acted = True
        if not actions:
            yield Diagnostic(self.file, where.line, _NO_ACTION.format(why="none"), "note")
        for action in actions:
            command = action.get("command") if isinstance(action, dict) else None
            if not isinstance(command, str):
                yield Diagnostic(self.file, where.line, "an action without a command")
                continue
            assert isinstance(action, dict)  # it has a command
            yield from self._open(where, string(action, "tool_call_id"), command)

    def _reply(self, where: Location, message: Mapping[str, object]) -> Iterator[Item]:
        yield from self._drop()
        self.acted = True
        calls = _tool_calls(message)
        if not calls:
            found = actions_in_text(_text(message.get("content")))
            if len(found) != 1:
                why = f"{len(found)} command blocks"
                yield Diagnostic(self.file, where.line, _NO_ACTION.format(why=why), "note")
                return
            calls = [(None, found[0])]
        for ident, command in calls:
            yield from self._open(where, ident, command)

    def _open(self, where: Location, ident: str | None, command: object) -> Iterator[Item]:
        tokens, input_tokens = self.step
        self.step = (None, None)  # the reply's tokens go with its first call
        arguments = {"command": command}
        call = OpenCall(
            where, self.session, TOOL, arguments, None, tokens, None, None, input_tokens
        )
        if ident is None:
            self.queued.append(call)
        else:
            yield from self.keyed.add(ident, call)

    def _keyed_answer(
        self, where: Location, message: Mapping[str, object], failed: bool
    ) -> Iterator[Item]:
        ident = string(message, "tool_call_id") or string(message, "call_id")
        if ident is None:
            yield Diagnostic(self.file, where.line, "a tool result without its call's id")
            return
        items: list[Item] = []
        unknown = ("a tool result for the call", ident)
        call = self.keyed.finish_or_note(ident, items, (self.file, where.line), unknown)
        yield from items
        if call is not None:
            result = message.get("content", message.get("output"))
            yield self._finished(where, call, False, result, failed)

    def _user(
        self, where: Location, message: Mapping[str, object], extra: Mapping[str, object]
    ) -> Iterator[Item]:
        interrupt = extra.get("interrupt_type")
        interrupt = interrupt if isinstance(interrupt, str) or interrupt is None else "?"
        if interrupt == "FormatError":
            yield Diagnostic(self.file, where.line, _NO_ACTION.format(why="FormatError"), "note")
        elif interrupt == "UserRejection":
            yield from self._finish_open(where, denied=True)
        elif interrupt in _PROMPTS or (interrupt is None and not self.acted):
            yield from self._drop()
            yield Located(where, PromptSubmitted(self.session))
        elif self.queued:
            call = self.queued.popleft()
            yield self._finished(where, call, False, message.get("content"), _failed(extra))

    def _exit(self, where: Location) -> Iterator[Item]:
        yield from self._finish_open(where, denied=False)

    def _finish_open(self, where: Location, *, denied: bool) -> Iterator[Item]:
        """Count every open call here, without a result (denied, or the run ended in it)."""
        calls = [*self.queued, *self.keyed.finish_all()]
        self.queued.clear()
        for call in calls:
            yield self._finished(where, call, denied, None, False)

    def _finished(
        self, where: Location, call: OpenCall, denied: bool, result: object, failed: bool
    ) -> Located:
        event = ToolCallFinished(self.session, TOOL, call.arguments, denied, result, failed)
        return Located(where, event, None, call.tokens, input_tokens=call.input_tokens)

    def _drop(self) -> Iterator[Item]:
        """Report every open call unfinished (a new reply came, or the file ended)."""
        for call in self.queued:
            yield Unfinished(call.where, call.tool)
        self.queued.clear()
        yield from self.keyed.drop_all()


def _messages(cursor: Cursor) -> Iterator[Element | Diagnostic]:
    if cursor.skip_space() == "[":
        return document_array(cursor)
    return walk_object(cursor, "messages")


class MiniSweAgentReader:
    """Reads mini-swe-agent trajectories (``*.traj.json``)."""

    name: Final = "mini-swe-agent"
    description: Final = "mini-swe-agent .traj.json files (formats 1.0 and 1.1)"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like a mini-swe-agent trajectory."""
        start = head.lstrip()[:1]
        if start == b"{":
            return b'"mini_version"' in head or b'"trajectory_format": "mini-swe-agent' in head
        return start == b"[" and b'"role"' in head and b"mswea_bash_command" in head

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one trajectory; never raises for bad input."""
        return _MiniFile(file).read(lines)
