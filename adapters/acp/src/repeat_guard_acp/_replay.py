"""Replay ACP traffic through the guard: which calls an agent made, and where the guard fires.

One ACP session is one agent for the core (agent id ``session:<sessionId>``). Tool calls are
merged from ``tool_call``, ``tool_call_update`` and ``session/request_permission``'s
``toolCall`` by (sessionId, toolCallId); a call reaches the core once, when its merged status
first becomes ``completed`` or ``failed``, or when the user rejects its permission request
(``denied=True``; its later ``failed`` update is not a second call). Streaming: memory holds
the sessions and the calls still open, never the transcript.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from repeat_guard import (
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    reduce,
)

from ._model import (
    Diagnostic,
    FileSummary,
    RecordedReminder,
    ReplayItem,
    ReplayReminder,
    SessionTotals,
)
from ._schema import CLIENT_SIDE_METHODS, KNOWN_METHODS, KNOWN_UPDATES, validation_error

__all__ = ["MAX_LINE_BYTES", "Replayer", "replay_transcript"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longer lines are reported and skipped rather than parsed."""

_FINISHED = frozenset({"completed", "failed"})
_REJECTS = frozenset({"reject_once", "reject_always"})
_ID_NAME = re.compile(r"(.+)-\d+")
_MERGED = ("title", "kind", "status", "locations", "name")


@dataclass(slots=True)
class _Call:
    """One tool call as merged so far (mutable, private to the replayer)."""

    fields: dict[str, Any] = field(default_factory=dict)
    raw_input: object = None
    done: bool = False
    denied: bool = False


@dataclass(slots=True)
class _Line:
    """What one input line produced: items to report, and how an annotator should treat it."""

    items: list[ReplayItem] = field(default_factory=list)
    record_form: bool = False
    recorded: bool = False


def tool_name(call_id: str, fields: dict[str, Any]) -> str:
    """The tool's name: ``name``, else ``_meta.claudeCode.toolName``, else ``<name>-<digits>``
    in the id, else ``kind``, else ``title``."""
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


class Replayer:
    """Feeds one transcript's lines, in order, to the guard. Not thread-safe; one per file."""

    def __init__(self, config: GuardConfig, file: str) -> None:
        self.file = file
        self.config = config
        self.state = GuardState.initial(config)
        self.calls: dict[tuple[str, str], _Call] = {}
        self.requests: dict[tuple[str, object], tuple[str, dict[str, Any]]] = {}
        self.loading: set[str] = set()
        self.totals: dict[str, SessionTotals] = {}
        self.recorded: list[RecordedReminder] = []
        self.denied_open: dict[str, list[tuple[str, str]]] = {}
        self.record_form = False
        self.skipped: Counter[str] = Counter()
        self.diagnostics = 0
        self.lines = 0

    # -- one line ------------------------------------------------------------------------

    def feed(self, raw: bytes, number: int, *, last: bool = False) -> _Line:
        """Process input line ``number`` and return what it produced."""
        self.lines = number
        out = _Line()
        if len(raw) > MAX_LINE_BYTES:
            self._diagnose(out, number, f"line of {len(raw)} bytes is longer than {MAX_LINE_BYTES}")
            return out
        if not raw.strip():
            return out
        try:
            decoded = json.loads(raw)
        except UnicodeDecodeError as error:
            self._diagnose(out, number, f"not UTF-8 ({error.reason} at byte {error.start})")
            return out
        except RecursionError:
            self._diagnose(out, number, "JSON nested too deeply to parse")
            return out
        except ValueError as error:
            truncated = last and not raw.endswith(b"\n")
            what = "truncated last line" if truncated else "invalid JSON"
            self._diagnose(out, number, f"{what}: {error}")
            return out
        self._dispatch(decoded, number, out)
        return out

    def _diagnose(self, out: _Line, number: int, message: str) -> None:
        self.diagnostics += 1
        out.items.append(Diagnostic(self.file, number, message))

    def _dispatch(self, decoded: object, number: int, out: _Line) -> None:
        if not isinstance(decoded, dict):
            self._diagnose(out, number, f"expected a JSON object, got {type(decoded).__name__}")
            return
        direction: str | None = None
        message: object = decoded
        if "msg" in decoded and "jsonrpc" not in decoded:
            direction = decoded.get("dir")
            message = decoded["msg"]
            out.record_form = self.record_form = True
            if direction not in ("c2a", "a2c"):
                self._diagnose(
                    out, number, f'record "dir" must be "c2a" or "a2c", got {direction!r}'
                )
                return
        if not isinstance(message, dict):
            self._diagnose(out, number, "the JSON-RPC message is not an object")
            return
        method = message.get("method")
        if isinstance(method, str):
            self._on_method(method, message, direction, number, out)
        elif "id" in message and ("result" in message or "error" in message):
            self._on_response(message, direction, number, out)
        else:
            self._diagnose(out, number, "neither a request, a notification nor a response")

    # -- requests and notifications ------------------------------------------------------

    def _on_method(
        self, method: str, message: dict[str, Any], direction: str | None, number: int, out: _Line
    ) -> None:
        if method not in KNOWN_METHODS:
            self.skipped[f"method {method}"] += 1
            return
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if direction is None:
            direction = "a2c" if method in CLIENT_SIDE_METHODS else "c2a"
        if "id" in message:
            self.requests[(direction, _hashable(message["id"]))] = (method, params)
        handler = _HANDLERS.get(method)
        if handler is not None:
            handler(self, params, number, out)

    def _session_of(self, params: dict[str, Any], number: int, out: _Line) -> str | None:
        session = params.get("sessionId")
        if isinstance(session, str) and session:
            return session
        self._diagnose(out, number, "message has no sessionId")
        return None

    def _on_prompt(self, params: dict[str, Any], number: int, out: _Line) -> None:
        session = self._session_of(params, number, out)
        if session is not None:
            self._totals(session)
            self.state, _ = reduce(self.state, PromptSubmitted(f"session:{session}"))

    def _on_load(self, params: dict[str, Any], number: int, out: _Line) -> None:
        session = self._session_of(params, number, out)
        if session is not None:
            self.loading.add(session)

    def _on_permission(self, params: dict[str, Any], number: int, out: _Line) -> None:
        error = validation_error("session/request_permission", params)
        if error is not None:
            self._diagnose(out, number, f"invalid session/request_permission: {error}")
            return
        session = params["sessionId"]
        tool_call = params["toolCall"]
        self._merge(session, tool_call["toolCallId"], tool_call, number, out, update=None)

    def _on_update(self, params: dict[str, Any], number: int, out: _Line) -> None:
        session = self._session_of(params, number, out)
        update = params.get("update")
        if session is None:
            return
        if not isinstance(update, dict):
            self._diagnose(out, number, "session/update without an update object")
            return
        kind = update.get("sessionUpdate")
        if kind not in KNOWN_UPDATES:
            self.skipped[f"update {kind}"] += 1
            return
        if session in self.loading:
            self.skipped["session/load history"] += 1
            return
        meta = update.get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get("repeatGuard"), dict):
            self._on_recorded(session, meta["repeatGuard"], number, out)
        elif kind in ("tool_call", "tool_call_update"):
            error = validation_error(kind, update)
            if error is not None:
                self._diagnose(out, number, f"invalid {kind}: {error}")
                return
            self._merge(session, update["toolCallId"], update, number, out, update=kind)

    def _on_recorded(self, session: str, label: dict[str, Any], number: int, out: _Line) -> None:
        tool, count, form = label.get("tool"), label.get("count"), label.get("form")
        if not (isinstance(tool, str) and isinstance(count, int) and isinstance(form, str)):
            self._diagnose(out, number, "a repeatGuard reminder without tool, count and form")
            return
        out.recorded = True
        self.recorded.append(RecordedReminder(self.file, number, session, tool, count, form))

    # -- responses -----------------------------------------------------------------------

    def _on_response(
        self, message: dict[str, Any], direction: str | None, number: int, out: _Line
    ) -> None:
        ident = _hashable(message["id"])
        result = message.get("result")
        if direction is None:
            # Raw lines carry no direction: a permission answer has an outcome, and every
            # other request the replay waits for is the client's.
            outcome = isinstance(result, dict) and "outcome" in result
            asked_by = "a2c" if outcome else "c2a"
        else:
            asked_by = "a2c" if direction == "c2a" else "c2a"
        request = self.requests.pop((asked_by, ident), None)
        if request is None:
            return
        method, params = request
        if method == "session/load":
            self.loading.discard(params.get("sessionId", ""))
        elif method == "session/prompt":
            self._flush_denied(params.get("sessionId"), number, out)
        elif method == "session/request_permission" and isinstance(result, dict):
            self._on_permission_outcome(params, result, number, out)

    def _on_permission_outcome(
        self, params: dict[str, Any], result: dict[str, Any], number: int, out: _Line
    ) -> None:
        outcome = result.get("outcome")
        if not isinstance(outcome, dict):
            self._diagnose(out, number, "permission response without an outcome object")
            return
        key = (params["sessionId"], params["toolCall"]["toolCallId"])
        call = self.calls.get(key)
        if call is None or call.done:
            return
        # "cancelled" means the turn was cancelled: the call stays open, and counts (not as a
        # denial) if the agent reports it finished, as agents do with a failed update.
        kinds = {o.get("optionId"): o.get("kind") for o in params.get("options", ())}
        if outcome.get("outcome") == "selected" and kinds.get(outcome.get("optionId")) in _REJECTS:
            # A rejected call finishes, denied, at the agent's failed update for it (where a
            # live guard speaks), or at the end of its turn if the agent sends none.
            call.denied = True
            self.denied_open.setdefault(key[0], []).append(key)

    # -- calls ---------------------------------------------------------------------------

    def _merge(
        self,
        session: str,
        call_id: str,
        fields: dict[str, Any],
        number: int,
        out: _Line,
        *,
        update: str | None,
    ) -> None:
        key = (session, call_id)
        call = self.calls.get(key)
        if call is None:
            if update == "tool_call_update":
                message = (
                    f"tool_call_update for unknown toolCallId {call_id!r}: taken as a new call"
                )
                self._diagnose(out, number, message)
            call = self.calls[key] = _Call()
        if call.done:
            return
        _absorb(call, fields)
        if call.fields.get("status") in _FINISHED:
            self._finish(key, call, number, out, denied=call.denied)

    def _finish(
        self, key: tuple[str, str], call: _Call, number: int, out: _Line, *, denied: bool
    ) -> None:
        call.done = True
        session, call_id = key
        tool = tool_name(call_id, call.fields)
        weak = call.raw_input is None
        arguments = call.raw_input
        if weak:
            arguments = {k: call.fields.get(k) for k in ("title", "kind", "locations")}
        agent = f"session:{session}"
        self.state, reminders = reduce(self.state, ToolCallFinished(agent, tool, arguments, denied))
        totals = self._totals(session)
        tracked = self.config.tracks(tool)
        chain = self.state.chain(agent)
        wasted = tracked and chain is not None and chain.repeats >= 2
        self.totals[session] = replace(
            totals,
            tool_calls=totals.tool_calls + 1,
            tracked_calls=totals.tracked_calls + tracked,
            wasted_calls=totals.wasted_calls + wasted,
            reminders=totals.reminders + len(reminders),
            weak_identity_calls=totals.weak_identity_calls + weak,
        )
        for reminder in reminders:
            out.items.append(ReplayReminder(self.file, number, session, reminder))
        # A finished call keeps only its done mark: a later failed update is not a second call.
        call.fields = {}
        call.raw_input = None

    def _flush_denied(self, session: object, number: int, out: _Line) -> None:
        """Finish the session's rejected calls that the agent never reported finished."""
        for key in self.denied_open.pop(session, []) if isinstance(session, str) else []:
            call = self.calls[key]
            if not call.done:
                self._finish(key, call, number, out, denied=True)

    def finish(self) -> _Line:
        """End of input: finish every rejected call still open, at the last line."""
        out = _Line(record_form=self.record_form)
        for session in list(self.denied_open):
            self._flush_denied(session, self.lines, out)
        return out

    def _totals(self, session: str) -> SessionTotals:
        totals = self.totals.get(session)
        if totals is None:
            totals = self.totals[session] = SessionTotals(session)
        return totals

    # -- end -----------------------------------------------------------------------------

    def summary(self) -> FileSummary:
        """The file's totals, over every session seen."""
        sessions = tuple(self.totals.values())
        return FileSummary(
            file=self.file,
            lines=self.lines,
            sessions=sessions,
            tool_calls=sum(s.tool_calls for s in sessions),
            tracked_calls=sum(s.tracked_calls for s in sessions),
            wasted_calls=sum(s.wasted_calls for s in sessions),
            reminders=sum(s.reminders for s in sessions),
            weak_identity_calls=sum(s.weak_identity_calls for s in sessions),
            skipped=dict(self.skipped),
            diagnostics=self.diagnostics,
            recorded=tuple(self.recorded),
        )


_HANDLERS = {
    "session/prompt": Replayer._on_prompt,
    "session/load": Replayer._on_load,
    "session/request_permission": Replayer._on_permission,
    "session/update": Replayer._on_update,
}


def _absorb(call: _Call, fields: dict[str, Any]) -> None:
    """Merge a message's fields into ``call``: later values win, empty ``rawInput`` never does."""
    for name in _MERGED:
        if fields.get(name) is not None:
            call.fields[name] = fields[name]
    if isinstance(fields.get("_meta"), dict):
        call.fields["_meta"] = fields["_meta"]
    raw_input = fields.get("rawInput")
    if raw_input not in (None, {}, "", []):
        call.raw_input = raw_input


def _hashable(ident: object) -> object:
    return (
        ident if isinstance(ident, str | int | float | None) else json.dumps(ident, sort_keys=True)
    )


def numbered(lines: Iterable[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """Yield (line number, line, is last line), one line of lookahead."""
    iterator = iter(lines)
    previous = next(iterator, None)
    number = 0
    while previous is not None:
        number += 1
        current = next(iterator, None)
        yield number, previous, current is None
        previous = current


def replay_transcript(
    lines: Iterable[bytes], config: GuardConfig, *, file: str = "<stdin>"
) -> Iterator[ReplayItem]:
    """Replay one transcript; yield reminders and diagnostics in input order, then its summary.

    ``lines`` are raw JSON-RPC messages or recorder records (``{"dir", "msg", "ts"?}``), as
    bytes, such as an open binary file. Bad lines become ``Diagnostic`` items; never raises for
    bad input.
    """
    replayer = Replayer(config, file)
    for number, raw, last in numbered(lines):
        yield from replayer.feed(raw, number, last=last).items
    yield from replayer.finish().items
    yield replayer.summary()
