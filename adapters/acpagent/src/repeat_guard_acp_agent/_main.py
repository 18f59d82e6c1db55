"""The two command lines: serve the agent on stdio, and record a run of it.

``python -m repeat_guard_acp_agent --script FILE [--config FILE] [--log FILE]`` serves;
``python -m repeat_guard_acp_agent.record --script FILE --out FILE [--config FILE]`` spawns
that agent, drives it with the script's client side and writes the recorder lines. A bad
script or config is a usage error, reported as argparse reports its own (the usage line and the
reason on stderr, exit status 2) before anything runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

import acp
from returns.pipeline import is_successful

from repeat_guard import GuardConfig
from repeat_guard_agentloop import Event
from repeat_guard_hooks import load_config_file

from ._agent import GuardedAgent, as_acp_agent
from ._recorder import ClientPlan, agent_command, record_agent
from ._script import AgentScript, load_script

__all__ = ["load_config", "record_main", "serve_main"]

_STDIO_LIMIT = 1 << 26


class _UsageError(Exception):
    pass


def load_config(path: str | None) -> GuardConfig:
    """Return the guard config in the JSON or TOML file ``path`` (defaults for ``None``).

    Raises ``ValueError`` with the reason when the file cannot be read or is invalid.
    """
    config = load_config_file(path)
    if not isinstance(config, GuardConfig):
        raise ValueError(str(config))
    return config


def _script(path: str) -> AgentScript:
    loaded = load_script(path)
    if not is_successful(loaded):
        raise ValueError(str(loaded.failure()))
    return loaded.unwrap()


def _parser(prog: str, *, record: bool) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--script", required=True, help="the JSON script the agent plays")
    parser.add_argument("--config", help="the guard config, JSON or TOML (default: defaults)")
    if record:
        parser.add_argument("--out", required=True, help="where to write the recorder lines")
    else:
        parser.add_argument("--log", help="append the session log here as JSONL")
    return parser


def serve_main(argv: Sequence[str] | None = None) -> int:
    """Serve the agent on stdin/stdout until the client closes stdin; return the exit status."""
    parser = _parser("python -m repeat_guard_acp_agent", record=False)
    args = parser.parse_args(argv)
    try:
        script, config = _script(args.script), load_config(args.config)
    except ValueError as error:
        parser.error(str(error))
    with contextlib.ExitStack() as stack:
        log = None if args.log is None else _writer(stack.enter_context(_append(args.log)))
        agent = GuardedAgent(script, config, log=log)
        asyncio.run(_serve_stdio(agent))
    return 0


async def _serve_stdio(agent: GuardedAgent) -> None:
    # The streams are made here, not inside run_agent, so stdout's transport is closed when
    # the client is done instead of lingering until garbage collection.
    reader, writer = await acp.stdio_streams(limit=_STDIO_LIMIT)
    try:
        await acp.run_agent(as_acp_agent(agent), writer, reader)
    finally:
        writer.close()


def _append(path: str) -> IO[str]:
    return open(path, "a", encoding="utf-8")  # closed by the caller's ExitStack


def _writer(target: IO[str]) -> Callable[[Event], None]:
    def write(event: Event) -> None:
        target.write(event.to_json() + "\n")
        target.flush()

    return write


def record_main(argv: Sequence[str] | None = None) -> int:
    """Record a run of the agent for ``--script`` into ``--out``; return the exit status."""
    parser = _parser("python -m repeat_guard_acp_agent.record", record=True)
    args = parser.parse_args(argv)
    try:
        script = _script(args.script)
        load_config(args.config)
    except ValueError as error:
        parser.error(str(error))
    command = agent_command(args.script, args.config)
    plan = ClientPlan.from_script(script)
    recording = asyncio.run(record_agent(command, plan, env=dict(os.environ)))
    Path(args.out).write_bytes(b"".join(recording.lines()))
    return 0
