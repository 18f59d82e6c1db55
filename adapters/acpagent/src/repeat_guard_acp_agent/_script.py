"""The script file: what the scripted model answers, what each tool returns, and what the
recording client says.

One JSON object::

    {"tools": {"todo_write": {"kind": "think", "result": "ok"}},
     "sessions": [{"prompts": ["Plan the work."], "turns": [[{"tool": "todo_write",
                   "arguments": {"todos": []}}], "Done."]}],
     "client": {"cwd": "/home/dev/project", "permissions": ["allow_once"]}}

A turn is a text (it ends the agent's turn) or a list of tool calls. A tool has a ``kind`` (an
ACP tool kind, ``"other"`` by default), a ``result`` or a list of ``results`` (played in order,
the last one repeating), or an ``error`` it raises, and ``"permission": true`` when the agent
must ask the client before running it. The agent's n-th ``session/new`` plays the n-th session.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from acp.schema import PermissionOptionKind, ToolKind
from returns.result import Failure, Result, Success

from repeat_guard_agentloop import ModelTurn, ToolCallRequest

__all__ = [
    "AgentScript",
    "ScriptError",
    "SessionScript",
    "ToolScript",
    "load_script",
    "parse_script",
]

PermissionAnswer = PermissionOptionKind | Literal["cancelled"]
_KINDS: frozenset[str] = frozenset(get_args(ToolKind))
_ANSWERS: frozenset[str] = frozenset((*get_args(PermissionOptionKind), "cancelled"))


@dataclass(frozen=True, slots=True)
class ScriptError:
    """Why a script was rejected: where in the file, and what was wrong."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass(frozen=True, slots=True)
class ToolScript:
    """How one tool behaves: its ACP kind, its results (or the error it raises)."""

    name: str
    kind: ToolKind = "other"
    results: tuple[object, ...] = ("ok",)
    error: str | None = None
    permission: bool = False


@dataclass(frozen=True, slots=True)
class SessionScript:
    """One session: the prompts the client sends and the turns the model plays."""

    prompts: tuple[str, ...]
    turns: tuple[ModelTurn, ...]


@dataclass(frozen=True, slots=True)
class AgentScript:
    """A whole script: the tools, the sessions in order, and the client's side."""

    tools: tuple[ToolScript, ...]
    sessions: tuple[SessionScript, ...]
    cwd: str = "/"
    permissions: tuple[PermissionAnswer, ...] = ()

    def tool(self, name: str) -> ToolScript | None:
        """Return the script of the tool ``name``, or ``None`` when the script has none."""
        return next((tool for tool in self.tools if tool.name == name), None)


class _Invalid(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.error = ScriptError(where, message)


def load_script(path: str | Path) -> Result[AgentScript, ScriptError]:
    """Return the script in the JSON file ``path``, or why it cannot be used."""
    try:
        raw: object = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return Failure(ScriptError(str(path), f"cannot read the script: {error}"))
    return parse_script(raw)


def parse_script(raw: object) -> Result[AgentScript, ScriptError]:
    """Return the script that the decoded JSON ``raw`` describes, or its first error."""
    try:
        top = _mapping(raw, "script")
        tools = tuple(
            _tool(name, spec) for name, spec in _mapping(top.get("tools", {}), "tools").items()
        )
        sessions = tuple(
            _session(item, f"sessions[{index}]")
            for index, item in enumerate(_list(top.get("sessions"), "sessions"))
        )
        client = _mapping(top.get("client", {}), "client")
        cwd = _text(client.get("cwd", "/"), "client.cwd")
        answers = tuple(
            _answer(item, f"client.permissions[{index}]")
            for index, item in enumerate(_list(client.get("permissions", []), "client.permissions"))
        )
    except _Invalid as invalid:
        return Failure(invalid.error)
    return Success(AgentScript(tools, sessions, cwd, answers))


def _mapping(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise _Invalid(where, f"must be an object, got {value!r}")
    return value


def _list(value: object, where: str) -> list[object]:
    if not isinstance(value, list):
        raise _Invalid(where, f"must be a list, got {value!r}")
    return value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise _Invalid(where, f"must be a string, got {value!r}")
    return value


def _tool(name: str, raw: object) -> ToolScript:
    where = f"tools.{name}"
    spec = _mapping(raw, where)
    kind = spec.get("kind", "other")
    if kind not in _KINDS:
        raise _Invalid(f"{where}.kind", f"must be one of {sorted(_KINDS)}, got {kind!r}")
    if "results" in spec:
        results = tuple(_list(spec["results"], f"{where}.results")) or ("ok",)
    else:
        results = (spec.get("result", "ok"),)
    error = spec.get("error")
    if error is not None:
        error = _text(error, f"{where}.error")
    permission = spec.get("permission", False)
    if not isinstance(permission, bool):
        raise _Invalid(f"{where}.permission", f"must be true or false, got {permission!r}")
    return ToolScript(name, kind, results, error, permission)  # type: ignore[arg-type]  # kind checked


def _session(raw: object, where: str) -> SessionScript:
    spec = _mapping(raw, where)
    prompts = tuple(
        _text(item, f"{where}.prompts[{index}]")
        for index, item in enumerate(_list(spec.get("prompts"), f"{where}.prompts"))
    )
    turns = tuple(
        _turn(item, f"{where}.turns[{index}]")
        for index, item in enumerate(_list(spec.get("turns"), f"{where}.turns"))
    )
    return SessionScript(prompts, turns)


def _turn(raw: object, where: str) -> ModelTurn:
    if isinstance(raw, str):
        return raw
    calls = _list(raw, where)
    if not calls:
        raise _Invalid(where, "a turn of tool calls needs at least one call")
    return tuple(_call(item, f"{where}[{index}]") for index, item in enumerate(calls))


def _call(raw: object, where: str) -> ToolCallRequest:
    spec = _mapping(raw, where)
    tool = _text(spec.get("tool"), f"{where}.tool")
    call_id = _text(spec.get("id", ""), f"{where}.id")
    return ToolCallRequest(tool, spec.get("arguments", {}), call_id)


def _answer(raw: object, where: str) -> PermissionAnswer:
    if raw not in _ANSWERS:
        raise _Invalid(where, f"must be one of {sorted(_ANSWERS)}, got {raw!r}")
    return raw  # type: ignore[return-value]  # checked against the literal values above
