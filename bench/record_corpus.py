"""Record the corpus's polls and loops with the real Codex CLI, Claude Code, Gemini CLI and
GitHub Copilot CLI and Qwen Code, scripted model.

``python -m bench.record_corpus OUT [NAME ...]`` (after ``make e2e`` has installed the pinned
hosts under ``.tools/npm``) records the transcripts named (all when none is): it runs each host
headless, offline, against the test suite's stand-in for its model API on 127.0.0.1
(``tests/adapters/hooks/standins.py``). In a poll the scripted model starts a slow job and polls
it with the same call until the job says it is done; in a loop it makes the same failing or
unchanged call again and again, as the loops of real trajectories do (a missing command or
module, an edit whose text is not in the file, a failing test run, the same file read again).
The jobs, the host and every output are real, so each output, with whatever the host writes
afresh for every call, is what the host really returned. It writes the transcripts into ``OUT``
with the temporary paths rewritten to ``/home/dev``; Claude Code's records that carry its own
prompt and tool definitions (``attachment``, ``api-request-shape``, ``api-request-blob``) are
left out, and Copilot CLI's system prompt (its ``system.message``) is cut to a placeholder (the
readers use none of them).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.adapters.hooks.agents import (
    ROOT,
    Host,
    Sandbox,
    configure_codex,
    run_claude,
    run_codex,
    run_copilot,
    run_gemini,
    run_qwen,
    texts,
    trust_project,
)
from tests.adapters.hooks.standins import (
    Call,
    ChatCompletionsStandIn,
    GeminiStandIn,
    MessagesStandIn,
    ResponsesStandIn,
    Say,
    Script,
    Step,
)

CODEX = Host(ROOT / ".tools/npm/codex/0.171.0/node_modules/.bin/codex", "0.171.0")
CLAUDE = Host(ROOT / ".tools/npm/claude-code/2.1.332/node_modules/.bin/claude", "2.1.332")
GEMINI = Host(ROOT / ".tools/npm/gemini/0.61.0/node_modules/.bin/gemini", "0.61.0")
COPILOT = Host(ROOT / ".tools/npm/copilot/1.0.102/node_modules/.bin/copilot", "1.0.102")
QWEN = Host(ROOT / ".tools/npm/qwen-code/0.24.4/node_modules/.bin/qwen", "0.24.4")
BUILD = (
    "for i in $(seq 1 12); do echo compiling module $i of 12; sleep 2; done; echo build finished"
)
# Gemini CLI refuses a command holding a command substitution ("command injection detected").
LISTED_BUILD = BUILD.replace("$(seq 1 12)", " ".join(str(n) for n in range(1, 13)))
# A job that outlives the command that starts it (setsid), writing a line every two seconds.
JOB = (
    "setsid nohup sh -c 'for i in $(seq 1 6); do echo {line} $i of 6 >> {log}; sleep 2; done;"
    " echo {last} >> {log}' > /dev/null 2>&1 &"
)
MAX_POLLS = 12
LEFT_OUT = ("attachment", "api-request-shape", "api-request-blob")
CUT = {"system.message": "[Copilot CLI's system prompt, cut]"}
"""Records whose ``data.content`` is replaced by a placeholder, by their ``type``."""


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


def gemini_background(request: Mapping[str, Any]) -> Step:
    """Start the build in the background, then read its output with ``read_background_output``
    (the same pid, one line, after a second) until it says it finished."""
    responses = _responses(request)
    if not responses:
        return (Call("run_shell_command", {"command": LISTED_BUILD, "is_background": True}),)
    pid = re.search(r"PID: (\d+)", responses[0])
    if pid is None or "build finished" in responses[-1] or len(responses) > MAX_POLLS:
        return Say("The build finished.")
    poll = {"pid": int(pid.group(1)), "lines": 1, "delay_ms": 2000}
    return (Call("read_background_output", poll),)


def _tool_messages(request: Mapping[str, Any]) -> list[str]:
    """The Chat Completions request's results of the calls the stand-in asked for (its ids
    ``call_N_M``), in order, as their text: not those of a ``read_bash`` Copilot CLI makes
    itself when a background command ends."""
    return [
        "".join(texts(message))
        for message in request.get("messages", [])
        if message.get("role") == "tool" and str(message.get("tool_call_id")).startswith("call_")
    ]


def _copilot_bash(command: str, **more: object) -> Call:
    return Call("bash", {"command": command, "description": "Run it", **more})


def copilot_lint(request: Mapping[str, Any]) -> Step:
    """Start the lint job, then poll its log with ``sleep 2 && tail`` until it says done."""
    results = _tool_messages(request)
    if not results:
        job = JOB.format(line="linted package", last="lint complete", log="lint.log")
        return (_copilot_bash(job),)
    if "lint complete" in results[-1] or len(results) > MAX_POLLS:
        return Say("The lint is complete.")
    return (_copilot_bash("sleep 2 && tail -n 1 lint.log"),)


def copilot_build(request: Mapping[str, Any]) -> Step:
    """Start the build in an async shell, then read it with ``read_bash`` (after 2 s) five
    times, while it still runs (Copilot CLI ends an async shell with the session)."""
    results = _tool_messages(request)
    if not results:
        return (_copilot_bash(BUILD, mode="async", shellId="build"),)
    if len(results) > 5 or "build finished" in results[-1]:
        return Say("The build is under way.")
    return (Call("read_bash", {"shellId": "build", "delay": 2}),)


def _polled(results: Sequence[str], last: str) -> bool:
    """Whether the newest poll's result (one after the start's, whose command names ``last``
    too) says ``last``."""
    return len(results) > 1 and last in results[-1]


def qwen_deploy(request: Mapping[str, Any]) -> Step:
    """Start the deploy, then poll its log with ``tail`` (2 s apart: Qwen Code 0.24.4 refuses a
    foreground ``sleep 2 && ...``) until it says done."""
    if not request.get("tools"):
        return Say("A title")
    results = _tool_messages(request)
    if not results:
        job = JOB.format(line="deployed service", last="deploy complete", log="deploy.log")
        return (Call("run_shell_command", {"command": job}),)
    if _polled(results, "deploy complete") or len(results) > MAX_POLLS:
        return Say("The deploy is complete.")
    time.sleep(2)  # a model's own time between polls
    return (Call("run_shell_command", {"command": "tail -n 1 deploy.log"}),)


def qwen_background(request: Mapping[str, Any]) -> Step:
    """Start the build with ``is_background`` (Qwen Code 0.24.4 names its output file and says
    to read it), then read that file with ``read_file`` (2 s apart) until the build finished."""
    if not request.get("tools"):
        return Say("A title")
    results = _tool_messages(request)
    if not results:
        return (Call("run_shell_command", {"command": LISTED_BUILD, "is_background": True}),)
    output = re.search(r"output file: (\S+)", results[0])
    if output is None or _polled(results, "build finished") or len(results) > MAX_POLLS:
        return Say("The build finished.")
    time.sleep(2)  # a model's own time between reads; read_file itself does not wait
    return (Call("read_file", {"file_path": output.group(1)}),)


def planned(calls: Sequence[Call], done: Callable[[Mapping[str, Any]], int]) -> Script:
    """A model that makes ``calls`` one after the other, whatever they return (``done``: how
    many results the request holds), then gives up; a request without tools (Claude Code's
    own side question) gets a title."""

    def script(request: Mapping[str, Any]) -> Step:
        if not request.get("tools") and "contents" not in request:
            return Say("A title")
        count = done(request)
        return (calls[count],) if count < len(calls) else Say("I could not get it to work.")

    return script


def _claude_bash(command: str) -> Call:
    return Call("Bash", {"command": command, "description": "Run it"})


CALC = "def total(xs):\n    return sum(xs)\n"
TEST = (
    "import unittest\nfrom calc import total\n\n\nclass T(unittest.TestCase):\n"
    "    def test_total(self):\n        self.assertEqual(total([1, 2]), 4)\n\n\n"
    "unittest.main()\n"
)
SETUP = f"printf '{CALC}' > calc.py && printf '{TEST}' > test_calc.py"
GIT = "git -c user.name=dev -c user.email=dev@example.com"
GIT_SETUP = f"{SETUP} && git init -q && git add -A && {GIT} commit -qm start"
COMMIT = f"{GIT} commit -m 'Fix total'"

CLAUDE_LOOPS: list[Call] = [
    _claude_bash(GIT_SETUP),
    *[_claude_bash("python3 -c 'import yaml_config'")] * 4,
    Call("Read", {"file_path": "{project}/calc.py"}),
    *[
        Call(
            "Edit",
            {
                "file_path": "{project}/calc.py",
                "old_string": "return sum(x)",
                "new_string": "return sum(xs) or 0",
            },
        )
    ]
    * 4,
    *[_claude_bash("python3 test_calc.py")] * 4,
    *[Call("Read", {"file_path": "{project}/calc.py"})] * 3,
    *[_claude_bash(COMMIT)] * 4,
]
"""Claude Code: a module that is not installed imported 4 times, an edit whose text is not in
the file 4 times, a failing test run 4 times, the same file read 3 more times, a commit with
nothing to commit 4 times."""

CODEX_LOOPS: list[Call] = [
    Call("exec_command", {"cmd": SETUP}),
    *[Call("exec_command", {"cmd": "javac Main.java"})] * 5,
    *[Call("exec_command", {"cmd": "python3 test_calc.py"})] * 4,
    *[Call("exec_command", {"cmd": "cat config/settings.yaml"})] * 4,
    *[Call("write_stdin", {"session_id": 7, "chars": "", "yield_time_ms": 1000})] * 4,
]
"""Codex: a source file that is not there compiled 5 times, a failing test run 4 times, a
missing file read 4 times, a session that does not exist polled 4 times."""

GEMINI_LOOPS: list[Call] = [
    Call("run_shell_command", {"command": SETUP}),
    *[Call("run_shell_command", {"command": "javac Main.java"})] * 4,
    Call("read_file", {"file_path": "calc.py"}),
    *[
        Call(
            "replace",
            {
                "file_path": "calc.py",
                "old_string": "return sum(x)",
                "new_string": "return sum(xs) or 0",
                "instruction": "Make total return 0 for an empty list.",
            },
        )
    ]
    * 4,
    *[Call("run_shell_command", {"command": "python3 test_calc.py"})] * 4,
    *[Call("read_file", {"file_path": "config/settings.yaml"})] * 4,
]
"""Gemini CLI: a source file that is not there compiled 4 times, an edit whose text is not in
the file 4 times, a failing test run 4 times, a missing file read 4 times (Gemini CLI's own
loop detection, on as it ships, ends the turn at the 5th identical call, so each loop stops at
4)."""


COPILOT_LOOPS: list[Call] = [
    _copilot_bash(GIT_SETUP),
    *[_copilot_bash("python3 -c 'import yaml_config'")] * 4,
    Call("view", {"path": "{project}/calc.py"}),
    *[
        Call(
            "edit",
            {
                "path": "{project}/calc.py",
                "old_str": "return sum(x)",
                "new_str": "return sum(xs) or 0",
            },
        )
    ]
    * 4,
    *[_copilot_bash("python3 test_calc.py")] * 4,
    *[Call("view", {"path": "{project}/calc.py"})] * 3,
    *[_copilot_bash(COMMIT)] * 4,
]
"""Copilot CLI: Claude Code's loops in its tools (``bash``, ``view``, ``edit``): a module that
is not installed imported 4 times, an edit whose text is not in the file 4 times, a failing
test run 4 times, the same file viewed 3 more times, a commit with nothing to commit 4
times."""

QWEN_LOOPS: list[Call] = [
    Call("run_shell_command", {"command": SETUP}),
    *[Call("run_shell_command", {"command": "javac Main.java"})] * 4,
    Call("read_file", {"file_path": "{project}/calc.py"}),
    *[
        Call(
            "edit",
            {
                "file_path": "{project}/calc.py",
                "old_string": "return sum(x)",
                "new_string": "return sum(xs) or 0",
            },
        )
    ]
    * 4,
    *[Call("run_shell_command", {"command": "python3 test_calc.py"})] * 4,
    *[Call("read_file", {"file_path": "{project}/calc.py"})] * 4,
    *[Call("run_shell_command", {"command": "python3 -c 'import yaml_config'"})] * 4,
]
"""Qwen Code: a source file that is not there compiled 4 times, an edit whose text is not in
the file 4 times, a failing test run 4 times, the same unchanged file read 4 more times, a
module that is not installed imported 4 times (Qwen Code's own loop detection, always on, ends
the run at the 5th identical call in a row, so each loop stops at 4)."""


SLOW_TEST = (
    "import time\nimport unittest\n\n\nclass T(unittest.TestCase):\n"
    "    def test_slow(self):\n        time.sleep(0.05)\n\n\nunittest.main()\n"
)
PASSING_SETUP = f"printf '{SLOW_TEST}' > test_slow.py"
CLAUDE_PASSING: list[Call] = [
    _claude_bash(PASSING_SETUP),
    *[_claude_bash("python3 test_slow.py")] * 4,
    *[_claude_bash("time python3 test_slow.py")] * 4,
]
"""Claude Code: a passing test run 4 times, then the same under the shell's ``time`` 4 times:
each output differs from the last only in its durations (``Ran 1 test in 0.050s``, ``real
0m0.081s``)."""


def claude_read_log(request: Mapping[str, Any]) -> Step:
    """Start the export in the background, then read its log with ``Read`` (Claude Code 2.1.332
    says to read a background task's output file with it) until it says it is done."""
    if not request.get("tools"):
        return Say("A title")
    results = _results(request)
    if not results:
        job = JOB.format(line="exported batch", last="export complete", log="export.log")
        return (Call("Bash", {"command": job, "description": "Start the export"}),)
    if "export complete" in results[-1] or len(results) > MAX_POLLS:
        return Say("The export is complete.")
    time.sleep(2)  # a model's own time between reads; Read itself does not wait
    return (Call("Read", {"file_path": "{project}/export.log"}),)


def _in_project(calls: Sequence[Call], sandbox: Sandbox) -> list[Call]:
    """``calls`` with ``{project}`` in a string argument made the sandbox's project folder."""
    folder = str(sandbox.project)
    return [
        Call(
            call.tool,
            {
                k: v.replace("{project}", folder) if isinstance(v, str) else v
                for k, v in call.arguments.items()
            },
        )
        for call in calls
    ]


def _project_script(script: Script, sandbox: Sandbox) -> Script:
    """``script`` with ``{project}`` in its calls' string arguments made the project folder."""

    def in_project(request: Mapping[str, Any]) -> Step:
        step = script(request)
        return step if isinstance(step, Say) else tuple(_in_project(step, sandbox))

    return in_project


def _gemini(script: Script, sandbox: Sandbox) -> Path:
    """Gemini CLI with its own loop detection on, as it ships."""
    with GeminiStandIn(script) as standin:
        run_gemini(GEMINI, sandbox, standin.url, "get it working", detect_loops=True)
    return next((sandbox.home / ".gemini").rglob("session-*.json*"))


def _codex(script: Script, sandbox: Sandbox) -> Path:
    with ResponsesStandIn(script) as standin:
        configure_codex(sandbox, standin.url)
        run_codex(CODEX, sandbox, "run it and wait for it")
    return next((sandbox.home / ".codex" / "sessions").rglob("*.jsonl"))


def _claude(script: Script, sandbox: Sandbox) -> Path:
    trust_project(sandbox)
    with MessagesStandIn(script) as standin:
        allowed = ("Bash", "Read", "Edit")
        run_claude(CLAUDE, sandbox, standin.url, "get it working", allowed=allowed)
    return next((sandbox.home / ".claude" / "projects").rglob("*.jsonl"))


def _copilot(script: Script, sandbox: Sandbox) -> Path:
    with ChatCompletionsStandIn(script) as standin:
        run_copilot(COPILOT, sandbox, standin.url, "get it working")
    return next((sandbox.home / ".copilot" / "session-state").rglob("events.jsonl"))


def _qwen(script: Script, sandbox: Sandbox) -> Path:
    """Qwen Code with its own loop detection on, as it ships."""
    with ChatCompletionsStandIn(script) as standin:
        run_qwen(QWEN, sandbox, standin.url, "get it working")
    return next((sandbox.home / ".qwen" / "projects").rglob("chats/*.jsonl"))


def _counted(
    results: Callable[[Mapping[str, Any]], list[str]],
) -> Callable[[Mapping[str, Any]], int]:
    return lambda request: len(results(request))


def _copy(source: Path, target: Path) -> None:
    """Copy the transcript with its temporary paths rewritten, less the left-out records."""
    kept = []
    for line in source.read_text(encoding="utf-8").splitlines(keepends=True):
        record = json.loads(line)
        if record.get("type") in LEFT_OUT:
            continue
        text = line
        if record.get("type") in CUT:
            record["data"]["content"] = CUT[record["type"]]
            text = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        folder = re.sub(r"-tmp-tmp[a-z0-9_-]+-project", "-home-dev-project", text)
        kept.append(re.sub(r"/tmp/tmp[a-z0-9_]+(/home)?", "/home/dev", folder))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(kept), encoding="utf-8")


def main(out: Path, names: list[str]) -> None:
    """Record the transcripts into ``out`` (those in ``names``, or all when it is empty)."""
    recordings: dict[str, Callable[[Sandbox], Path]] = {
        "codex/poll_write_stdin.jsonl": lambda sandbox: _codex(codex_build, sandbox),
        "codex/poll_sleep_tail.jsonl": lambda sandbox: _codex(codex_tests, sandbox),
        "claude-code/poll_sleep_tail.jsonl": lambda sandbox: _claude(claude_migration, sandbox),
        "gemini-cli/poll_sleep_tail.jsonl": lambda sandbox: _gemini(gemini_deploy, sandbox),
        "gemini-cli/poll_background_output.jsonl": lambda sandbox: _gemini(
            gemini_background, sandbox
        ),
        "claude-code/poll_read_log.jsonl": lambda sandbox: _claude(
            _project_script(claude_read_log, sandbox), sandbox
        ),
        "claude-code/loops.jsonl": lambda sandbox: _claude(
            planned(_in_project(CLAUDE_LOOPS, sandbox), _counted(_results)), sandbox
        ),
        "claude-code/loop_passing_tests.jsonl": lambda sandbox: _claude(
            planned(CLAUDE_PASSING, _counted(_results)), sandbox
        ),
        "codex/loops.jsonl": lambda sandbox: _codex(
            planned(CODEX_LOOPS, _counted(_outputs)), sandbox
        ),
        "gemini-cli/loops.jsonl": lambda sandbox: _gemini(
            planned(GEMINI_LOOPS, _counted(_responses)), sandbox
        ),
        "copilot-cli/poll_sleep_tail.jsonl": lambda sandbox: _copilot(copilot_lint, sandbox),
        "copilot-cli/poll_read_bash.jsonl": lambda sandbox: _copilot(copilot_build, sandbox),
        "copilot-cli/loops.jsonl": lambda sandbox: _copilot(
            planned(_in_project(COPILOT_LOOPS, sandbox), _counted(_tool_messages)), sandbox
        ),
        "qwen-code/poll_tail.jsonl": lambda sandbox: _qwen(qwen_deploy, sandbox),
        "qwen-code/poll_read_output.jsonl": lambda sandbox: _qwen(qwen_background, sandbox),
        "qwen-code/loops.jsonl": lambda sandbox: _qwen(
            planned(_in_project(QWEN_LOOPS, sandbox), _counted(_tool_messages)), sandbox
        ),
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
