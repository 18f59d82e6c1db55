"""The OpenHands reader: trajectories (a JSON list of events) and evaluation output (JSON Lines,
one instance per line with its ``history``) to guard events.

An agent ``action`` with ``tool_call_metadata`` is a call: the tool is its ``function_name``
and the arguments the tool call's own ``arguments`` (parsed JSON) from the model response that
made it; without that metadata, the action's name and its ``args`` (less the ``thought``) stand
in. A call counts at the line of the observation whose ``cause`` is its id, with the
observation's ``content`` as its result; ``finish`` and ``reject``, which end the run, count
where they are, without a result. An observation ``user_rejected`` is a denial; an ``error``
observation, one whose ``extras.metadata.exit_code`` is a failing status (``exit_failed``),
and one whose content starts with ``EDITOR_ERROR`` (the file editor's errors) failed. A user's
``message`` is a prompt.

OpenHands V1 (the software-agent-sdk) tags each event with its ``kind``; such events are read
as ``_openhands_v1`` says, in the same files. A file whose events hold no call the reader knows
(in none of its sessions) ends with the note of a file that held none (``no_call_note``), saying
how many events it read, so a format that changed never reads as a silent zero.

Delegates: a ``delegate`` action starts a sub-agent; the events after it belong to that agent
(``<session>/delegate-<id>``) until the ``delegate`` observation caused by it. At most
``OPEN_CALLS`` delegates are nested (a deeper one forgets the outermost), so delegates that
never end do not grow memory with the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Final

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._calls import OPEN_CALLS, OpenCall, OpenCalls
from ._document import Cursor, Element, document_array, walk_object
from ._items import Diagnostic, Item, Located, Location, SessionSeen
from ._lines import json_lines
from ._openhands_v1 import ANSWERS, KINDS, arguments_of, failed_of, result_of
from ._reading import document_items, exit_failed, file_session, string
from ._registry import head_objects, no_call_note

__all__ = ["NOT_CALLS", "OpenHandsReader"]

NOT_CALLS: Final = frozenset(
    {"message", "system", "recall", "change_agent_state", "null", "condensation"}
)
"""Agent actions that are not tool calls."""

_ENDS_THE_RUN = frozenset({"finish", "reject"})


EDITOR_ERROR: Final = "ERROR:\n"
"""How the OpenHands file editor's error texts begin (``ERROR:`` on a line of its own)."""


def _tool_call(metadata: Mapping[str, object]) -> tuple[str, object] | None:
    """The (name, arguments) of the tool call ``metadata`` names in its model response."""
    ident = metadata.get("tool_call_id")
    response = metadata.get("model_response")
    choices = response.get("choices") if isinstance(response, dict) else None
    for choice in choices if isinstance(choices, list) else ():
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and call.get("id") == ident:
                return str(function.get("name")), _parsed(function.get("arguments"))
    return None


def _parsed(arguments: object) -> object:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except (ValueError, RecursionError):
            return arguments
    return arguments


def _call_of(event: Mapping[str, object], action: str) -> tuple[str, object]:
    metadata = event.get("tool_call_metadata")
    if isinstance(metadata, dict):
        named = _tool_call(metadata)
        function = metadata.get("function_name")
        if named is not None:
            return named
        if isinstance(function, str):
            action = function
    args = event.get("args")
    if isinstance(args, dict):
        return action, {key: value for key, value in args.items() if key != "thought"}
    return action, args


class _Session:
    """The events of one session (a trajectory, or one instance of an evaluation)."""

    def __init__(self, file: str, session: str) -> None:
        self.file = file
        self.session = session
        self.delegates: list[tuple[str, int]] = []
        self.calls: OpenCalls[str] = OpenCalls()
        self.events = 0
        self.made_calls = False

    @property
    def agent(self) -> str:
        return self.delegates[-1][0] if self.delegates else self.session

    def element(self, text: str, element: Element) -> Iterator[Item]:
        return self.event(element.line, element.value)

    def event(self, line: int, event: object) -> Iterator[Item]:
        if not isinstance(event, dict):
            yield Diagnostic(self.file, line, "an event that is not an object")
            return
        self.events += 1
        action, observation = event.get("action"), event.get("observation")
        where = Location(self.file, line, self.session)
        kind = event.get("kind")
        if isinstance(kind, str):
            yield from self._v1(where, event, kind)
        elif isinstance(action, str):
            yield from self._action(where, event, action)
        elif isinstance(observation, str):
            yield from self._observation(where, event, observation)

    def _v1(self, where: Location, event: Mapping[str, object], kind: str) -> Iterator[Item]:
        if kind not in KINDS:
            return
        timestamp = string(event, "timestamp")
        if kind == "MessageEvent":
            if event.get("source") == "user":
                yield from self.calls.drop_agent(self.agent)
                yield Located(where, PromptSubmitted(self.agent), timestamp=timestamp)
            return
        ident = string(event, "tool_call_id")
        tool = string(event, "tool_name")
        if ident is None or tool is None:
            return
        if kind not in ANSWERS:  # an ActionEvent
            self.made_calls = True
            call = OpenCall(where, self.agent, tool, arguments_of(event), timestamp=timestamp)
            yield from self.calls.add(f"v1:{ident}", call)
            return
        opened = self.calls.finish(f"v1:{ident}")
        if opened is not None:
            denied = kind == "UserRejectObservation"
            result, failed = result_of(event, kind), failed_of(event, kind)
            finished = ToolCallFinished(
                opened.agent, opened.tool, opened.arguments, denied, result, failed
            )
            yield Located(where, finished, timestamp=timestamp)

    def _action(self, where: Location, event: Mapping[str, object], action: str) -> Iterator[Item]:
        source = event.get("source")
        timestamp = string(event, "timestamp")
        if action == "message" and source == "user":
            yield from self.calls.drop_agent(self.agent)
            yield Located(where, PromptSubmitted(self.agent), timestamp=timestamp)
            return
        if source != "agent" or action in NOT_CALLS:
            return
        tool, arguments = _call_of(event, action)
        ident = event.get("id")
        if action in _ENDS_THE_RUN or not isinstance(ident, int) or isinstance(ident, bool):
            self.made_calls = True
            event_ = ToolCallFinished(self.agent, tool, arguments)
            yield Located(where, event_, timestamp=timestamp)
            return
        self.made_calls = True
        call = OpenCall(where, self.agent, tool, arguments, timestamp=timestamp)
        yield from self.calls.add(str(ident), call)
        if action == "delegate":
            self.delegates.append((f"{self.session}/delegate-{ident}", ident))
            if len(self.delegates) > OPEN_CALLS:  # the outermost's action was pushed out
                del self.delegates[0]

    def _observation(
        self, where: Location, event: Mapping[str, object], observation: str
    ) -> Iterator[Item]:
        cause = event.get("cause")
        if not isinstance(cause, int) or isinstance(cause, bool):
            return
        if observation == "delegate" and self.delegates and self.delegates[-1][1] == cause:
            self.delegates.pop()
        call = self.calls.finish(str(cause))
        if call is None:
            return
        denied = observation == "user_rejected"
        result = event.get("content")
        failed = observation == "error" or _exited_failing(event) or _editor_error(result)
        finished = ToolCallFinished(call.agent, call.tool, call.arguments, denied, result, failed)
        yield Located(where, finished, timestamp=string(event, "timestamp"))

    def end(self) -> Iterator[Item]:
        return self.calls.drop_all()


def events_note(file: str, format: str, events: int, made_calls: bool) -> Iterator[Item]:
    """The end of a file, read as ``format``, whose sessions read ``events`` events: its
    ``no_call_note`` when they ``made_calls`` none."""
    if events and not made_calls:
        yield no_call_note(file, format, (events, "event"))


def _editor_error(content: object) -> bool:
    # The file editor's failures (no replacement performed, a missing parameter) come back as
    # an ``edit`` or ``read`` observation whose content starts with this line.
    return isinstance(content, str) and content.startswith(EDITOR_ERROR)


def _exited_failing(event: Mapping[str, object]) -> bool:
    # A command's observation: its extras' metadata holds the exit status.
    extras = event.get("extras")
    metadata = extras.get("metadata") if isinstance(extras, dict) else None
    return isinstance(metadata, dict) and exit_failed(metadata.get("exit_code"))


def _history(cursor: Cursor) -> Iterator[Element | Diagnostic]:
    return walk_object(cursor, "history")


class _OpenHandsFile:
    def __init__(self, file: str) -> None:
        self.file = file
        # Every session's, counted as each ends: the file's note is the file's, not a session's.
        self.events = 0
        self.made_calls = False

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        iterator = iter(lines)
        first = next(iterator, b"")
        rest = chain([first], iterator)
        start = first.lstrip()[:1]
        try:
            json.loads(first)
            whole_lines = False
        except (ValueError, RecursionError):
            whole_lines = True
        if start == b"[" or (start == b"{" and whole_lines):
            yield from self._document(rest, array=start == b"[")
        else:
            yield from self._lines(rest)
        yield from events_note(self.file, OpenHandsReader.name, self.events, self.made_calls)

    def _end(self, session: _Session) -> Iterator[Item]:
        self.events += session.events
        self.made_calls = self.made_calls or session.made_calls
        return session.end()

    def _document(self, lines: Iterable[bytes], *, array: bool) -> Iterator[Item]:
        session = _Session(self.file, file_session(self.file))
        elements = document_array if array else _history
        yield from document_items(lines, self.file, session.session, elements, session.element)
        yield from self._end(session)

    def _lines(self, lines: Iterable[bytes]) -> Iterator[Item]:
        stream = _Session(self.file, file_session(self.file))
        seen = False
        for decoded in json_lines(lines, self.file):
            if isinstance(decoded, Diagnostic):
                yield decoded
                continue
            line, record = decoded
            if not isinstance(record, dict):  # no event, nor an instance: no session either
                yield Diagnostic(self.file, line, "expected a JSON object")
                continue
            history = record.get("history")
            if isinstance(history, list):
                yield from self._instance(line, record, history)
                continue
            if not seen:
                seen = True
                yield SessionSeen(Location(self.file, line, stream.session))
            yield from stream.event(line, record)
        yield from self._end(stream)

    def _instance(
        self, line: int, record: Mapping[str, object], history: list[object]
    ) -> Iterator[Item]:
        name = record.get("instance_id")
        session = _Session(self.file, name if isinstance(name, str) else f"line {line}")
        yield SessionSeen(Location(self.file, line, session.session))
        for event in history:
            yield from session.event(line, event)
        yield from self._end(session)


def _is_v1_event(record: Mapping[str, object]) -> bool:
    """Whether ``record`` is an OpenHands V1 event (a kind the SDK defines, and a source)."""
    kind = record.get("kind")
    return isinstance(kind, str) and kind.endswith(("Event", "Observation")) and "source" in record


class OpenHandsReader:
    """Reads OpenHands trajectories and evaluation output."""

    name: Final = "openhands"
    description: Final = (
        "OpenHands trajectories (.json event lists, evaluation output.jsonl), V1 events"
    )

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like an OpenHands trajectory or evaluation output."""
        start = head.lstrip()[:1]
        if start == b"[":
            return b'"source"' in head and (b'"action"' in head or b'"observation"' in head)
        first = head.split(b"\n", 1)[0]
        if start == b"{" and b'"history"' in first and b'"instance_id"' in first:
            return True
        return any(_is_v1_event(record) for record in head_objects(head)[:1])

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one file; never raises for bad input."""
        return _OpenHandsFile(file).read(lines)
