"""Scripted stand-ins for the Anthropic Messages API, the OpenAI Responses and Chat Completions
APIs and the Gemini API.

The real agent binaries talk to these on 127.0.0.1 instead of a model. Each stand-in logs every
request it receives (what reached the "model") and answers with what its script decides from
the conversation so far, streamed the way the real API streams it. The script is a function of
the request alone, so side requests (a title, a token count) and the order in which parallel
agents ask cannot throw it off.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self

__all__ = [
    "Call",
    "ChatCompletionsStandIn",
    "GeminiStandIn",
    "MessagesStandIn",
    "ResponsesStandIn",
    "Say",
    "Step",
    "growing_log",
]


@dataclass(frozen=True, slots=True)
class Call:
    """Ask for one tool call (``namespace``: the Responses API's tool namespace, if any)."""

    tool: str
    arguments: Mapping[str, object]
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class Say:
    """Answer with text and end the turn."""

    text: str


Step = tuple[Call, ...] | Say
Script = Callable[[Mapping[str, Any]], Step]


def growing_log(
    log: Path,
    lines: Sequence[str],
    poll: Step,
    done: Callable[[Mapping[str, Any]], int],
    *,
    grows: bool = True,
) -> Script:
    """The script of a poll of a build's log repeated once for each of ``lines``: before the
    poll that follows ``done(request)`` results, the build (the script, as the build would)
    writes that line to ``log`` when it ``grows``; after the last poll's result, ``done``."""

    def script(request: Mapping[str, Any]) -> Step:
        count = done(request)
        if count >= len(lines):
            return Say("done")
        if grows:
            with log.open("a") as file:
                file.write(lines[count] + "\n")
        return poll

    return script


class _StandIn:
    path = ""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count()
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._send(200, "application/json", b"{}")

            def do_HEAD(self) -> None:
                self._send(200, "application/json", b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                try:
                    request = json.loads(body or b"{}")
                except ValueError:
                    request = {}
                path = self.path.split("?")[0]
                with stand_in._lock:
                    stand_in.requests.append({"path": path, "body": request})
                if not stand_in.is_turn(path):
                    self._send(200, "application/json", stand_in.other(path))
                    return
                step = stand_in.script(request)
                with stand_in._lock:
                    first_id = next(stand_in._ids)
                events = b"".join(stand_in.stream(step, first_id))
                self._send(200, "text/event-stream", events)

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def model_requests(self) -> list[dict[str, Any]]:
        """The bodies of the requests that asked the scripted model for a turn."""
        with self._lock:
            return [r["body"] for r in self.requests if self.is_turn(r["path"])]

    def is_turn(self, path: str) -> bool:
        """Whether a request to ``path`` asks the scripted model for a turn."""
        return path == self.path

    def other(self, path: str) -> bytes:
        return b"{}"

    def stream(self, step: Step, first_id: int) -> Iterator[bytes]:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


def _sse(event: str, data: Mapping[str, object]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class MessagesStandIn(_StandIn):
    """The Anthropic Messages API (``POST /v1/messages``, streamed), for Claude Code."""

    path = "/v1/messages"

    def other(self, path: str) -> bytes:
        if path.endswith("/count_tokens"):
            return b'{"input_tokens": 10}'
        return b"{}"

    def stream(self, step: Step, first_id: int) -> Iterator[bytes]:
        message: dict[str, object] = {
            "id": f"msg_{first_id:04d}",
            "type": "message",
            "role": "assistant",
            "model": "stand-in",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        yield _sse("message_start", {"type": "message_start", "message": message})
        if isinstance(step, Say):
            block: dict[str, object] = {"type": "text", "text": ""}
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            )
            delta = {"type": "text_delta", "text": step.text}
            yield _sse(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
            stop = "end_turn"
        else:
            for index, call in enumerate(step):
                block = {
                    "type": "tool_use",
                    "id": f"toolu_{first_id:03d}_{index}",
                    "name": call.tool,
                    "input": {},
                }
                yield _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                )
                delta = {"type": "input_json_delta", "partial_json": json.dumps(call.arguments)}
                yield _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
                yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
            stop = "tool_use"
        yield _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
        yield _sse("message_stop", {"type": "message_stop"})


class ResponsesStandIn(_StandIn):
    """The OpenAI Responses API (``POST /v1/responses``, streamed), for the Codex CLI."""

    path = "/v1/responses"

    def stream(self, step: Step, first_id: int) -> Iterator[bytes]:
        response_id = f"resp_{first_id:04d}"
        items: list[dict[str, object]]
        if isinstance(step, Say):
            items = [
                {
                    "type": "message",
                    "id": f"msg_{first_id:04d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}],
                }
            ]
        else:
            items = [
                {
                    "type": "function_call",
                    "id": f"fc_{first_id:03d}_{index}",
                    "call_id": f"call_{first_id:03d}_{index}",
                    "name": call.tool,
                    **({} if call.namespace is None else {"namespace": call.namespace}),
                    "arguments": json.dumps(call.arguments),
                    "status": "completed",
                }
                for index, call in enumerate(step)
            ]
        created = {"id": response_id, "object": "response", "status": "in_progress", "output": []}
        yield _sse("response.created", {"type": "response.created", "response": created})
        for index, item in enumerate(items):
            yield _sse(
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": index, "item": item},
            )
            yield _sse(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        done = {**created, "status": "completed", "output": items, "usage": usage}
        yield _sse("response.completed", {"type": "response.completed", "response": done})


class ChatCompletionsStandIn(_StandIn):
    """The OpenAI Chat Completions API (``POST /v1/chat/completions``, streamed), for Copilot
    CLI and Cline."""

    path = "/v1/chat/completions"

    def other(self, path: str) -> bytes:
        return b'{"object": "list", "data": [{"id": "gpt-4.1", "object": "model"}]}'

    def stream(self, step: Step, first_id: int) -> Iterator[bytes]:
        delta: dict[str, object]
        if isinstance(step, Say):
            delta, finish = {"role": "assistant", "content": step.text}, "stop"
        else:
            calls = [
                {
                    "index": index,
                    "id": f"call_{first_id:03d}_{index}",
                    "type": "function",
                    "function": {"name": call.tool, "arguments": json.dumps(call.arguments)},
                }
                for index, call in enumerate(step)
            ]
            delta, finish = (
                {"role": "assistant", "content": None, "tool_calls": calls},
                "tool_calls",
            )
        chunk: dict[str, object] = {"id": f"chatcmpl_{first_id:04d}", "created": 0}
        chunk |= {"object": "chat.completion.chunk", "model": "stand-in"}
        choice = {"index": 0, "delta": delta, "finish_reason": None}
        yield _data({**chunk, "choices": [choice]})
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        done = {"index": 0, "delta": {}, "finish_reason": finish}
        yield _data({**chunk, "choices": [done], "usage": usage})
        yield b"data: [DONE]\n\n"


def _data(data: Mapping[str, object]) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


class GeminiStandIn(_StandIn):
    """The Gemini API (``POST /v1beta/models/<model>:streamGenerateContent``, streamed), for
    Gemini CLI. Its other requests (``:generateContent``, the model router's question) get a
    text answer that routes nowhere, and ``:countTokens`` a count."""

    def is_turn(self, path: str) -> bool:
        return path.endswith(":streamGenerateContent")

    def other(self, path: str) -> bytes:
        if path.endswith(":countTokens"):
            return b'{"totalTokens": 10}'
        return json.dumps(_candidate([{"text": "{}"}])).encode()

    def stream(self, step: Step, first_id: int) -> Iterator[bytes]:
        if isinstance(step, Say):
            parts: list[dict[str, object]] = [{"text": step.text}]
        else:
            parts = [{"functionCall": {"name": c.tool, "args": c.arguments}} for c in step]
        yield _data(_candidate(parts))


def _candidate(parts: list[dict[str, object]]) -> dict[str, object]:
    content = {"role": "model", "parts": parts}
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    candidate = {"content": content, "finishReason": "STOP", "index": 0}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "stand-in"}
