"""Record the corpus's polls with the real Codex CLI, Claude Code and Gemini CLI, scripted model.

``python -m bench.record_polls OUT [NAME ...]`` (after ``make e2e`` has installed the pinned
hosts under ``.tools/npm``) records the transcripts named (all when none is): it runs each host
headless, offline, against the test suite's stand-in for its model API on 127.0.0.1
(``tests/adapters/hooks/standins.py``). The scripted model starts a slow job and polls it with
the same call until the job says it is done; the job, the host and every output are real, so
each poll's output is what the host really returned. It writes four transcripts into ``OUT``
with the temporary paths rewritten to ``/home/dev``; Claude Code's records that carry its own
prompt and tool definitions (``attachment``, ``api-request-shape``, ``api-request-blob``) are
left out (the reader uses none of them).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.adapters.hooks.agents import (
    ROOT,
    Host,
    Sandbox,
    configure_codex,
    run_claude,
    run_codex,
    run_gemini,
    trust_project,
)
from tests.adapters.hooks.standins import (
    Call,
    GeminiStandIn,
    MessagesStandIn,
    ResponsesStandIn,
    Say,
    Step,
)

CODEX = Host(ROOT / ".tools/npm/codex/0.171.0/node_modules/.bin/codex", "0.171.0")
CLAUDE = Host(ROOT / ".tools/npm/claude-code/2.1.332/node_modules/.bin/claude", "2.1.332")
GEMINI = Host(ROOT / ".tools/npm/gemini/0.61.0/node_modules/.bin/gemini", "0.61.0")
BUILD = (
    "for i in $(seq 1 12); do echo compiling module $i of 12; sleep 2; done; echo build finished"
)
# A job that outlives the command that starts it (setsid), writing a line every two seconds.
JOB = (
    "setsid nohup sh -c 'for i in $(seq 1 6); do echo {line} $i of 6 >> {log}; sleep 2; done;"
    " echo {last} >> {log}' > /dev/null 2>&1 &"
)
MAX_POLLS = 12
LEFT_OUT = ("attachment", "api-request-shape", "api-request-blob")


def _outputs(request: Mapping[str, Any]) -> list[str]:
    """The Responses API request's tool outputs, in order."""
    items = request.get("input", [])
    return [str(item.get("output")) for item in items if item.get("type") == "function_call_output"]


def codex_build(request: Mapping[str, Any]) -> Step:
    """Start the build, then poll its session with ``write_stdin`` until it exits."""
    outputs = _outputs(request)
    if not outputs:
        return (Call("exec_command", {"cmd": BUILD, "yield_time_ms": 1000}),)
    session = re.search(r"session ID (\d+)", outputs[0])
    if session is None or "Process exited" in outputs[-1] or len(outputs) > MAX_POLLS:
        return Say("The build finished.")
    poll = {"session_id": int(session.group(1)), "chars": "", "yield_time_ms": 1500}
    return (Call("write_stdin", poll),)


def codex_tests(request: Mapping[str, Any]) -> Step:
    """Start the test job, then poll its log with ``sleep 2 && tail`` until it says done."""
    outputs = _outputs(request)
    if not outputs:
        job = JOB.format(line="test batch", last="all tests passed", log="test.log")
        return (Call("exec_command", {"cmd": job}),)
    if "all tests passed" in outputs[-1] or len(outputs) > MAX_POLLS:
        return Say("The tests passed.")
    return (Call("exec_command", {"cmd": "sleep 2 && tail -n 1 test.log"}),)


def _results(request: Mapping[str, Any]) -> list[str]:
    """The Messages API request's tool results, in order, as JSON text."""
    blocks = [
        block
        for message in request.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
    ]
    return [json.dumps(block.get("content")) for block in blocks if block["type"] == "tool_result"]


def claude_migration(request: Mapping[str, Any]) -> Step:
    """Start the migration, then poll its log with ``sleep 2 && tail`` until it says done."""
    if not request.get("tools"):
        return Say("A title")
    results = _results(request)
    if not results:
        job = JOB.format(line="migrated table", last="migration complete", log="migrate.log")
        return (Call("Bash", {"command": job, "description": "Start the migration"}),)
    if "migration complete" in results[-1] or len(results) > MAX_POLLS:
        return Say("The migration is complete.")
    poll = {"command": "sleep 2 && tail -n 1 migrate.log", "description": "Show its progress"}
    return (Call("Bash", poll),)


def _responses(request: Mapping[str, Any]) -> list[str]:
    """The Gemini API request's function responses, in order, as JSON text."""
    parts = [part for content in request.get("contents", []) for part in content.get("parts", [])]
    return [json.dumps(part["functionResponse"]) for part in parts if "functionResponse" in part]


def gemini_deploy(request: Mapping[str, Any]) -> Step:
    """Start the deploy, then poll its log with ``sleep 2 && tail`` until it says done."""
    responses = _responses(request)
    if not responses:
        job = JOB.format(line="deployed service", last="deploy complete", log="deploy.log")
        return (Call("run_shell_command", {"command": job}),)
    if "deploy complete" in responses[-1] or len(responses) > MAX_POLLS:
        return Say("The deploy is complete.")
    return (Call("run_shell_command", {"command": "sleep 2 && tail -n 1 deploy.log"}),)


def _gemini(sandbox: Sandbox) -> Path:
    """Gemini CLI with its own loop detection on, as it ships."""
    with GeminiStandIn(gemini_deploy) as standin:
        run_gemini(GEMINI, sandbox, standin.url, "run the deploy and wait", detect_loops=True)
    return next((sandbox.home / ".gemini").rglob("session-*.json*"))


def _codex(script: Callable[[Mapping[str, Any]], Step], sandbox: Sandbox) -> Path:
    with ResponsesStandIn(script) as standin:
        configure_codex(sandbox, standin.url)
        run_codex(CODEX, sandbox, "run it and wait for it")
    return next((sandbox.home / ".codex" / "sessions").rglob("*.jsonl"))


def _claude(sandbox: Sandbox) -> Path:
    trust_project(sandbox)
    with MessagesStandIn(claude_migration) as standin:
        run_claude(CLAUDE, sandbox, standin.url, "run the migration and wait", allowed=("Bash",))
    return next((sandbox.home / ".claude" / "projects").rglob("*.jsonl"))


def _copy(source: Path, target: Path) -> None:
    """Copy the transcript with its temporary paths rewritten, less the left-out records."""
    kept = []
    for line in source.read_text(encoding="utf-8").splitlines(keepends=True):
        if json.loads(line).get("type") in LEFT_OUT:
            continue
        folder = re.sub(r"-tmp-tmp[a-z0-9_-]+-project", "-home-dev-project", line)
        kept.append(re.sub(r"/tmp/tmp[a-z0-9_]+(/home)?", "/home/dev", folder))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(kept), encoding="utf-8")


def main(out: Path, names: list[str]) -> None:
    """Record the transcripts into ``out`` (those in ``names``, or all when it is empty)."""
    recordings: dict[str, Callable[[Sandbox], Path]] = {
        "codex/poll_write_stdin.jsonl": lambda sandbox: _codex(codex_build, sandbox),
        "codex/poll_sleep_tail.jsonl": lambda sandbox: _codex(codex_tests, sandbox),
        "claude-code/poll_sleep_tail.jsonl": _claude,
        "gemini-cli/poll_sleep_tail.jsonl": _gemini,
    }
    for name, record in recordings.items():
        if names and name not in names:
            continue
        root = Path(tempfile.mkdtemp())
        try:
            _copy(record(Sandbox.create(root)), out / name)
        finally:
            shutil.rmtree(root)
        print(out / name)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
