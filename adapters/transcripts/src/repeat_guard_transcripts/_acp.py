"""The ACP reader: Agent Client Protocol traffic to located guard events.

One ACP session is one agent (``session:<sessionId>``); the client's ``session/prompt``
resets it. Tool calls are keyed by (sessionId, toolCallId) and follow the table in
``_acp_lifecycle``; a call's identity for the guard is (tool name, arguments), never its id.
Its result is its latest ``rawOutput`` (what the tool returned), else its latest ``content``
(what the client was shown), else unknown; it failed when its latest ``status`` is
``failed`` (a refused call is denied instead).

What is kept while reading, and why it stays small:

* per open call: the line it opened on, its phase, the fields its identity needs (tool
  name sources, ``rawInput``, or title, kind, locations and content when there is no
  ``rawInput``) and its latest ``rawOutput``; at most ``OPEN_CALLS`` open calls (the oldest
  is reported unfinished);
* per finished call: a mark (session and id), so a late update is not a second call; the
  most recent ``DONE_MARKS`` are kept;
* per unanswered request the reader waits for (prompt, load, permission): its method,
  session, call id and rejecting options; the most recent ``PENDING_REQUESTS`` are kept;
* per session: whether a ``session/load`` is replaying its history.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from repeat_guard import PromptSubmitted, Reminder, ToolCallFinished

from ._acp_lifecycle import TRANSITIONS, Effect, Phase, Signal
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
from ._calls import DONE_MARKS, OPEN_CALLS, RecentMarks
from ._items import Diagnostic, Item, Located, Location, Recorded, SessionSeen, Unfinished
from ._lines import json_lines
from ._registry import head_objects

__all__ = ["PENDING_REQUESTS", "AcpReader", "reminder_notification"]

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
_STATUSES = frozenset(status for status in _STATUS_SIGNALS["tool_call"] if status is not None)
# The members the per-frame path compares with, bound once: reading a member off its Enum
# class costs three times a global's lookup (Python 3.11).
_NEW, _DONE = Phase.NEW, Phase.DONE
_NO_EFFECT, _NOTE, _COUNT_NOTED, _DENY, _UNFINISHED = (
    Effect.NONE,
    Effect.NOTE,
    Effect.COUNT_NOTED,
    Effect.DENY,
    Effect.UNFINISHED,
)
# A ``rawInput`` that tells nothing (never changed: compared with, by equality).
_EMPTY_INPUTS: tuple[object, ...] = (None, {}, "", [])
_REJECT_KINDS = frozenset({"reject_once", "reject_always"})
_ID_NAME = re.compile(r"(.+)-\d+")
# How many of an IDE log's first lines sniffing looks at for an AcpTransport line.
_SNIFFED_LOG_LINES = 50
_ACP_METHOD = re.compile(rb'"method" ?: ?"(initialize|session/)')
# Typed fields of a tool call frame: its name, accepted type, and the type's name for a
# diagnostic.
_FIELD_TYPES: tuple[tuple[str, type, str], ...] = (
    ("title", str, "a string"),
    ("kind", str, "a string"),
    ("name", str, "a string"),
    ("locations", list, "an array"),
    ("content", list, "an array"),
    ("_meta", dict, "an object"),
)


def reminder_notification(session_id: str, reminder: Reminder) -> dict[str, object]:
    """Return the ``session/update`` notification that carries ``reminder`` into session
    ``session_id``: a ``user_message_chunk`` whose ``_meta.repeatGuard`` says it is the
    guard's (source, tool, count, form), so a replay never takes it for a prompt.

    Not the core's ``reminder_to_json``: the chunk's text is the reminder's text and its
    session the agent, so the label names only the rest, and the text is written once."""
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


class _Call:
    """An open call: where it opened, its phase, and the fields its identity and its result
    need.

    A plain slotted class: one is built per call, and a dataclass's generated ``__init__``
    with a default factory costs twice as much."""

    __slots__ = ("fields", "line", "phase", "raw_input")

    def __init__(self, line: int) -> None:
        self.line = line
        self.phase = _NEW
        self.fields: dict[str, object] = {}
        self.raw_input: object = None


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
    # Most ids hold no dash: they skip the regular expression.
    match = _ID_NAME.fullmatch(call_id) if "-" in call_id else None
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


def _frame_fields(frame: Mapping[str, object], what: str) -> dict[str, object] | str:
    """The typed fields ``frame`` sets (those not null) and its ``rawOutput`` (any JSON value,
    the call's result) when not null, or what is wrong with the frame.

    One pass both checks the fields and collects them, so a call absorbs a frame without
    reading it again."""
    call_id = frame.get("toolCallId")
    if not isinstance(call_id, str) or not call_id:
        return f"{what}: toolCallId must be a non-empty string"
    fields: dict[str, object] = {}
    for name, kind, kind_name in _FIELD_TYPES:
        value = frame.get(name)
        if value is not None:
            if not isinstance(value, kind):
                return f"{what}: {name} must be {kind_name}"
            fields[name] = value
    raw_output = frame.get("rawOutput")
    if raw_output is not None:
        fields["rawOutput"] = raw_output
    status = frame.get("status")
    if status is not None:
        if not _is_text_in(status, _STATUSES):
            return f"{what}: unknown status {str(status)[:40]!r}"
        fields["status"] = status  # the last one says whether the call failed
    return fields


_NOT_AN_ARRAY = "session/request_permission: options must be an array"


class _AcpFile:
    """The state of one file being read. Private; one per ``read``.

    Each line's items are collected in one list rather than yielded through a generator per
    layer: an ACP line is small, and a generator per layer per line cost more than parsing
    the line."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.line = 0
        self.timestamp: str | None = None
        self.sessions: set[str] = set()
        self.loading: set[str] = set()
        self.open: dict[_CallKey, _Call] = {}
        self.done: RecentMarks[_CallKey] = RecentMarks(DONE_MARKS)  # finished calls
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
            ts = value.get("ts") if is_record(value) else None
            self.timestamp = ts if type(ts) is str else None
            message = decode_message(value)
            if isinstance(message, str):
                yield self._error(message)
                continue
            items: list[Item] = []
            if isinstance(message, Request):
                self._on_request(items, message)
            else:
                self._on_response(items, message)
            if items:
                yield from items
        yield from self._at_end()

    def _at_end(self) -> list[Item]:
        """The file ended: its open calls never finished, and its other loggers' lines are
        reported in one note."""
        items: list[Item] = []
        for key in list(self.open):
            self._signal(items, key, Signal.TURN_END)
        if self.other_log_lines:
            first, count = self.other_log_lines
            items.append(
                Diagnostic(
                    self.file,
                    first,
                    f"{count} log line{'s' * (count > 1)} carrying no ACP message skipped, "
                    "the first on this line",
                    "note",
                )
            )
        return items

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

    # -- requests and notifications ------------------------------------------------------

    def _on_request(self, items: list[Item], request: Request) -> None:
        method = request.method
        handler = _HANDLERS.get(method)
        if handler is None:
            return
        session = request.params.get("sessionId")
        if not isinstance(session, str) or not session:
            items.append(self._error(f"{method}: sessionId must be a non-empty string"))
            return
        if session not in self.sessions:
            self.sessions.add(session)
            items.append(SessionSeen(self._where(session)))
        handler(self, items, request, session)

    def _remember(self, request: Request, asked_by: Direction, pending: _Pending) -> None:
        if request.ident is None:
            return
        key = (request.direction or asked_by, request.ident)
        self.pending.pop(key, None)
        self.pending[key] = pending
        if len(self.pending) > PENDING_REQUESTS:
            del self.pending[next(iter(self.pending))]

    def _on_prompt(self, items: list[Item], request: Request, session: str) -> None:
        self.loading.discard(session)
        self._end_turn(items, session)
        self._remember(request, "c2a", _Pending("session/prompt", session))
        items.append(
            Located(
                self._where(session),
                PromptSubmitted(f"session:{session}"),
                timestamp=self.timestamp,
            )
        )

    def _on_load(self, items: list[Item], request: Request, session: str) -> None:
        self.loading.add(session)
        self._remember(request, "c2a", _Pending("session/load", session))

    def _on_permission(self, items: list[Item], request: Request, session: str) -> None:
        tool_call = request.params.get("toolCall")
        if not isinstance(tool_call, dict):
            items.append(self._error("session/request_permission: toolCall must be an object"))
            return
        fields = _frame_fields(tool_call, "session/request_permission toolCall")
        options = request.params.get("options", [])
        if not isinstance(options, list):
            fields = fields if isinstance(fields, str) else _NOT_AN_ARRAY
            options = []
        if isinstance(fields, str):
            items.append(self._error(fields))
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
        self._frame(items, session, tool_call, fields, Signal.ASK)

    def _on_update(self, items: list[Item], request: Request, session: str) -> None:
        update = request.params.get("update")
        if not isinstance(update, dict):
            items.append(self._error("session/update: update must be an object"))
            return
        kind = update.get("sessionUpdate")
        meta = update.get("_meta")
        label = meta.get("repeatGuard") if isinstance(meta, dict) else None
        if isinstance(label, dict):
            items.append(self._on_recorded(session, label))
            return
        if not isinstance(kind, str):
            return
        signals = _STATUS_SIGNALS.get(kind)
        if signals is None:
            return
        fields = _frame_fields(update, kind)
        if isinstance(fields, str):
            items.append(self._error(fields))
            return
        self._frame(items, session, update, fields, signals[update.get("status")])

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

    def _on_response(self, items: list[Item], response: Response) -> None:
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
            self._end_turn(items, pending.session)
        else:
            self._on_permission_answer(items, pending, result)

    def _on_permission_answer(self, items: list[Item], pending: _Pending, result: object) -> None:
        outcome = result.get("outcome") if isinstance(result, dict) else None
        chosen = outcome.get("outcome") if isinstance(outcome, dict) else None
        if chosen == "cancelled":
            signal = Signal.CANCEL
        elif chosen == "selected" and isinstance(outcome, dict):
            rejected = _is_text_in(outcome.get("optionId"), pending.rejecting)
            signal = Signal.REJECT if rejected else Signal.ALLOW
        else:
            items.append(self._error("permission response without a selected or cancelled outcome"))
            return
        self._signal(items, (pending.session, pending.call_id), signal)

    # -- calls ---------------------------------------------------------------------------

    def _end_turn(self, items: list[Item], session: str) -> None:
        for key in [key for key in self.open if key[0] == session]:
            self._signal(items, key, Signal.TURN_END)

    def _frame(
        self,
        items: list[Item],
        session: str,
        frame: Mapping[str, object],
        fields: dict[str, object],
        signal: Signal,
    ) -> None:
        call_id = frame["toolCallId"]
        assert isinstance(call_id, str)  # checked by _frame_fields
        if session in self.loading:
            signal = Signal.HISTORY
        self._signal(items, (session, call_id), signal, fields, frame.get("rawInput"))

    def _signal(
        self,
        items: list[Item],
        key: _CallKey,
        signal: Signal,
        fields: dict[str, object] | None = None,
        raw_input: object = None,
    ) -> None:
        """Apply ``signal`` to the call ``key``, absorbing its frame's ``fields`` and
        ``raw_input``: later values win, an empty ``rawInput`` never does (claude-code-acp
        announces each call first with ``rawInput: {}``)."""
        if key in self.done:
            return
        call = self.open.get(key) or _Call(self.line)
        phase, effect = TRANSITIONS[call.phase][signal]
        if fields is not None:
            call.fields.update(fields)
            if raw_input not in _EMPTY_INPUTS:
                call.raw_input = raw_input
        if phase is _DONE:
            self.open.pop(key, None)
            self._mark_done(key)
        elif phase is not _NEW:
            call.phase = phase
            if key not in self.open:
                self._open(items, key, call)
        if effect is not _NO_EFFECT:
            self._carry_out(items, key, call, effect)

    def _open(self, items: list[Item], key: _CallKey, call: _Call) -> None:
        """Hold ``call`` open; when too many are, the oldest one is reported unfinished and
        forgotten."""
        self.open[key] = call
        if len(self.open) <= OPEN_CALLS:
            return
        key = next(iter(self.open))
        call = self.open.pop(key)
        self._mark_done(key)
        items.append(Unfinished(self._where(key[0], call.line), tool_name(key[1], call.fields)))

    def _mark_done(self, key: _CallKey) -> None:
        # Only a key not yet done is marked (``_signal`` returns early for a done key, and an
        # open key is never done).
        self.done.mark(key)

    def _carry_out(self, items: list[Item], key: _CallKey, call: _Call, effect: Effect) -> None:
        session, call_id = key
        if effect is _NOTE or effect is _COUNT_NOTED:
            items.append(
                Diagnostic(
                    self.file,
                    self.line,
                    f"tool_call_update for toolCallId {call_id!r} that was never announced "
                    "(the recording may start mid-way): taken up here",
                    "note",
                )
            )
        if effect is _UNFINISHED:
            items.append(
                Unfinished(self._where(session, call.line), tool_name(call_id, call.fields))
            )
        elif effect is not _NOTE:
            items.append(self._finished(session, call_id, call, denied=effect is _DENY))

    def _finished(self, session: str, call_id: str, call: _Call, *, denied: bool) -> Located:
        arguments = call.raw_input
        if arguments is None:
            # Weak identity: without rawInput, what the call showed stands in for its input.
            arguments = {k: call.fields.get(k) for k in ("title", "kind", "locations", "content")}
        result = call.fields.get("rawOutput")
        if result is None:
            result = call.fields.get("content")
        failed = not denied and call.fields.get("status") == "failed"
        event = ToolCallFinished(
            f"session:{session}", tool_name(call_id, call.fields), arguments, denied, result, failed
        )
        return Located(Location(self.file, self.line, session), event, None, None, self.timestamp)


_Handler = Callable[[_AcpFile, list[Item], Request, str], None]
_HANDLERS: Mapping[str, _Handler] = {
    "session/prompt": _AcpFile._on_prompt,
    "session/load": _AcpFile._on_load,
    "session/request_permission": _AcpFile._on_permission,
    "session/update": _AcpFile._on_update,
}


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
    description: Final = 'Agent Client Protocol traffic: JSON-RPC lines or {"dir", "msg"} records'

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
