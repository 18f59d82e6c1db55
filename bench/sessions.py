"""Real-shaped Claude Code sessions for the benchmarks: every record carries the fields Claude
Code 2.1 writes (the shapes of the recorded fixtures in ``tests/adapters/transcripts/fixtures/
claude-code``), and most of a session's bytes are what real ones hold most of: tool results
and file contents, written twice (the ``tool_result`` block the model saw and the record's
``toolUseResult``), thinking blocks with their signatures, and the whole usage of each model
response on every line of it.

``write_projects`` writes a ``projects/<project>/<session>.jsonl`` tree: a few distinct
sessions, each copied under new session ids (as a user's folder of many sessions looks to a
reader: nothing is cached across files), so a large folder is quick to make.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

__all__ = ["session_lines", "write_projects"]

_VERSION = "2.1.197"
_VOCABULARY = (
    "def return import self value the for in if else None class config state result path line "
    "file read write test assert error list dict str int event session call tool reader"
)
_WORDS = _VOCABULARY.split()
_TOOLS = ("Read", "Read", "Bash", "Bash", "Grep", "Edit", "Glob")


def _text(rng: random.Random, size: int) -> str:
    """About ``size`` characters of code-like text, in lines."""
    lines: list[str] = []
    written = 0
    while written < size:
        line = "    " * rng.randrange(3) + " ".join(rng.choices(_WORDS, k=rng.randrange(3, 12)))
        lines.append(line)
        written += len(line) + 1
    return "\n".join(lines)


class _Session:
    """One session being written: the fields every record shares, and the chain of uuids."""

    def __init__(self, rng: random.Random, session: str) -> None:
        self.rng = rng
        self.session = session
        self.parent: str | None = None
        self.clock = 0
        self.lines: list[bytes] = []

    def record(self, fields: dict[str, object]) -> None:
        ident = str(uuid.UUID(int=self.rng.getrandbits(128)))
        self.clock += self.rng.randrange(50, 4000)
        seconds, millis = divmod(self.clock, 1000)
        minutes, seconds = divmod(seconds, 60)
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            **fields,
            "uuid": ident,
            "timestamp": f"2026-12-02T{10 + minutes // 60:02d}:{minutes % 60:02d}:"
            f"{seconds:02d}.{millis:03d}Z",
            "userType": "external",
            "entrypoint": "cli",
            "cwd": "/home/dev/proj",
            "sessionId": self.session,
            "version": _VERSION,
            "gitBranch": "main",
        }
        self.parent = ident
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        self.lines.append(line.encode() + b"\n")

    def prompt(self, turn: str) -> None:
        content = " ".join(self.rng.choices(_WORDS, k=self.rng.randrange(10, 80)))
        message = {"role": "user", "content": content}
        self.record({"promptId": turn, "type": "user", "message": message})

    def assistant(self, message_id: str, blocks: list[dict[str, object]]) -> None:
        """One model response, a line per block, each with the response's whole usage."""
        rng = self.rng
        usage = {
            "input_tokens": rng.randrange(1, 12),
            "cache_creation_input_tokens": rng.randrange(0, 4000),
            "cache_read_input_tokens": rng.randrange(10_000, 150_000),
            "output_tokens": rng.randrange(20, 900),
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        }
        request = f"req_{rng.getrandbits(96):024x}"
        for block in blocks:
            message = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-5-20251101",
                "content": [block],
                "stop_reason": "tool_use" if block["type"] == "tool_use" else None,
                "stop_sequence": None,
                "usage": usage,
            }
            self.record({"message": message, "requestId": request, "type": "assistant"})

    def result(self, turn: str, call: str, tool: str, arguments: dict[str, object]) -> None:
        """A tool's result: what the model saw, and the tool's own record of it."""
        rng = self.rng
        if tool == "Read":
            body = _text(rng, int(rng.lognormvariate(8.6, 1.0)))
            seen = "\n".join(f"{n:6d}\u2192{line}" for n, line in enumerate(body.split("\n"), 1))
            own: dict[str, object] = {
                "type": "text",
                "file": {
                    "filePath": arguments["file_path"],
                    "content": body,
                    "numLines": body.count("\n") + 1,
                    "startLine": 1,
                    "totalLines": body.count("\n") + 1,
                },
            }
        elif tool == "Edit":
            old, new = _text(rng, 200), _text(rng, 260)
            seen = f"The file {arguments['file_path']} has been updated."
            own = {"filePath": arguments["file_path"], "oldString": old, "newString": new}
            own["structuredPatch"] = [{"oldStart": 1, "lines": [old, new]}]
        else:
            seen = _text(rng, int(rng.lognormvariate(6.5, 1.2)))
            own = {"stdout": seen, "stderr": "", "interrupted": False, "isImage": False}
        block = {"tool_use_id": call, "type": "tool_result", "content": seen, "is_error": False}
        self.record(
            {
                "promptId": turn,
                "type": "user",
                "message": {"role": "user", "content": [block]},
                "toolUseResult": own,
            }
        )


def _arguments(rng: random.Random, tool: str) -> dict[str, object]:
    path = f"/home/dev/proj/src/{rng.choice(_WORDS)}_{rng.randrange(40)}.py"
    if tool == "Read":
        return {"file_path": path}
    if tool == "Edit":
        return {"file_path": path, "old_string": _text(rng, 200), "new_string": _text(rng, 260)}
    if tool == "Grep":
        return {"pattern": rng.choice(_WORDS), "path": "src", "output_mode": "content"}
    if tool == "Glob":
        return {"pattern": f"**/*{rng.choice(_WORDS)}*.py"}
    return {"command": f"pytest tests/test_{rng.choice(_WORDS)}.py -q", "description": "Run"}


def session_lines(seed: int, prompts: int = 12) -> list[bytes]:
    """The lines of one session of ``prompts`` prompts, a few to 60 calls each; some calls
    repeat the one before (the loops the guard is for), some run in parallel."""
    rng = random.Random(seed)
    session = _Session(rng, str(uuid.UUID(int=rng.getrandbits(128))))
    for _ in range(prompts):
        turn = str(uuid.UUID(int=rng.getrandbits(128)))
        session.prompt(turn)
        previous: tuple[str, dict[str, object]] | None = None
        for _ in range(rng.randrange(3, 60)):
            message_id = f"msg_{rng.getrandbits(96):024x}"
            blocks: list[dict[str, object]] = []
            if rng.random() < 0.5:
                thought = _text(rng, rng.randrange(200, 3000))
                signature = "".join(rng.choices("ABCDEFGHabcdefgh0123456789+/", k=800))
                blocks.append({"type": "thinking", "thinking": thought, "signature": signature})
            if rng.random() < 0.3:
                blocks.append({"type": "text", "text": _text(rng, rng.randrange(50, 600))})
            calls = []
            for _ in range(1 + (rng.random() < 0.15)):
                if previous is not None and rng.random() < 0.2:
                    tool, arguments = previous
                else:
                    tool = rng.choice(_TOOLS)
                    arguments = _arguments(rng, tool)
                previous = tool, arguments
                call = f"toolu_{rng.getrandbits(96):024x}"
                calls.append((call, tool, arguments))
                blocks.append({"type": "tool_use", "id": call, "name": tool, "input": arguments})
            session.assistant(message_id, blocks)
            for call, tool, arguments in calls:
                session.result(turn, call, tool, arguments)
        session.assistant(f"msg_{rng.getrandbits(96):024x}", [{"type": "text", "text": "Done."}])
    return session.lines


def write_projects(root: Path, megabytes: float, distinct: int = 8) -> int:
    """Write ``projects/`` under ``root``: ``distinct`` sessions copied under new ids (and new
    call ids) until about ``megabytes`` MB are written, in folders of 50 files. Returns the
    bytes written."""
    bodies = [b"".join(session_lines(seed)) for seed in range(distinct)]
    olds = [json.loads(body.split(b"\n", 1)[0])["sessionId"].encode() for body in bodies]
    written = copy = 0
    while written < megabytes * 1_000_000:
        index = copy % distinct
        new = str(uuid.UUID(int=random.Random(copy).getrandbits(128))).encode()
        body = bodies[index].replace(olds[index], new).replace(b'"toolu_', b'"toolu_%d' % copy)
        folder = root / "projects" / f"-home-dev-proj{copy // 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{new.decode()}.jsonl").write_bytes(body)
        written += len(body)
        copy += 1
    return written
