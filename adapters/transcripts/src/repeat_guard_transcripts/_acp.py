"""The ACP reader: Agent Client Protocol traffic to located guard events.

One ACP session is one agent (``session:<sessionId>``); the client's ``session/prompt``
resets it. Tool calls are keyed by (sessionId, toolCallId) and follow the table in
``_acp_lifecycle``; a call's identity for the guard is (tool name, arguments), never its id.

What is kept while reading, and why it stays small:

* per open call: the line it opened on, its phase, and the fields its identity needs (tool
  name sources, ``rawInput``, or title, kind, locations and content when there is no
  ``rawInput``); at most ``OPEN_CALLS`` open calls (the oldest is reported unfinished);
* per finished call: a mark (session and id), so a late update is not a second call; the
  most recent ``DONE_MARKS`` are kept;
* per unanswered request the reader waits for (prompt, load, permission): its method,
  session, call id and rejecting options; the most recent ``PENDING_REQUESTS`` are kept;
* per session: whether a ``session/load`` is replaying its history.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final

from repeat_guard import PromptSubmitted, Reminder, ToolCallFinished

from ._acp_lifecycle import Effect, Phase, Signal, step
from ._acp_wire import (
    Direction,
    Ident,
    LogLine,
    Request,
    Response,
    decode_message,
    is_record,
    log_line,
)
from ._items import Diagnostic, Item, Located, Location, Recorded, SessionSeen, Unfinished
from ._lines import json_lines
from ._registry import head_objects

__all__ = ["DONE_MARKS", "OPEN_CALLS", "PENDING_REQUESTS", "AcpReader", "reminder_notification"]

OPEN_CALLS: Final = 4096
DONE_MARKS: Final = 4096
PENDING_REQUESTS: Final = 4096

_STATUS_SIGNALS = {
    "tool_call": {
        None: Signal.ANNOUNCE,
        "pending": Signal.ANNOUNCE,
        "in_progress": Signal.ANNOUNCE,
        "completed": Signal.ANNOUNCE_FINISHED,
        "failed": Signal.ANNOUNCE_FINISHED,
    },
    "tool_call_update": {
        None: Signal.PROGRESS,
        "pending": Signal.PENDING,
        "in_progress": Signal.PROGRESS,
        "completed": Signal.COMPLETE,
        "failed": Signal.FAIL,
    },
}
_REJECT_KINDS = frozenset({"reject_once", "reject_always"})
_ID_NAME = re.compile(r"(.+)-\d+")
# How many of an IDE log's first lines sniffing looks at for an AcpTransport line.
_SNIFFED_LOG_LINES = 50
_ACP_METHOD = re.compile(rb'"method" ?: ?"(initialize|session/)')
# Typed fields of a tool call frame: name -> (accepted type, its name for a diagnostic).
_FIELD_TYPES: Mapping[str, tuple[type, str]] = {
    "title": (str, "a string"),
    "kind": (str, "a string"),
    "name": (str, "a string"),
    "locations": (list, "an array"),
    "content": (list, "an array"),
    "_meta": (dict, "an object"),
}


def reminder_notification(session_id: str, reminder: Reminder) -> dict[str, object]:
    """Return the ``session/update`` notification that carries ``reminder`` into session
    ``session_id``: a ``user_message_chunk`` whose ``_meta.repeatGuard`` says it is the
    guard's (source, tool, count, form), so a replay never takes it for a prompt."""
    label = {
        "source": reminder.source,
        "tool": reminder.tool,
        "count": reminder.count,
        "form": reminder.form,
    }
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session_id,
            "update": {
                "sessionUpdate": "user_message_chunk",
                "content": {"type": "text", "text": reminder.text},
                "_meta": {"repeatGuard": label},
            },
        },
    }


@dataclass(slots=True)
class _Call:
    """An open call: where it opened, its phase, and the fields its identity needs."""

    line: int
    phase: Phase = Phase.NEW
    fields: dict[str, object] = field(default_factory=dict)
    raw_input: object = None


@dataclass(frozen=True, slots=True)
class _Pending:
    """A request the reader waits to see answered."""

    method: str
    session: str
    call_id: str = ""
    rejecting: frozenset[str] = frozenset()


_CallKey = tuple[str, str]


def tool_name(call_id: str, fields: Mapping[str, object]) -> str:
    """The tool's name: ``name``, else ``_meta.claudeCode.toolName``, else the ``<name>`` of
    an id ``<name>-<digits>``, else ``kind``, else ``title``, else ``unknown``."""
    name = fields.get("name")
    if isinstance(name, str) and name:
        return name
    meta = fields.get("_meta")
    claude = meta.get("claudeCode") if isinstance(meta, dict) else None
    named = claude.get("toolName") if isinstance(claude, dict) else None
    if isinstance(named, str) and named:
        return named
    match = _ID_NAME.fullmatch(call_id)
    if match is not None:
        return match.group(1)
    for key in ("kind", "title"):
        value = fields.get(key)
        if isinstance(value, str) and value:
            return value
    return "unknown"


def _is_text_in(value: object, texts: frozenset[str]) -> bool:
    """Whether ``value`` is one of ``texts`` (a JSON value may be unhashable: never hash it)."""
    return isinstance(value, str) and value in texts


def _frame_problem(frame: Mapping[str, object], what: str) -> str | None:
    call_id = frame.get("toolCallId")
    if not isinstance(call_id, str) or not call_id:
        return f"{what}: toolCallId must be a non-empty string"
    for name, (kind, kind_name) in _FIELD_TYPES.items():
        value = frame.get(name)
        if value is not None and not isinstance(value, kind):
            return f"{what}: {name} must be {kind_name}"
    status = frame.get("status")
    if status is not None and not (
        isinstance(status, str) and status in _STATUS_SIGNALS["tool_call"]
    ):
        return f"{what}: unknown status {str(status)[:40]!r}"
    return None


class _AcpFile:
    """The state of one file being read. Private; one per ``read``."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.line = 0
        self.timestamp: str | None = None
        self.sessions: set[str] = set()
        self.loading: set[str] = set()
        self.open: dict[_CallKey, _Call] = {}
        self.done: dict[_CallKey, None] = {}
        self.pending: dict[tuple[Direction, Ident], _Pending] = {}
        # The IDE log line being decoded (its number and parts), and the first line and
        # count of the log lines that carried no ACP message.
        self.logged: tuple[int, LogLine] | None = None
        self.other_log_lines: tuple[int, int] | None = None

    # -- lines ---------------------------------------------------------------------------

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        for decoded in json_lines(self._unlogged(lines), self.file):
            if isinstance(decoded, Diagnostic):
                self.line = decoded.line
                yield decoded
                continue
            self.line, value = decoded
            logged = self.logged
            if logged is not None and logged[0] == self.line:
                value = {"dir": logged[1].direction, "ts": logged[1].timestamp, "msg": value}
            ts = value.get("ts") if isinstance(value, dict) and is_record(value) else None
            self.timestamp = ts if isinstance(ts, str) else None
            message = decode_message(value)
            if isinstance(message, str):
                yield self._error(message)
            elif isinstance(message, Request):
                yield from self._on_request(message)
            else:
                yield from self._on_response(message)
        for key in list(self.open):
            yield from self._signal(key, Signal.TURN_END, None)
        if self.other_log_lines:
            first, count = self.other_log_lines
            yield Diagnostic(
                self.file,
                first,
                f"{count} log line{'s' * (count > 1)} carrying no ACP message skipped, "
                "the first on this line",
                "note",
            )

    def _unlogged(self, lines: Iterable[bytes]) -> Iterator[bytes]:
        """The lines, each IDE log line replaced by the JSON text it carries (its direction
        and time kept in ``logged`` until the line is decoded) or, for another logger's
        line, by an empty line, which decodes to nothing."""
        for number, raw in enumerate(lines, start=1):
            if raw[:1].isdigit():
                logged = log_line(raw)
                if isinstance(logged, LogLine):
                    self.logged = (number, logged)
                    yield logged.payload
                    continue
                if logged is not None:
                    first, count = self.other_log_lines or (number, 0)
                    self.other_log_lines = (first, count + 1)
                    yield b""
                    continue
            yield raw

    def _error(self, message: str) -> Diagnostic:
        return Diagnostic(self.file, self.line, message)

    def _where(self, session: str, line: int | None = None) -> Location:
        return Location(self.file, self.line if line is None else line, session)

    def _session(self, params: Mapping[str, object], what: str) -> Iterator[Item | str]:
        """Yield the session's ``SessionSeen`` when new, then its id; or a diagnostic."""
        session = params.get("sessionId")
        if not isinstance(session, str) or not session:
            yield self._error(f"{what}: sessionId must be a non-empty string")
            return
        if session not in self.sessions:
            self.sessions.add(session)
            yield SessionSeen(self._where(session))
        yield session

    # -- requests and notifications ------------------------------------------------------

    def _on_request(self, request: Request) -> Iterator[Item]:
        handler = _HANDLERS.get(request.method)
        if handler is None:
            return
        session: str | None = None
        for item in self._session(request.params, request.method):
            if isinstance(item, str):
                session = item
            else:
                yield item
        if session is not None:
            yield from handler(self, request, session)

    def _remember(self, request: Request, asked_by: Direction, pending: _Pending) -> None:
        if request.ident is None:
            return
        key = (request.direction or asked_by, request.ident)
        self.pending.pop(key, None)
        self.pending[key] = pending
        if len(self.pending) > PENDING_REQUESTS:
            del self.pending[next(iter(self.pending))]

    def _on_prompt(self, request: Request, session: str) -> Iterator[Item]:
        self.loading.discard(session)
        yield from self._end_turn(session)
        self._remember(request, "c2a", _Pending("session/prompt", session))
        yield Located(
            self._where(session), PromptSubmitted(f"session:{session}"), timestamp=self.timestamp
        )

    def _on_load(self, request: Request, session: str) -> Iterator[Item]:
        self.loading.add(session)
        self._remember(request, "c2a", _Pending("session/load", session))
        return iter(())

    def _on_permission(self, request: Request, session: str) -> Iterator[Item]:
        tool_call = request.params.get("toolCall")
        if not isinstance(tool_call, dict):
            yield self._error("session/request_permission: toolCall must be an object")
            return
        problem = _frame_problem(tool_call, "session/request_permission toolCall")
        options = request.params.get("options", [])
        if not isinstance(options, list):
            problem = problem or "session/request_permission: options must be an array"
            options = []
        if problem is not None:
            yield self._error(problem)
            return
        rejecting = frozenset(
            option["optionId"]
            for option in options
            if isinstance(option, dict)
            and _is_text_in(option.get("kind"), _REJECT_KINDS)
            and isinstance(option.get("optionId"), str)
        )
        call_id: str = tool_call["toolCallId"]
        pending = _Pending("session/request_permission", session, call_id, rejecting)
        self._remember(request, "a2c", pending)
        yield from self._frame(session, tool_call, Signal.ASK)

    def _on_update(self, request: Request, session: str) -> Iterator[Item]:
        update = request.params.get("update")
        if not isinstance(update, dict):
            yield self._error("session/update: update must be an object")
            return
        kind = update.get("sessionUpdate")
        meta = update.get("_meta")
        label = meta.get("repeatGuard") if isinstance(meta, dict) else None
        if isinstance(label, dict):
            yield self._on_recorded(session, label)
        elif isinstance(kind, str) and kind in _STATUS_SIGNALS:
            problem = _frame_problem(update, kind)
            if problem is not None:
                yield self._error(problem)
                return
            yield from self._frame(session, update, _STATUS_SIGNALS[kind][update.get("status")])

    def _on_recorded(self, session: str, label: Mapping[str, object]) -> Item:
        tool, count, form = label.get("tool"), label.get("count"), label.get("form")
        if (
            isinstance(tool, str)
            and isinstance(count, int)
            and not isinstance(count, bool)
            and isinstance(form, str)
        ):
            return Recorded(self._where(session), tool, count, form)
        return self._error("a repeatGuard reminder without a string tool, integer count and form")

    # -- responses -----------------------------------------------------------------------

    def _on_response(self, response: Response) -> Iterator[Item]:
        result = response.result
        if response.direction is None:
            # A raw line carries no direction: a permission answer has an outcome, and every
            # other request the reader waits for is the client's.
            asked_by: Direction = (
                "a2c" if isinstance(result, dict) and "outcome" in result else "c2a"
            )
        else:
            asked_by = "a2c" if response.direction == "c2a" else "c2a"
        pending = self.pending.pop((asked_by, response.ident), None)
        if pending is None:
            return
        if pending.method == "session/load":
            self.loading.discard(pending.session)
        elif pending.method == "session/prompt":
            yield from self._end_turn(pending.session)
        else:
            yield from self._on_permission_answer(pending, result)

    def _on_permission_answer(self, pending: _Pending, result: object) -> Iterator[Item]:
        outcome = result.get("outcome") if isinstance(result, dict) else None
        chosen = outcome.get("outcome") if isinstance(outcome, dict) else None
        if chosen == "cancelled":
            signal = Signal.CANCEL
        elif chosen == "selected" and isinstance(outcome, dict):
            rejected = _is_text_in(outcome.get("optionId"), pending.rejecting)
            signal = Signal.REJECT if rejected else Signal.ALLOW
        else:
            yield self._error("permission response without a selected or cancelled outcome")
            return
        yield from self._signal((pending.session, pending.call_id), signal, None)

    # -- calls ---------------------------------------------------------------------------

    def _end_turn(self, session: str) -> Iterator[Item]:
        for key in [key for key in self.open if key[0] == session]:
            yield from self._signal(key, Signal.TURN_END, None)

    def _frame(self, session: str, frame: Mapping[str, object], signal: Signal) -> Iterator[Item]:
        call_id = frame["toolCallId"]
        assert isinstance(call_id, str)  # checked by _frame_problem
        if session in self.loading:
            signal = Signal.HISTORY
        yield from self._signal((session, call_id), signal, frame)

    def _signal(
        self, key: _CallKey, signal: Signal, frame: Mapping[str, object] | None
    ) -> Iterator[Item]:
        if key in self.done:
            return
        call = self.open.get(key)
        if call is None:
            call = _Call(self.line)
        phase, effect = step(call.phase, signal)
        if frame is not None:
            _absorb(call, frame)
        if phase is Phase.DONE:
            self.open.pop(key, None)
            self._mark_done(key)
        elif phase is not Phase.NEW:
            call.phase = phase
            if key not in self.open:
                self.open[key] = call
                if len(self.open) > OPEN_CALLS:
                    yield from self._evict_oldest()
        yield from self._carry_out(key, call, effect)

    def _evict_oldest(self) -> Iterator[Item]:
        """Too many calls are open: the oldest one is reported unfinished and forgotten."""
        key = next(iter(self.open))
        call = self.open.pop(key)
        self._mark_done(key)
        yield Unfinished(self._where(key[0], call.line), tool_name(key[1], call.fields))

    def _mark_done(self, key: _CallKey) -> None:
        self.done[key] = None
        if len(self.done) > DONE_MARKS:
            del self.done[next(iter(self.done))]

    def _carry_out(self, key: _CallKey, call: _Call, effect: Effect) -> Iterator[Item]:
        session, call_id = key
        if effect is Effect.NOTE or effect is Effect.COUNT_NOTED:
            yield Diagnostic(
                self.file,
                self.line,
                f"tool_call_update for toolCallId {call_id!r} that was never announced "
                "(the recording may start mid-way): taken up here",
                "note",
            )
        if effect is Effect.UNFINISHED:
            yield Unfinished(self._where(session, call.line), tool_name(call_id, call.fields))
        elif effect in (Effect.COUNT, Effect.COUNT_NOTED, Effect.DENY):
            yield self._finished(session, call_id, call, denied=effect is Effect.DENY)

    def _finished(self, session: str, call_id: str, call: _Call, *, denied: bool) -> Located:
        arguments = call.raw_input
        if arguments is None:
            # Weak identity: without rawInput, what the call showed stands in for its input.
            arguments = {k: call.fields.get(k) for k in ("title", "kind", "locations", "content")}
        event = ToolCallFinished(
            f"session:{session}", tool_name(call_id, call.fields), arguments, denied
        )
        return Located(self._where(session), event, timestamp=self.timestamp)


_HANDLERS = {
    "session/prompt": _AcpFile._on_prompt,
    "session/load": _AcpFile._on_load,
    "session/request_permission": _AcpFile._on_permission,
    "session/update": _AcpFile._on_update,
}


def _absorb(call: _Call, frame: Mapping[str, object]) -> None:
    """Merge a frame's fields into ``call``: later values win, an empty ``rawInput`` never
    does (claude-code-acp announces each call first with ``rawInput: {}``)."""
    fields = call.fields
    for name in _FIELD_TYPES:
        value = frame.get(name)
        if value is not None:
            fields[name] = value
    raw_input = frame.get("rawInput")
    if raw_input not in (None, {}, "", []):
        call.raw_input = raw_input


def _is_acp_message(value: Mapping[str, object]) -> bool:
    message = value.get("msg") if is_record(value) else value
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    method = message.get("method")
    return isinstance(method, str) and (method == "initialize" or method.startswith("session/"))


def _is_acp_log(head: bytes) -> bool:
    for raw in head.split(b"\n")[:-1][:_SNIFFED_LOG_LINES]:
        logged = log_line(raw)
        if isinstance(logged, LogLine):
            try:
                message = json.loads(logged.payload)
            except (ValueError, RecursionError):
                continue
            if isinstance(message, dict) and _is_acp_message(message):
                return True
    return False


class AcpReader:
    """Reads ACP traffic: raw JSON-RPC lines, ``{"dir", "msg"}`` recorder records, or an
    IDE's log with ``AcpTransport - IN|OUT:`` lines."""

    name: Final = "acp"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` (the file's first bytes) looks like ACP traffic: it opens with a
        JSON object, and one of its first lines is an ACP message (``initialize`` or a
        ``session/`` method), raw or in a record. Source files and notes that quote ACP
        traffic open otherwise, so a directory walk passes them by. An IDE's log counts when
        one of its first lines is an ``AcpTransport`` line carrying an ACP message."""
        if head[:1].isdigit():
            return _is_acp_log(head)
        if head.lstrip()[:1] != b"{":
            return False
        objects = head_objects(head)
        if not objects:  # a first line longer than the head: its opening must do
            opening = head[:4096]
            return b'"jsonrpc"' in opening and _ACP_METHOD.search(opening) is not None
        return any(_is_acp_message(value) for value in objects)

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one transcript's lines; never raises for bad input."""
        return _AcpFile(file).read(lines)

    def reminder_line(self, line: bytes, session: str, reminder: Reminder) -> bytes:
        """The line to write after ``line`` (where ``reminder`` fired) when annotating: the
        reminder's notification, in a record when ``line`` is one."""
        message = reminder_notification(session, reminder)
        logged = log_line(line)
        if isinstance(logged, LogLine):  # in the log's form, as a message the IDE received
            return logged.prefix + b"IN: " + json.dumps(message).encode("ascii") + b"\n"
        try:
            record = is_record(json.loads(line))
        except (ValueError, RecursionError):
            record = False
        wrapped = {"dir": "a2c", "msg": message} if record else message
        return json.dumps(wrapped).encode("ascii") + b"\n"
