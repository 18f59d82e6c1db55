"""The ``serve`` command: the guard as a JSONL sidecar for harnesses in other languages.

Protocol: every input line is answered by exactly one output line, in order, flushed at once,
so a harness may write one event and block reading its answer. An event is a JSON object:

* ``{"type": "tool_call", "agent": "a", "tool": "grep", "arguments": {...}, "denied": false}``
  (``agent`` may be ``null`` for a call outside any agent; ``denied`` and ``result``, what the
  tool returned, are optional);
* ``{"type": "tool_result", "agent": "a", "tool": "grep", "arguments": {...}, "result": ...}``
  (the result of a call reported without one: the core's ``ToolCallReturned``, whose only
  reminder is the retry window's);
* ``{"type": "prompt", "agent": "a"}``;
* ``{"type": "dispose", "agent": "a"}``.

The answer is ``{"reminders": [...]}`` (an empty list when nothing fires), each reminder with
``agent``, ``tool``, ``count``, ``form``, ``summary`` and ``text``; a line that is not such an
event (including a blank line) is answered ``{"error": "line N: ..."}`` and the sidecar goes on.

A harness that can refuse a call asks first, with the call as it would be reported but typed
``"admit"``: ``{"type": "admit", "agent": "a", "tool": "grep", "arguments": {...}}``. The
answer is the core's ``admit``, ``{"admit": true}`` or ``{"admit": false, "reason": "..."}``;
it changes nothing, and the harness then reports the call (``"denied": true`` when it refused
it), which counts like any other. A harness that asks before every call may ask and report in
one line, typed ``"attempt"``: the call is admitted or refused and counted (as denied when
refused) at once, as a hook counts a call before it runs; the answer holds both,
``{"admit": ..., "reminders": [...]}`` (and ``reason`` when refused).

State: in memory by default. Given a state file (``StoredState``), each line is one transaction
on the hook's SQLite store, the agent stored as its own session, so the chains outlive the
sidecar and the host process that started it: a resumed session keeps its chain. A store that
cannot be used answers the line with an error (the harness proceeds); a corrupt one is set
aside and started afresh, as a hook does.
Output is ASCII (``ensure_ascii``), so no locale can garble it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, BinaryIO, Protocol

from repeat_guard import (
    Deny,
    Event,
    GuardConfig,
    GuardState,
    ToolCallFinished,
    admit,
    event_from_json,
    parse_error_reason,
    reduce,
)
from repeat_guard_transcripts import LineFault, bounded_lines

from ._reminder_json import reminder_fields

if TYPE_CHECKING:
    import sqlite3

__all__ = ["ADMIT", "ATTEMPT", "AdmitQuery", "LineError", "StoredState", "parse_event", "serve"]


@dataclass(frozen=True, slots=True)
class LineError:
    """Why an input line is not an event."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class _Problem:
    message: str


def _decode(data: bytes) -> object:
    # Returns the parsed JSON value, or a _Problem saying why there is none.
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return _Problem(f"not UTF-8 ({error.reason} at byte {error.start})")
    text = text.rstrip("\r\n")
    if not text.strip():
        return _Problem("blank line, expected a JSON event")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        return _Problem(f"invalid JSON: {error.msg} at column {error.colno}")
    except RecursionError:
        return _Problem("JSON nested too deeply to parse")
    except ValueError as error:  # an integer too long to convert, say
        return _Problem(f"invalid JSON: {parse_error_reason(error)}")


@dataclass(frozen=True, slots=True)
class AdmitQuery:
    """A question before a call runs: would ``call`` pass the configured hard limits? With
    ``counts`` (an ``"attempt"`` line), the call is counted too, as denied when refused."""

    call: ToolCallFinished
    counts: bool = False


def parse_event(number: int, data: bytes) -> Event | AdmitQuery | LineError:
    """Return the event (or admit query) on input line ``number`` (raw bytes), or why it is
    not one.

    The JSON is read here; the mapping becomes an event through the core's one codec,
    ``event_from_json``, whose message names the problem. An ``"admit"`` line is read as the
    ``"tool_call"`` it asks about.
    """
    value = _decode(data)
    if isinstance(value, _Problem):
        return LineError(number, value.message)
    query = None
    if isinstance(value, dict):
        kind = value.get("type")
        if isinstance(kind, str) and kind in _QUERIES:
            query, value = _QUERIES[kind], {**value, "type": "tool_call"}
    # Imported here, not with the module: the package's __init__ imports this module, so every
    # command (the audit too) would pay for returns' pipeline.
    from returns.pipeline import is_successful  # noqa: PLC0415

    decoded = event_from_json(value)
    if not is_successful(decoded):
        return LineError(number, decoded.failure().message)
    event = decoded.unwrap()
    if query is not None:
        assert isinstance(event, ToolCallFinished)  # a "tool_call" decodes to nothing else
        return AdmitQuery(event, query)
    return event


ADMIT = "admit"
"""The ``type`` of a line asking whether a call may run."""
ATTEMPT = "attempt"
"""The ``type`` of a line asking whether a call may run and counting it."""
# Query line type -> whether the call is counted as well.
_QUERIES = {ADMIT: False, ATTEMPT: True}

Answer = dict[str, object]
Step = Callable[[GuardState], tuple[GuardState, Answer]]


class _Holder(Protocol):
    def run(self, agent: str | None, step: Step) -> Answer | str: ...


class _InMemory:
    def __init__(self, config: GuardConfig) -> None:
        self.state = GuardState.initial(config)

    def run(self, agent: str | None, step: Step) -> Answer | str:
        self.state, answer = step(self.state)
        return answer


class StoredState:
    """The agents' state in the hook's SQLite store at ``path``: one transaction per line.

    ``run`` returns the answer, or why the store could not be used (the line is then answered
    with an error, and nothing changed). A call outside any agent is never counted, so it never
    opens the store.
    """

    def __init__(
        self, path: str, config: GuardConfig, clock: Callable[[], float] = time.time
    ) -> None:
        self.path, self.config, self.clock = path, config, clock
        self.connection: sqlite3.Connection | None = None

    def run(self, agent: str | None, step: Step) -> Answer | str:
        if agent is None:
            return step(GuardState.initial(self.config))[1]
        from repeat_guard_hooks import CorruptStore, set_aside  # noqa: PLC0415  # when used

        try:
            try:
                return self._run(agent, step)
            except CorruptStore:
                self.close()
                set_aside(self.path, self.clock())
            return self._run(agent, step)
        except (_sqlite_error(), OSError) as error:
            self.close()  # opened afresh by the next line
            return f"state store unusable: {type(error).__name__}"

    def _run(self, agent: str, step: Step) -> Answer:
        from repeat_guard_hooks import open_store, step_agent  # noqa: PLC0415  # when used

        if self.connection is None:
            self.connection = open_store(self.path)
        answer, _ = step_agent(self.connection, self.config, agent, step, self.clock())
        return answer

    def close(self) -> None:
        """Close the store (a later line opens it again)."""
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _step(event: Event | AdmitQuery) -> Step:
    if isinstance(event, AdmitQuery):
        return _query_step(event)

    def step(state: GuardState) -> tuple[GuardState, Answer]:
        state, reminders = reduce(state, event)
        return state, {"reminders": [reminder_fields(r) for r in reminders]}

    return step


def _query_step(query: AdmitQuery) -> Step:
    def step(state: GuardState) -> tuple[GuardState, Answer]:
        verdict = admit(state, query.call)
        answer: Answer = (
            {"admit": False, "reason": verdict.reason}
            if isinstance(verdict, Deny)
            else {"admit": True}
        )
        if not query.counts:
            return state, answer
        call = replace(query.call, denied=isinstance(verdict, Deny))
        state, reminders = reduce(state, call)
        return state, {**answer, "reminders": [reminder_fields(r) for r in reminders]}

    return step


def _answer(holder: _Holder, number: int, data: bytes) -> Answer:
    if isinstance(data, LineFault):
        return {"error": str(LineError(number, data.message))}
    event = parse_event(number, data)
    if isinstance(event, LineError):
        return {"error": str(event)}
    agent = event.call.agent if isinstance(event, AdmitQuery) else event.agent
    answer = holder.run(agent, _step(event))
    if isinstance(answer, str):
        return {"error": str(LineError(number, answer))}
    return answer


def serve(
    config: GuardConfig, source: BinaryIO, output: BinaryIO, state: StoredState | None = None
) -> int:
    """Answer the events read from ``source``, one line each, on ``output``.

    The agents' state is kept in memory, or in ``state`` when given. A line is never held
    beyond ``MAX_LINE_BYTES`` (a longer one is skipped and answered with an error). Returns 0
    once the input ends; every other line, whatever its bytes, gets exactly one answer and
    serving goes on.
    """
    holder: _Holder = _InMemory(config) if state is None else state
    for number, data in enumerate(bounded_lines(source), start=1):
        answer = _answer(holder, number, data)
        output.write(json.dumps(answer).encode("ascii") + b"\n")
        output.flush()
    return 0


def _sqlite_error() -> type[Exception]:
    """``sqlite3.Error``, imported when a store is used: every other subcommand imports this
    module (the package's names are bound plainly) and needs no SQLite."""
    import sqlite3  # noqa: PLC0415  # see the docstring

    return sqlite3.Error
