"""A generated corpus of transcripts with loops planted at known lines, and what an audit of it
must report, computed here by plain arithmetic (not by the guard).

Each session is a script of blocks: a block is one call repeated ``k`` times in a row, and two
neighbouring blocks never share their call, so every block is exactly one run. With the
default thresholds (3, 5, 8) a run of ``k`` wastes ``k - 1`` calls and gives a gentle reminder
when ``k >= 3`` and one detailed reminder for each of 5 and 8 it reaches. Tokens are recorded
by Claude Code sessions only: there a model response makes one call or two in parallel, with
known output tokens, and a response that made a run's second or later call is a wasted turn
whose tokens count once.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import random
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

THRESHOLDS = (3, 5, 8)
TOOLS = ("Bash", "Read", "Grep", "Edit")


@dataclass
class Expected:
    """What the audit of the corpus must say."""

    files: int = 0
    sessions: int = 0
    calls: int = 0
    wasted: int = 0
    reminders: Counter[str] = field(default_factory=Counter)
    longest_run: int = 0
    wasted_tokens: int = 0
    wasted_input_tokens: int = 0
    wasted_turns: int = 0
    tools: Counter[str] = field(default_factory=Counter)
    wasted_by_tool: Counter[str] = field(default_factory=Counter)
    days: Counter[str] = field(default_factory=Counter)
    wasted_by_day: Counter[str] = field(default_factory=Counter)
    # (length, file, first line, last line) of every run of 2 or more.
    runs: list[tuple[int, str, int, int]] = field(default_factory=list)
    diagnostics: int = 0
    broken: str | None = None  # the file given two lines of garbage


@dataclass(frozen=True)
class Block:
    tool: str
    arguments: Mapping[str, object]
    repeats: int
    tokens: int


def _script(rng: random.Random, length: int) -> list[Block]:
    blocks: list[Block] = []
    for index in range(length):
        repeats = rng.choice((1, 1, 1, 2, 3, 4, 5, 6, 8, 9))
        tool = rng.choice(TOOLS)
        # The index makes neighbouring blocks differ; the rest makes arguments realistic.
        arguments = {"command": f"step {index} {rng.randrange(1000)}", "cwd": "/home/dev/p"}
        blocks.append(Block(tool, arguments, repeats, rng.randrange(1, 500)))
    return blocks


def _account(
    expected: Expected,
    path: Path,
    blocks: list[Block],
    spans: list[tuple[int, int]],
    day: str,
    text: str | None = None,
) -> None:
    """Count the transcript at ``path``, one session of ``blocks``, each block at its span
    (its first and last line) and its calls made on ``day``; ``text`` is written to ``path``
    first (a writer of a database or a folder writes it itself)."""
    if text is not None:
        path.write_text(text, encoding="utf-8")
    expected.files += 1
    expected.sessions += 1
    for block, (first, last) in zip(blocks, spans, strict=True):
        k = block.repeats
        if k >= 2:
            expected.runs.append((k, str(path), first, last))
        expected.calls += k
        expected.wasted += k - 1
        expected.tools[block.tool] += k
        expected.wasted_by_tool[block.tool] += k - 1
        expected.days[day] += k
        expected.wasted_by_day[day] += k - 1
        expected.longest_run = max(expected.longest_run, k)
        if k >= THRESHOLDS[0]:
            expected.reminders["gentle"] += 1
        expected.reminders["detailed"] += sum(1 for t in THRESHOLDS[1:] if k >= t)


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, record: dict[str, object]) -> int:
        self.lines.append(json.dumps(record))
        return len(self.lines)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def claude_code_file(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One Claude Code session: a prompt, then each call as a tool_use and its tool_result."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    out = _Lines()
    stamp = f"{day}T10:00:00.000Z"
    common = {"sessionId": session, "cwd": "/home/dev/p", "timestamp": stamp, "version": "2"}
    out.add(
        {
            **common,
            "type": "user",
            "parentUuid": None,
            "promptId": "p1",
            "message": {"role": "user", "content": "fix the build"},
        }
    )
    serial = 0
    for block in blocks:
        first = last = 0
        position = 0  # of the block's calls, 1-based, as they are made
        while position < block.repeats:
            # One response: one call, or two made in parallel, as Claude Code writes them (a
            # line per tool_use, each with the response's whole usage, then the results).
            together = min(rng.choice((1, 1, 2)), block.repeats - position)
            idents = [f"toolu_{serial + n + 1}" for n in range(together)]
            serial += together
            for ident in idents:
                out.add(
                    {
                        **common,
                        "type": "assistant",
                        "promptId": "p1",
                        "message": {
                            "id": f"msg_{idents[0]}",
                            "role": "assistant",
                            "usage": {
                                "input_tokens": 7,
                                "cache_creation_input_tokens": block.tokens % 3,
                                "cache_read_input_tokens": 100 * serial,
                                "output_tokens": block.tokens,
                            },
                            "content": [
                                {
                                    "type": "tool_use",
                                    "id": ident,
                                    "name": block.tool,
                                    "input": block.arguments,
                                }
                            ],
                        },
                    }
                )
            for ident in idents:
                last = out.add(
                    {
                        **common,
                        "type": "user",
                        "message": {
                            "role": "user",
                            "content": [
                                {"type": "tool_result", "tool_use_id": ident, "content": "ok"}
                            ],
                        },
                    }
                )
                first = first or last
            position += together
            # The response made a wasted call if any of its calls is a run's second or later.
            if position >= 2:
                expected.wasted_turns += 1
                expected.wasted_tokens += block.tokens
                expected.wasted_input_tokens += 7 + block.tokens % 3 + 100 * serial
        spans.append((first, last))
    _account(expected, path, blocks, spans, day, out.text())


def acp_file(path: Path, rng: random.Random, expected: Expected, day: str, session: str) -> None:
    """One ACP session: a prompt, then each call announced and completed."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    out = _Lines()
    out.add(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]},
        }
    )
    serial = 0
    for block in blocks:
        first = last = 0
        for _ in range(block.repeats):
            serial += 1
            for update in (
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": f"c{serial}",
                    "title": block.tool,
                    "kind": "execute",
                    "_meta": {"claudeCode": {"toolName": block.tool}},
                    "status": "pending",
                    "rawInput": block.arguments,
                },
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": f"c{serial}",
                    "status": "completed",
                },
            ):
                last = out.add(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {"sessionId": session, "update": update},
                    }
                )
            first = first or last
        spans.append((first, last))
    out.add({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}})
    _account(expected, path, blocks, spans, "unknown", out.text())


def codex_file(path: Path, rng: random.Random, expected: Expected, day: str, session: str) -> None:
    """One Codex rollout: session_meta, a prompt, each call a function_call and its output."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    out = _Lines()
    stamp = f"{day}T10:00:00.000Z"
    out.add(
        {
            "timestamp": stamp,
            "type": "session_meta",
            "payload": {"id": session, "cwd": "/home/dev/p"},
        }
    )
    out.add(
        {
            "timestamp": stamp,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "fix the build"},
        }
    )
    serial = 0
    for block in blocks:
        first = last = 0
        for _ in range(block.repeats):
            serial += 1
            call = {
                "type": "function_call",
                "name": block.tool,
                "call_id": f"call_{serial}",
                "arguments": json.dumps(block.arguments),
            }
            out.add({"timestamp": stamp, "type": "response_item", "payload": call})
            answer = {"type": "function_call_output", "call_id": f"call_{serial}", "output": "ok"}
            last = out.add({"timestamp": stamp, "type": "response_item", "payload": answer})
            first = first or last
        spans.append((first, last))
    _account(expected, path, blocks, spans, day, out.text())


def openhands_file(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One OpenHands trajectory (a JSON array, one event per line): a user message, then each
    call an agent action and the observation it caused."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    stamp = f"{day}T10:00:00.000000"
    events = [
        {
            "id": 0,
            "timestamp": stamp,
            "source": "user",
            "action": "message",
            "args": {"content": "fix the build"},
        }
    ]
    for block in blocks:
        # Line 1 is "[", event i is on line i + 2: the block's first observation is its next
        # event but one, its last two lines a call further on.
        spans.append((len(events) + 3, len(events) + 1 + 2 * block.repeats))
        for _ in range(block.repeats):
            ident = len(events)
            events.append(
                {
                    "id": ident,
                    "timestamp": stamp,
                    "source": "agent",
                    "action": block.tool,
                    "args": {**block.arguments, "thought": "hm"},
                }
            )
            events.append(
                {
                    "id": ident + 1,
                    "timestamp": stamp,
                    "source": "agent",
                    "observation": "run",
                    "cause": ident,
                    "content": "ok",
                }
            )
    body = ",\n".join(json.dumps(event) for event in events)
    _account(expected, path, blocks, spans, day, f"[\n{body}\n]\n")


def swe_agent_file(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One SWE-agent trajectory: each call a step whose action is the command line."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    steps: list[str] = []
    for block in blocks:
        first = len(steps) + 3  # line 1 "{", line 2 '"trajectory": [', step i on line i + 3
        for _ in range(block.repeats):
            action = f"{block.tool} {block.arguments['command']}"
            steps.append(json.dumps({"action": action, "observation": "ok", "thought": "hm"}))
        spans.append((first, len(steps) + 2))
    body = ",\n".join(steps)
    _account(expected, path, blocks, spans, "unknown", f'{{\n"trajectory": [\n{body}\n]\n}}\n')


def mini_swe_agent_file(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One mini-swe-agent trajectory (format 1.1, one message a line): the task, then each
    call a reply with its action and the observation answering it. Every call is ``bash``."""
    blocks = [
        Block("bash", block.arguments, block.repeats, block.tokens)
        for block in _script(rng, rng.randrange(1, 6))
    ]
    spans: list[tuple[int, int]] = []  # each block's first and last line
    # line 1 "{", 2 info, 3 '"messages": [', 4 the task, then a reply and its answer a call
    messages = [json.dumps({"role": "user", "content": "fix the build"})]
    for block in blocks:
        first = len(messages) + 5  # the block's first answer
        for _ in range(block.repeats):
            action = {"command": block.arguments["command"]}
            messages.append(json.dumps({"role": "assistant", "extra": {"actions": [action]}}))
            messages.append(json.dumps({"role": "user", "content": "<returncode>0</returncode>"}))
        spans.append((first, len(messages) + 3))
    body = ",\n".join(messages)
    info = '"info": {"mini_version": "2.0.0"},'
    _account(
        expected, path, blocks, spans, "unknown", f'{{\n{info}\n"messages": [\n{body}\n]\n}}\n'
    )


def gemini_cli_file(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One Gemini CLI chat (JSON Lines): its metadata, a prompt, then each call a ``gemini``
    message written twice, as Gemini CLI does: without its toolCalls, then with them done."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    out = _Lines()
    out.add({"sessionId": session, "projectHash": "h", "startTime": f"{day}T10:00:00Z"})
    out.add({"id": "p", "type": "user", "content": [{"text": "fix the build"}]})
    serial = 0
    for block in blocks:
        first = last = 0
        for _ in range(block.repeats):
            serial += 1
            message: dict[str, object] = {"id": f"m{serial}", "type": "gemini", "content": ""}
            out.add(message)
            call: dict[str, object] = {"id": f"c{serial}", "name": block.tool}
            call["args"] = dict(block.arguments)
            last = out.add({**message, "toolCalls": [{**call, "status": "success"}]})
            first = first or last
        spans.append((first, last))
    _account(expected, path, blocks, spans, "unknown", out.text())


def copilot_cli_file(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One Copilot CLI events file: session.start, a prompt, then each call a
    tool.execution_start and its tool.execution_complete."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    out = _Lines()

    def event(kind: str, data: dict[str, object]) -> int:
        return out.add({"type": kind, "data": data, "id": kind, "parentId": None})

    event("session.start", {"sessionId": session, "context": {"cwd": "/home/dev/p"}})
    event("user.message", {"content": "fix the build"})
    serial = 0
    for block in blocks:
        first = last = 0
        for _ in range(block.repeats):
            serial += 1
            start: dict[str, object] = {"toolCallId": f"c{serial}", "toolName": block.tool}
            event("tool.execution_start", {**start, "arguments": dict(block.arguments)})
            last = event("tool.execution_complete", {"toolCallId": f"c{serial}", "success": True})
            first = first or last
        spans.append((first, last))
    _account(expected, path, blocks, spans, "unknown", out.text())


def goose_file(path: Path, rng: random.Random, expected: Expected, day: str, session: str) -> None:
    """One goose database (its ``sessions`` and ``messages`` tables): a prompt, then each call
    an assistant's ``toolRequest`` and the user message answering it, the line of a call its
    answer's row id."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    rows: list[tuple[str, list[object]]] = [("user", [{"type": "text", "text": "fix it"}])]
    for block in blocks:
        first = 0
        for _ in range(block.repeats):
            ident = f"c{len(rows)}"
            value = {"name": block.tool, "arguments": dict(block.arguments)}
            call = {"status": "success", "value": value}
            rows.append(("assistant", [{"type": "toolRequest", "id": ident, "toolCall": call}]))
            result = {"status": "success", "value": {"content": []}}
            rows.append(("user", [{"type": "toolResponse", "id": ident, "toolResult": result}]))
            first = first or len(rows)
        spans.append((first, len(rows)))
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, working_dir TEXT, created_at)")
        db.execute(
            "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, "
            "role TEXT, content_json TEXT, created_timestamp INTEGER)"
        )
        db.execute("INSERT INTO sessions VALUES (?, '/home/dev/p', 0)", (session,))
        db.executemany(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp) "
            "VALUES (?, ?, ?, 0)",
            [(session, role, json.dumps(content)) for role, content in rows],
        )
    _account(expected, path, blocks, spans, "unknown")


def opencode_file(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One opencode database (``session``, ``message``, ``part``): a user message, then each
    call an assistant message holding one completed ``tool`` part, the line of a call its
    part's row id."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    parts: list[tuple[str, str, str]] = [("m0", "user", json.dumps({"type": "text"}))]
    for block in blocks:
        first = 0
        for _ in range(block.repeats):
            state = {"status": "completed", "input": dict(block.arguments), "output": "ok"}
            part = {"type": "tool", "tool": block.tool, "state": state}
            parts.append((f"m{len(parts):05d}", "assistant", json.dumps(part)))
            first = first or len(parts)
        spans.append((first, len(parts)))
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "CREATE TABLE `session` (`id` text PRIMARY KEY, `directory` text, `time_created`)"
        )
        db.execute("CREATE TABLE `message` (`id` text, `session_id` text, `data` text)")
        db.execute("CREATE TABLE `part` (`id` text, `message_id` text, `data` text)")
        db.execute("INSERT INTO `session` VALUES (?, '/home/dev/p', 0)", (session,))
        for message, role, part_data in parts:
            data = json.dumps({"role": role})
            db.execute("INSERT INTO `message` VALUES (?, ?, ?)", (message, session, data))
            db.execute("INSERT INTO `part` VALUES (?, ?, ?)", (f"p{message}", message, part_data))
    _account(expected, path, blocks, spans, "unknown")


def pi_file(path: Path, rng: random.Random, expected: Expected, day: str, session: str) -> None:
    """One pi session: its header, a prompt, then each call an assistant message with a
    toolCall and the toolResult answering it."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    out = _Lines()

    def message(body: dict[str, object]) -> int:
        return out.add({"type": "message", "id": f"e{len(out.lines)}", "message": body})

    out.add({"type": "session", "version": 3, "id": session, "cwd": "/home/dev/p"})
    message({"role": "user", "content": [{"type": "text", "text": "fix the build"}]})
    serial = 0
    for block in blocks:
        first = last = 0
        for _ in range(block.repeats):
            serial += 1
            call = {"type": "toolCall", "id": f"c{serial}", "name": block.tool}
            message({"role": "assistant", "content": [{**call, "arguments": block.arguments}]})
            last = message({"role": "toolResult", "toolCallId": f"c{serial}", "content": "ok"})
            first = first or last
        spans.append((first, last))
    _account(expected, path, blocks, spans, "unknown", out.text())


def cline_file(path: Path, rng: random.Random, expected: Expected, day: str, session: str) -> None:
    """One Cline task (a JSON list, one message a line): the task, then each call an assistant
    message with its tool_use and a user message with its tool_result."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    messages = [json.dumps({"role": "user", "content": "fix the build", "ts": 1})]
    serial = 0
    for block in blocks:
        first = len(messages) + 3  # line 1 "[", the task on 2, then a call and its result
        for _ in range(block.repeats):
            serial += 1
            use = {"type": "tool_use", "id": f"c{serial}", "name": block.tool}
            answer = {"type": "tool_result", "tool_use_id": f"c{serial}", "content": "ok"}
            use_input = {**use, "input": dict(block.arguments)}
            messages.append(json.dumps({"role": "assistant", "content": [use_input]}))
            messages.append(json.dumps({"role": "user", "content": [answer]}))
        spans.append((first, len(messages) + 1))
    body = ",\n".join(messages)
    _account(expected, path, blocks, spans, "unknown", f"[\n{body}\n]\n")


def openhands_events_folder(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One OpenHands V1 conversation folder: ``base_state.json`` and one file an event, a user
    message then each call an ``ActionEvent`` and the ``ObservationEvent`` answering it; a call
    counts at its observation's file, line 1."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    (path / "events").mkdir(parents=True)
    (path / "base_state.json").write_text(json.dumps({"id": session}), encoding="utf-8")
    events: list[dict[str, object]] = [{"kind": "MessageEvent", "source": "user"}]
    for block in blocks:
        for _ in range(block.repeats):
            common = {"tool_name": block.tool, "tool_call_id": f"c{len(events)}"}
            action = {"kind": "ActionEvent", "source": "agent", "action": dict(block.arguments)}
            events.append({**action, **common})
            events.append({"kind": "ObservationEvent", "source": "environment", **common})
        spans.append((1, 1))  # a run is named by its file, the folder (each line is 1)
    for number, event in enumerate(events):
        name = path / "events" / f"event-{number:05d}-x.json"
        name.write_text(json.dumps(event), encoding="utf-8")
    _account(expected, path, blocks, spans, "unknown")


def qwen_code_file(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One Qwen Code chat: a prompt, then each call an assistant record with a functionCall
    part and a tool_result record with its functionResponse."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    out = _Lines()

    def record(kind: str, part: dict[str, object]) -> int:
        body: dict[str, object] = {"uuid": "u", "sessionId": session, "type": kind}
        body["message"] = {"parts": [part]}
        return out.add(body)

    record("user", {"text": "fix the build"})
    serial = 0
    for block in blocks:
        first = last = 0
        for _ in range(block.repeats):
            serial += 1
            call = {"id": f"c{serial}", "name": block.tool, "args": dict(block.arguments)}
            record("assistant", {"functionCall": call})
            answer = {"id": f"c{serial}", "response": {"output": "ok"}}
            last = record("tool_result", {"functionResponse": answer})
            first = first or last
        spans.append((first, last))
    _account(expected, path, blocks, spans, "unknown", out.text())


def _otel_span(
    ident: int, parent: int, start: int, attributes: dict[str, str]
) -> dict[str, object]:
    pairs = [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()]
    span: dict[str, object] = {"traceId": "ab" * 16, "spanId": f"{ident:016x}"}
    span["parentSpanId"] = f"{parent:016x}"
    span.update({"name": "span", "startTimeUnixNano": str(start), "attributes": pairs})
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def otel_genai_file(
    path: Path, rng: random.Random, expected: Expected, day: str, session: str
) -> None:
    """One OTLP/JSON export of GenAI spans, one span a line as the Collector's file exporter
    writes them as they end: each call an ``execute_tool`` span, then the agent run."""
    blocks = _script(rng, rng.randrange(1, 6))
    spans: list[tuple[int, int]] = []  # each block's first and last line
    out = _Lines()
    nanos = int(datetime.datetime.fromisoformat(f"{day}T10:00:00+00:00").timestamp()) * 10**9
    serial = 0
    for block in blocks:
        first = last = 0
        for _ in range(block.repeats):
            serial += 1
            attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": block.tool}
            attributes["gen_ai.tool.call.arguments"] = json.dumps(block.arguments)
            last = out.add(_otel_span(serial + 1, 1, nanos + serial, attributes))
            first = first or last
        spans.append((first, last))
    run = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": session}
    out.add(_otel_span(1, 0, nanos, run))
    _account(expected, path, blocks, spans, day, out.text())


Writer = Callable[[Path, random.Random, Expected, str, str], None]
WRITERS: dict[str, tuple[str, Writer]] = {
    "claude-code": (".jsonl", claude_code_file),
    "acp": (".acp.jsonl", acp_file),
    "codex": (".rollout.jsonl", codex_file),
    "openhands": (".json", openhands_file),
    "swe-agent": (".traj", swe_agent_file),
    "mini-swe-agent": (".traj.json", mini_swe_agent_file),
    "gemini-cli": (".gemini.jsonl", gemini_cli_file),
    "copilot-cli": (".events.jsonl", copilot_cli_file),
    "pi": (".pi.jsonl", pi_file),
    "cline": (".cline.json", cline_file),
    "goose": (".goose.db", goose_file),
    "opencode": (".opencode.db", opencode_file),
    "openhands-events": (".conversation", openhands_events_folder),
    "otel-genai": (".otlp.jsonl", otel_genai_file),
    "qwen-code": (".qwen.jsonl", qwen_code_file),
}
# Formats read line by line, where two lines of garbage cost two diagnostics and nothing else.
LINE_FORMATS = ("acp", "claude-code", "codex", "gemini-cli", "copilot-cli", "pi", "qwen-code")


def write_corpus(root: Path, files: int, seed: int = 7, broken_at: int | None = None) -> Expected:
    """Write ``files`` transcripts under ``root`` (formats in turn, a few per folder) and
    return what their audit must report. ``broken_at``: the index from which the first file in
    a line format gets two lines of garbage in the middle (each a diagnostic; the rest of it
    still counts), named in ``Expected.broken``."""
    rng = random.Random(seed)
    expected = Expected()
    formats = sorted(WRITERS)
    for index in range(files):
        fmt = formats[index % len(formats)]
        suffix, writer = WRITERS[fmt]
        folder = root / f"project-{index // 50:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"session-{index:05d}{suffix}"
        day = f"2026-11-{1 + index % 28:02d}"
        writer(path, rng, expected, day, f"{fmt}-{index:05d}")
        if broken_at is not None and index >= broken_at and expected.broken is None:
            if fmt not in LINE_FORMATS:
                continue
            expected.broken = str(path)
            lines = path.read_bytes().splitlines(keepends=True)
            middle = len(lines) // 2
            garbage = [b"{not json\n", b"\xff\xfe not UTF-8\n"]
            path.write_bytes(b"".join([*lines[:middle], *garbage, *lines[middle:]]))
            expected.runs = [
                (k, f, a + 2 * (a > middle), b + 2 * (b > middle))
                if f == str(path)
                else (k, f, a, b)
                for k, f, a, b in expected.runs
            ]
            expected.diagnostics += 2
    return expected
