"""Transcripts for fuzzing: ACP frames of every kind with each field's type and presence
varied, lines of the other formats with their JSON mutated, and byte-level damage on top.

``exercise`` runs one transcript through everything the library and the command do with it
(the reader, the replay, the text and JSON reports, ``--check``'s comparison, annotation where
the format allows it) and returns how many outcomes it saw; any exception escapes to the test.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from repeat_guard import GuardConfig
from repeat_guard_cli._report import (
    check_lines,
    diagnostic_line,
    noted_line,
    reminder_record,
    summary_record,
    text_report,
    unfinished_record,
)
from repeat_guard_transcripts import (
    READERS,
    Annotating,
    Diagnostic,
    FileSummary,
    Fired,
    Outcome,
    Recorded,
    Unfinished,
    annotate,
    bounded_lines,
    replay,
)

FIXTURES = Path(__file__).parent / "fixtures"
CONFIG = GuardConfig(thresholds=(2, 3))

# -- values of every type, the right one among them --------------------------------------------

_TEXT = st.one_of(
    st.sampled_from(["s", "t", "x", "", "\ud800", "\udfff x", "×", "a" * 300]),
    st.text(max_size=8),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
)
ANY_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=8,
)


def field(right: st.SearchStrategy[object], noise: int = 3) -> st.SearchStrategy[object]:
    """A value of the right type, or (``noise`` times in twenty) any JSON value."""
    return st.integers(0, 19).flatmap(lambda roll: ANY_JSON if roll < noise else right)


@st.composite
def cut_and_flipped(draw: st.DrawFn, payloads: st.SearchStrategy[object]) -> bytes:
    """A drawn payload as JSON text, cut at a drawn byte, then a drawn byte of it flipped."""
    data = bytearray(json.dumps(draw(payloads)).encode())
    del data[draw(st.integers(0, len(data))) :]
    if data:
        data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
    return bytes(data)


def maybe(
    draw: st.DrawFn,
    noise: int,
    target: dict[str, object],
    key: str,
    right: st.SearchStrategy[object],
    *,
    optional: bool = False,
) -> None:
    """Set ``target[key]``, mostly to a value of the right type; leave it absent ``noise``
    times in forty (half the time for an ``optional`` field)."""
    absent = draw(st.integers(0, 39)) < (20 if optional else noise)
    if not absent:
        target[key] = draw(field(right, noise))


def fuzz_settings(examples: int) -> settings:
    """Hypothesis settings for a fuzz test of ``examples`` transcripts: no deadline, no example
    database, and large or slowly drawn transcripts are not a failure."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )


# -- ACP frames -----------------------------------------------------------------------------


SESSIONS = st.sampled_from(["s1", "s2"])
CALL_IDS = st.sampled_from(["c1", "c2", "c3", "c4", "c5", "c6", "c7", "read_file-1"])
IDS = st.one_of(st.integers(0, 4), st.sampled_from(["0", "1"]))
STATUSES = st.sampled_from(["pending", "in_progress", "completed", "completed", "failed"])
RAW_INPUTS = st.sampled_from([{"p": "x"}, {"p": "x"}, {"p": "x"}, {"p": "y"}, {}, ""])
KINDS = st.sampled_from(["read", "read", "execute"])
OUTCOMES = st.sampled_from(
    [
        {"outcome": "selected", "optionId": "no"},
        {"outcome": "selected", "optionId": "yes"},
        {"outcome": "cancelled"},
    ]
)


@st.composite
def tool_call(draw: st.DrawFn, kind: str, noise: int) -> dict[str, object]:
    body: dict[str, object] = {"sessionUpdate": kind}
    maybe(draw, noise, body, "toolCallId", CALL_IDS)
    maybe(draw, noise, body, "status", STATUSES)
    maybe(draw, noise, body, "title", st.just("grep"), optional=True)
    maybe(draw, noise, body, "kind", KINDS, optional=True)
    maybe(draw, noise, body, "rawInput", RAW_INPUTS, optional=True)
    maybe(draw, noise, body, "locations", st.just([{"path": "/a"}]), optional=True)
    diff = st.just([{"type": "diff", "path": "/a", "newText": "v"}])
    maybe(draw, noise, body, "content", diff, optional=True)
    maybe(draw, noise, body, "_meta", st.just({"claudeCode": {"toolName": "Bash"}}), optional=True)
    return body


@st.composite
def update(draw: st.DrawFn, noise: int) -> dict[str, object]:
    kind = draw(
        st.sampled_from(
            [
                "tool_call",
                "tool_call_update",
                "user_message_chunk",
                "agent_message_chunk",
                "plan",
                "x",
            ]
        )
    )
    if kind in ("tool_call", "tool_call_update"):
        body = draw(tool_call(kind, noise))
    else:
        body = {"sessionUpdate": kind, "content": {"type": "text", "text": "hi"}}
        if kind == "user_message_chunk" and draw(st.booleans()):
            label: dict[str, object] = {}
            maybe(draw, noise, label, "tool", st.just("grep"))
            maybe(draw, noise, label, "count", st.integers(2, 5))
            maybe(draw, noise, label, "form", st.sampled_from(["gentle", "detailed"]))
            body["_meta"] = {"repeatGuard": label}
    params: dict[str, object] = {}
    maybe(draw, noise, params, "sessionId", SESSIONS)
    maybe(draw, noise, params, "update", st.just(body))
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


@st.composite
def request(draw: st.DrawFn, noise: int) -> dict[str, object]:
    method = draw(
        st.sampled_from(
            [
                "session/prompt",
                "session/load",
                "session/request_permission",
                "session/cancel",
                "initialize",
                "session/new",
                "_vendor/x",
            ]
        )
    )
    params: dict[str, object] = {}
    maybe(draw, noise, params, "sessionId", SESSIONS)
    if method == "session/request_permission":
        maybe(draw, noise, params, "toolCall", tool_call("tool_call", noise))
        maybe(
            draw,
            noise,
            params,
            "options",
            st.just(
                [
                    {"optionId": "no", "kind": "reject_once"},
                    {"optionId": "yes", "kind": "allow_once"},
                ]
            ),
        )
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    maybe(draw, noise, message, "id", IDS, optional=method == "session/cancel")
    maybe(draw, noise, message, "params", st.just(params))
    return message


@st.composite
def response(draw: st.DrawFn, noise: int) -> dict[str, object]:
    message: dict[str, object] = {"jsonrpc": "2.0"}
    maybe(draw, noise, message, "id", IDS)
    if draw(st.integers(0, 5)):
        result: dict[str, object] = {}
        maybe(draw, noise, result, "outcome", OUTCOMES, optional=True)
        maybe(draw, noise, result, "stopReason", st.just("end_turn"), optional=True)
        message["result"] = draw(field(st.just(result), noise))
    else:
        message["error"] = {"code": -1, "message": "no"}
    return message


@st.composite
def acp_line(draw: st.DrawFn, noise: int) -> bytes:
    kind = draw(st.integers(0, 19))
    if kind < 11:
        message: object = draw(update(noise))
    elif kind < 15:
        message = draw(request(noise))
    elif kind < 19 or not noise:
        message = draw(response(noise))
    else:
        message = draw(ANY_JSON)
    form = draw(st.integers(0, 2))
    if form == 1:
        direction = draw(field(st.sampled_from(["c2a", "a2c"]), noise))
        record: object = {"dir": direction, "msg": message}
    else:
        record = message
    text = json.dumps(record, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    if form == 2:  # an IDE's transport log line, or another logger's line among them
        text = draw(st.sampled_from(LOG_PREFIXES)) + text
    return text + b"\n"


LOG_PREFIXES = (
    b"2025-11-14 19:57:12,975 [     34]   FINE - AcpTransport - OUT: ",
    b"2025-11-14 19:57:13,401 [    460]   FINE - AcpTransport - IN: ",
    b"2025-11-14T19:57:13 AcpTransport - IN: ",
    b"2025-11-14 19:57:13.4 FINE - AcpTransport - SIDEWAYS: ",
    b"2025-11-14 19:57:13,401 [    460]   INFO - #c.i.Other - ",
    b"2025-13-99 99:99:99 AcpTransport - IN: ",
    b"2025-11-14 19:57 AcpTransport - IN: ",
)


@st.composite
def acp_scenario(draw: st.DrawFn, noise: int) -> list[bytes]:
    """A session's turns as agents send them: a prompt, calls announced, permission asked
    and answered, calls finished (or not), the prompt answered; then some frames mutated."""
    session = draw(SESSIONS)
    messages: list[object] = []
    for turn in range(draw(st.integers(1, 3))):
        prompt_id = 100 + turn
        messages.append(
            {
                "jsonrpc": "2.0",
                "id": prompt_id,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": []},
            }
        )
        for n in range(draw(st.integers(0, 5))):
            call_id = f"t{turn}-{n}"
            body = {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "status": "pending",
                "title": "grep",
                "kind": "search",
                "rawInput": draw(RAW_INPUTS),
            }
            messages.append(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": session, "update": body},
                }
            )
            if draw(st.integers(0, 2)) == 0:
                ask = {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "session/request_permission",
                    "params": {
                        "sessionId": session,
                        "toolCall": {"toolCallId": call_id},
                        "options": [
                            {"optionId": "no", "kind": "reject_once"},
                            {"optionId": "yes", "kind": "allow_once"},
                        ],
                    },
                }
                messages.append(ask)
                messages.append({"jsonrpc": "2.0", "id": n, "result": {"outcome": draw(OUTCOMES)}})
            status = draw(st.sampled_from(["completed", "completed", "failed", None]))
            if status is not None:
                done = {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call_id,
                    "status": status,
                }
                messages.append(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {"sessionId": session, "update": done},
                    }
                )
        messages.append({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}})
    lines = []
    record = draw(st.booleans())
    for message in messages:
        sent = mutate_json(message, draw) if draw(st.integers(0, 19)) < noise else message
        if record:
            asked = isinstance(message, dict) and message.get("method") == "session/prompt"
            sent = {"dir": "c2a" if asked else "a2c", "msg": sent}
        lines.append(json.dumps(sent).encode("utf-8", "surrogatepass") + b"\n")
    return lines


# -- other formats: real lines with their JSON mutated ----------------------------------------


def _sample_lines(pattern: str) -> list[list[bytes]]:
    paths = sorted(FIXTURES.glob(pattern))
    return [path.read_bytes().splitlines(keepends=True) for path in paths]


SAMPLES: dict[str, list[list[bytes]]] = {
    "claude-code": _sample_lines("claude-code/**/*.jsonl"),
    "codex": _sample_lines("codex/*.jsonl"),
    # OpenHands V1 events one a line, and evaluation output: read a window as the documents
    # below are not.
    "openhands": _sample_lines("openhands/*.jsonl"),
    "gemini-cli": _sample_lines("gemini-cli/*.jsonl"),
    "copilot-cli": _sample_lines("copilot-cli/*.jsonl"),
    "pi": _sample_lines("pi/*/*.jsonl"),
    # OTLP/JSON exports one a line; the indented document is drawn by ``_otel_document``.
    "otel-genai": _sample_lines("otel-genai/*.jsonl"),
    "qwen-code": _sample_lines("qwen-code/*/chats/*.jsonl"),
}

_OTEL_DOCUMENT = json.loads((FIXTURES / "otel-genai" / "by-hand.json").read_bytes())


def mutate_json(value: object, draw: st.DrawFn) -> object:
    """Replace, drop or retype one node somewhere in ``value``."""
    if isinstance(value, dict) and value and draw(st.integers(0, 2)):
        key = draw(st.sampled_from(sorted(value, key=str)))
        copy = dict(value)
        if draw(st.integers(0, 3)) == 0:
            del copy[key]
        else:
            copy[key] = mutate_json(copy[key], draw)
        return copy
    if isinstance(value, list) and value and draw(st.integers(0, 2)):
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], mutate_json(value[index], draw), *value[index + 1 :]]
    return draw(ANY_JSON)


@st.composite
def sample_window(draw: st.DrawFn, fmt: str, noise: int) -> list[bytes]:
    """A run of consecutive lines of a real file, some of their JSON mutated."""
    lines = draw(st.sampled_from(SAMPLES[fmt]))
    start = draw(st.integers(0, len(lines) - 1))
    window = lines[start : start + draw(st.integers(1, 24))]
    for index, line in enumerate(window):
        if draw(st.integers(0, 19)) < noise:
            value = mutate_json(json.loads(line), draw)
            window[index] = json.dumps(value).encode("utf-8", "surrogatepass") + b"\n"
    return window


def _in_another_session(line: bytes) -> bytes:
    """``line`` moved to another session (the same ids: a session copied into the file): its
    ``sessionId`` renamed, and another put first."""
    return line.replace(b'"sessionId"', b'"was"', 1).replace(b"{", b'{"sessionId": "copy", ', 1)


_MINI_MESSAGES = st.sampled_from(
    [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "```mswea_bash_command\nls\n```"},
        {"role": "assistant", "content": "```bash\nls\n```\n```bash\npwd\n```"},
        {"role": "assistant", "content": "", "extra": {"actions": [{"command": "ls"}]}},
        {"role": "assistant", "extra": {"actions": [{"command": "ls", "tool_call_id": "c1"}]}},
        {"role": "assistant", "extra": {"actions": [{"command": "ls", "tool_call_id": "c2"}]}},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c3", "function": {"arguments": '{"command": "ls"}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a"},
        {"role": "tool", "tool_call_id": "c2", "content": "a"},
        {"role": "tool", "tool_call_id": "c3", "content": "a"},
        {"type": "function_call_output", "call_id": "c1", "output": "a"},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "extra": {"exception_info": "action was not executed"},
        },
        {"role": "user", "content": "<returncode>0</returncode>"},
        {"role": "user", "content": "no", "extra": {"interrupt_type": "UserRejection"}},
        {"role": "user", "content": "bad", "extra": {"interrupt_type": "FormatError"}},
        {"role": "user", "content": "more", "extra": {"interrupt_type": "UserNewTask"}},
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}},
    ]
)


def _mini_swe_agent(draw: st.DrawFn) -> object:
    """A mini-swe-agent trajectory: messages drawn from every shape the reader reads, some
    mutated, in a 1.1 document or a bare list."""
    messages = [
        mutate_json(message, draw) if draw(st.integers(0, 5)) == 0 else message
        for message in draw(st.lists(_MINI_MESSAGES, max_size=12))
    ]
    if draw(st.booleans()):
        return messages
    return {"info": {"mini_version": "2"}, "messages": messages, "trajectory_format": "x"}


_USE = {"type": "tool_use", "id": "u1", "name": "execute_command", "input": {"command": "ls"}}
_CLINE_MESSAGES = st.sampled_from(
    [
        {"role": "user", "content": [{"type": "text", "text": "<task>list</task>"}], "ts": 1},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": [_USE], "ts": 2},
        {"role": "assistant", "content": [{**_USE, "id": "u2"}, {**_USE, "id": "u3"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u1", "content": "a"}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "u2", "content": [{"success": False}]},
                {"type": "tool_result", "tool_use_id": "u3", "content": "denied", "is_error": True},
            ],
        },
        {"role": "assistant", "content": "<execute_command>ls</execute_command>"},
    ]
)


def _cline(draw: st.DrawFn) -> object:
    """A Cline conversation: a task's list of messages, or the CLI's object holding it."""
    messages = [
        mutate_json(message, draw) if draw(st.integers(0, 5)) == 0 else message
        for message in draw(st.lists(_CLINE_MESSAGES, max_size=12))
    ]
    if draw(st.booleans()):
        return messages
    return {"version": 1, "sessionId": "s", "origin": {"source": "cli"}, "messages": messages}


def _otel_document(draw: st.DrawFn) -> list[bytes]:
    """The hand-made OTLP/JSON document, indented, its spans mutated a few times over."""
    spans = _OTEL_DOCUMENT
    for _ in range(draw(st.integers(0, 4))):
        spans = mutate_json(spans, draw)
    indent = draw(st.sampled_from([1, 2]))
    return json.dumps(spans, indent=indent).encode("utf-8", "surrogatepass").splitlines(True)


@st.composite
def document(draw: st.DrawFn, fmt: str) -> list[bytes]:
    if fmt in ("mini-swe-agent", "cline"):
        value = _mini_swe_agent(draw) if fmt == "mini-swe-agent" else _cline(draw)
        return (
            json.dumps(value, indent=draw(st.sampled_from([None, 1, 2])))
            .encode("utf-8", "surrogatepass")
            .splitlines(keepends=True)
        )
    steps: list[object] = []
    for _ in range(draw(st.integers(0, 6))):
        if fmt == "swe-agent":
            step: object = {
                "action": draw(st.sampled_from(["ls\n", "submit x\n", "edit 1:1\ny\n"]))
            }
            if draw(st.integers(0, 3)):
                step["observation"] = "ok"  # type: ignore[index]
        else:
            ident = len(steps)
            action = draw(st.sampled_from(["run", "run", "delegate", "message", "finish"]))
            source = "user" if action == "message" else "agent"
            step = {"id": ident, "source": source, "action": action, "args": {"command": "ls"}}
            if draw(st.integers(0, 4)):
                steps.append(step)
                step = {"id": ident + 1, "source": "agent", "observation": action, "cause": ident}
        if draw(st.integers(0, 3)) == 0:
            step = mutate_json(step, draw)
        steps.append(step)
    top: object = {"trajectory": steps} if fmt == "swe-agent" else steps
    if fmt == "openhands" and draw(st.booleans()):
        lines = [json.dumps({"instance_id": "i", "history": steps}).encode() + b"\n"]
    else:
        lines = (
            json.dumps(top, indent=draw(st.sampled_from([None, 1, 2])))
            .encode("utf-8", "surrogatepass")
            .splitlines(keepends=True)
        )
    return lines


# -- byte damage ----------------------------------------------------------------------------

_JUNK = st.sampled_from(
    [
        b"\xff",
        b"\xc3",
        b"\x00",
        b"\n",
        b"\r\n",
        b"{",
        b"]",
        b'"',
        b"\\ud800",
        b"1" * 5000,
        b"[" * 3000,
        b" ",
    ]
)


def _damage(draw: st.DrawFn, lines: list[bytes], index: int) -> None:
    line = lines[index]
    action = draw(st.integers(0, 5))
    if action == 0:
        lines[index] = line[: draw(st.integers(0, len(line)))]
    elif action == 1:
        at = draw(st.integers(0, len(line)))
        lines[index] = line[:at] + draw(_JUNK) + line[at:]
    elif action == 2 and index + 1 < len(lines):
        lines[index : index + 2] = [line.rstrip(b"\n") + lines[index + 1]]
    elif action == 3:
        lines.insert(index, line)
    elif action == 4:
        del lines[index]
    elif line:
        at = draw(st.integers(0, len(line) - 1))
        lines[index] = line[:at] + bytes([line[at] ^ draw(st.integers(1, 255))]) + line[at + 1 :]


@st.composite
def damaged(draw: st.DrawFn, lines: list[bytes]) -> list[bytes]:
    """``lines`` with a few byte-level mutations: cut, spliced, joined, doubled, dropped,
    flipped; then read back the way a file is, every line but the last ending in a newline."""
    lines = list(lines)
    for _ in range(draw(st.integers(0, 3))):
        if lines:
            _damage(draw, lines, draw(st.integers(0, len(lines) - 1)))
    return list(bounded_lines(io.BytesIO(b"".join(lines))))


@st.composite
def transcripts(draw: st.DrawFn) -> tuple[str, list[bytes]]:
    """A format and a transcript's lines, structured and then damaged."""
    fmt = draw(
        st.sampled_from(
            [
                "acp",
                "acp",
                "acp",
                "claude-code",
                "codex",
                "swe-agent",
                "openhands",
                "mini-swe-agent",
                "gemini-cli",
                "otel-genai",
                "copilot-cli",
                "pi",
                "cline",
                "qwen-code",
            ]
        )
    )
    noise = draw(st.sampled_from([0, 1, 3, 8]))
    if fmt == "acp" and draw(st.booleans()):
        lines = draw(acp_scenario(noise))
    elif fmt == "acp":
        lines = draw(st.lists(acp_line(noise), max_size=16))
    elif fmt in SAMPLES and (fmt not in ("openhands", "otel-genai") or draw(st.booleans())):
        lines = draw(sample_window(fmt, noise))
        if fmt == "claude-code" and draw(st.booleans()):
            lines += [_in_another_session(line) for line in lines]
    elif fmt == "otel-genai":
        lines = _otel_document(draw)
    else:
        lines = draw(document(fmt))
    return fmt, draw(damaged(lines)) if noise else lines


def exercise(fmt: str, lines: list[bytes]) -> int:
    """Run ``lines`` through the reader, the replay, every report and annotation."""
    reader = READERS[fmt]
    outcomes: list[Outcome] = list(replay(reader.read(lines, "f"), CONFIG, file="f"))
    noted: list[Fired | Unfinished] = []
    for outcome in outcomes:
        if isinstance(outcome, Fired):
            noted.append(outcome)
            reminder_record(outcome).encode("utf-8")
        elif isinstance(outcome, Unfinished):
            noted.append(outcome)
            unfinished_record(outcome).encode("utf-8")
        elif isinstance(outcome, Diagnostic):
            diagnostic_line(outcome).encode("utf-8")
    summary = outcomes[-1]
    assert isinstance(summary, FileSummary)
    summary_record(summary, len(lines)).encode("utf-8")
    by_session: dict[str, list[str]] = {}
    for item in noted:
        by_session.setdefault(item.where.session, []).append(noted_line(item))
    report = text_report(summary, len(lines), lambda session: by_session.get(session, []))
    "\n".join(report).encode("utf-8")
    "\n".join(check_lines(summary, [o for o in noted if isinstance(o, Fired)])).encode("utf-8")
    if isinstance(reader, Annotating):
        written: list[bytes] = []
        annotated = list(annotate(lines, reader, CONFIG, file="f", write=written.append))
        assert annotated == outcomes
        recorded = sum(isinstance(o, Recorded) for o in outcomes)
        fired = sum(isinstance(o, Fired) for o in outcomes)
        assert len(written) == len(lines) - recorded + fired
    return len(outcomes)
