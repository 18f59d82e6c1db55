"""Each agent host's hook dialect, one row of a table; hook inputs as guard events, reminders as
hook answers.

A host is a ``Dialect``: which of its hook events is what to the guard (``Role``), where the
session, the subagent, the tool and its arguments sit in its input, how an answer is written
back and whether the host wraps the reminder in an envelope of its own, which exit status it
shows as a non-blocking error, and which settings files ``install`` edits with which entries.
Adding a host is one row of ``DIALECTS`` (with a function of its own only where the host truly
differs) and its tests: ``hook_input_or_reason`` and ``render_answer`` read the row and nothing
else, and so does the installer.

Claude Code and Codex send one JSON object per hook call on stdin and read one JSON object on
stdout; Codex adopted Claude Code's field names, so their rows differ only where the hosts do.
Where the answer lands: Claude Code wraps a hook's ``additionalContext`` in its own
``<system-reminder>`` block, so it gets the reminder's body; Codex passes the text on as a
developer message as it is, so it gets the reminder's full text. Either way the model sees one
envelope.

Where a call is counted: at ``PreToolUse``. Run against the real binaries (Claude Code 2.1.197,
Codex 0.171.0), a call that a permission rule or the working-directory check refuses fires
``PreToolUse`` and nothing after it (no ``PostToolUse``, no ``PostToolUseFailure``), while the
``additionalContext`` of a ``PreToolUse`` answer reaches the model in the next request right
after that call's result, exactly where a ``PostToolUse`` answer would. ``PreToolUse`` is
therefore the one hook that sees every attempt, denied ones included, once each.

Results (installed with ``install --results``): ``PostToolUse`` carries the call's
``tool_response``, and becomes ``ToolCallReturned``, which ``progress = "result"`` and the
retry window (``retryWindow``) read; a ``retry`` reminder it brings is the answer to that
result event (``additionalContext``, which Claude Code shows the model beside the result).
Claude Code reports a call that failed (a command exiting non-zero: ``"Exit code 1\\n<its
output>"``) with ``PostToolUseFailure`` and its ``error`` instead, whose result is that error,
kept apart from any response, and ``failed`` (an interrupted call's result is unknown, and
not a failure). Codex 0.171.0 reports a command that exited non-zero with ``PostToolUse``, whose
``tool_response`` is the command's output alone (what it printed, nothing of its exit status:
``"pre-commit: ruff failed\\n"`` for ``echo 'pre-commit: ruff failed' >&2; exit 1``, ``""`` for
``false``), so its results are never ``failed`` (an MCP tool's call that returned an error fires
no ``PostToolUse`` at all). Copilot CLI reports it with ``PostToolUse``
too, ``result_type: "success"``, and the exit code at the end of the text (``copilot_result``).

Agents: a session's main agent is the session id; a call made inside a subagent carries
``agent_id`` (both agents send it, with the parent's ``session_id``), and its agent is
``<session id>/<agent_id>``, so a subagent's chain never mixes with its parent's. Codex also
fires ``UserPromptSubmit`` with the subagent's ``agent_id`` for the task a subagent starts with:
that resets the subagent, never its parent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

from repeat_guard import (
    AgentDisposed,
    Event,
    PromptSubmitted,
    Reminder,
    ToolCallFinished,
    ToolCallReturned,
    json_type_name,
)
from repeat_guard.shell_output import (
    copilot_shell_exit,
    output_failed,
    qwen_responses_without_process_ids,
    responses_without_process_ids,
)
from repeat_guard_hookcall import INPUT_LIMIT

if TYPE_CHECKING:
    from returns.result import Result

__all__ = [
    "CLAUDE_CODE",
    "CLINE",
    "CODEX",
    "COPILOT",
    "CRUSH",
    "CURSOR",
    "DIALECTS",
    "EXIT_BAD_CONFIG",
    "GEMINI",
    "GEMINI_SHELL",
    "GOOSE",
    "HOOK_TIMEOUT_SECONDS",
    "KIRO",
    "QWEN_CODE",
    "QWEN_LABEL",
    "SECRET_HEADER",
    "SECRET_VARIABLE",
    "TOOL_ROLES",
    "AfterCall",
    "AgentEvent",
    "Answer",
    "Dialect",
    "HookInput",
    "HttpHooks",
    "ResultReader",
    "Role",
    "SessionEnded",
    "SettingsFile",
    "Unused",
    "agent_key",
    "as_sent",
    "block_answer",
    "cancel_answer",
    "carries",
    "command_group",
    "context_answer",
    "copilot_answer",
    "copilot_result",
    "decision_answer",
    "exact_matcher",
    "flat_entry",
    "full_matcher",
    "gemini_result",
    "hears_every_result",
    "hook_input_or_reason",
    "hook_path",
    "hook_specific_output",
    "http_group",
    "kiro_hook",
    "labelled_answer",
    "millisecond_group",
    "parse_hook_input",
    "permission_answer",
    "qwen_result",
    "refusal",
    "reminder_text",
    "render_answer",
    "start_group",
    "unmatched_group",
]

Role = Literal[
    "call",
    "after",
    "after-result",
    "after-failure",
    "result",
    "failure",
    "prompt",
    "subagent-end",
    "session-end",
]
"""What a hook event is to the guard: a call about to run (counted, and answered), a call that
ran (``after``: answered with the reminders its ``call`` left, for a host that counts before a
call but hears a reminder only after it; ``after-result``: the same, and the event holds the
call's result, read as a ``result`` event's is; ``after-failure``: the same for a call that
failed, its error read as a ``failure`` event's is), the result of one that ran, the error of one
that failed, the user's prompt (the agent starts over), the end of a subagent (its chain is
dropped), the end of the session (all its chains are)."""
TOOL_ROLES: frozenset[Role] = frozenset(
    {"call", "after", "after-result", "after-failure", "result", "failure"}
)
"""The roles whose events concern one tool call, and whose entries take a tool matcher."""

EXIT_BAD_CONFIG = 1
"""The exit status Claude Code and Codex show as a non-blocking hook error."""
HOOK_TIMEOUT_SECONDS = 10
"""Seconds the host waits for the hook: above the store's busy timeout, so that a hook queued
behind others fails open by itself."""
# Codex clamps SessionEnd hooks to 3 seconds (and warns above it).
_SESSION_END_TIMEOUT = 3

ResultReader = Callable[[str, object], tuple[object, bool]]
"""How a host's result event reads: the tool's name and the value at its ``response_field`` to
the result the guard compares and whether the call failed."""


def as_sent(tool: str, response: object) -> tuple[object, bool]:
    """A result as the host sent it, never failed: for a host whose result event says nothing of
    how the call ended (Codex 0.171.0 sends a command's output alone, whatever its exit
    status)."""
    return response, False


Answer = Callable[[str, str | None, str | None], object]
"""How a host reads an answer: ``(hook event, reminder text or None, deny reason or None)`` to
the JSON value written on stdout, or ``None``: nothing is written (a host with no channel for
what there is to say)."""


class SettingsFile(NamedTuple):
    """One settings file ``install`` can edit: ``scope`` names it on the command line.

    Its folder is ``$<env>`` when ``env`` is set and not empty, else ``folder`` under the
    ``root`` (the current directory or the home directory); the file is ``name`` in it.
    ``note``: what a user should know about it (``install --help`` says it)."""

    scope: str
    root: Literal["cwd", "home"]
    folder: str
    name: str
    env: str | None = None
    note: str = ""


# The hook's own values are NamedTuples, not dataclasses: a hook is a new process for every
# tool call, which defines each class again, and a frozen, slotted dataclass costs about 1 ms to
# define against 0.14 ms for a NamedTuple (measured here). They are as immutable.
class Dialect(NamedTuple):
    """One host's hook dialect: everything about the host the hook and the installer read.

    ``events``: hook event name -> ``Role``, in the order ``install`` writes them; every other
    event is unused. The ``*_field`` values are dotted paths into the input object (``a|b``:
    the value at ``a``, else the one at ``b``).
    ``wraps_context``: the host puts an answer's reminder text into an envelope of its own, so
    it gets the reminder's body (else its whole text, with the core's envelope).
    ``answer``: the JSON value written for a reminder, a refusal or both (``Answer``).
    ``error_status``: the exit status the host shows as an error without stopping the call.
    ``settings``: the files ``install`` edits, the default scope first; ``entry``: the group
    our command is written as, for one event and its role; ``install_note``: what a user must
    still do after ``install`` (on stderr).
    ``prompt_field``: where a prompt event holds the prompt, for a host that also sends the event
    with none (a prompt event then starts the chain over only when the field is not empty).
    ``plugin``: for a host that loads in-process plugins instead of running command hooks (see
    ``PLUGIN_HOSTS``), the plugin module it is given, a file of ``repeat_guard_hooks/plugins``;
    ``install`` lists its path under the settings key ``plugin_key`` (a dotted path: ``a.b``
    is key ``b`` of the object at key ``a``), and sets each dotted path of ``plugin_settings``
    to its value (``uninstall`` takes them out).
    ``http``: for a host that also takes http hooks, how ``install --http`` writes them
    (``HttpHooks``); ``None``: command hooks only.
    ``hook_files``: for a host that runs one hook file per event instead of settings entries,
    event -> the file's name; ``settings`` then names the folders of those files.
    ``read_result``: how the value at ``response_field`` of a ``result`` (or ``after-result``)
    event reads as the
    call's result and whether the call failed (``ResultReader``; a host whose result event
    never says: ``as_sent``); a ``failure`` event always failed.
    ``event_tools``: event -> the tool's name, for a host whose event is one tool and whose
    input names none (Cursor's ``beforeShellExecution``); other events read ``tool_field``.
    ``settings_defaults``: the keys ``install`` writes into a settings file that holds none (a
    new one), beside ``hooks`` (Cursor's ``"version": 1``); ``uninstall`` leaves them.
    ``deny_status``: for a host that reads a refusal from the exit status rather than stdout
    (Kiro CLI: 2), that status; the refusal, with the reminders due, goes to stderr. 0: a
    refusal is written on stdout like any answer.
    ``trigger_field``: for a host whose settings file lists its hooks (``"hooks": [...]``, Kiro
    CLI 3's hooks files) instead of keying them by event, the key of each hook naming its event
    (``entry`` writes it); empty: ``hooks`` is a table of event -> list.
    ``command_field``: where an entry (or a group's hook) holds its command, a dotted path.
    ``legacy_events``: events of ``events`` the host also sends under an older name (Kiro CLI
    2's), read like the others and never written by ``install``.
    ``tool_matcher``: for a host whose entries for a call's result take a tool matcher, the
    matcher (in the host's syntax) that matches exactly the tool names given: ``install``
    without ``--results`` then adds the result events for the preset's polling tools alone.
    ``None``: the host cannot limit them (its preset needs ``--results``).
    """

    name: str
    events: Mapping[str, Role]
    answer: Answer
    wraps_context: bool
    settings: tuple[SettingsFile, ...]
    entry: Callable[[str, Role, str], dict[str, object]]
    event_field: str = "hook_event_name"
    cwd_field: str = "cwd"
    session_field: str = "session_id"
    agent_field: str = "agent_id"
    tool_field: str = "tool_name"
    arguments_field: str = "tool_input"
    response_field: str = "tool_response"
    error_status: int = EXIT_BAD_CONFIG
    install_note: str = ""
    prompt_field: str = ""
    plugin: str = ""
    plugin_key: str = ""
    plugin_settings: Mapping[str, object] = {}
    http: HttpHooks | None = None
    hook_files: Mapping[str, str] = {}
    read_result: ResultReader = as_sent
    event_tools: Mapping[str, str] = {}
    settings_defaults: Mapping[str, object] = {}
    deny_status: int = 0
    trigger_field: str = ""
    command_field: str = "command"
    legacy_events: frozenset[str] = frozenset()
    tool_matcher: Callable[[Sequence[str]], str] | None = None


class AgentEvent(NamedTuple):
    """A guard event for one agent of ``session``."""

    session: str
    event: Event


class SessionEnded(NamedTuple):
    """The session is over: every agent in it is gone."""

    session: str


class AfterCall(NamedTuple):
    """A call of ``agent`` has run: the reminders its ``call`` event left are due now, and
    ``returned``, its result, is the agent's next event (``None``: the event holds none)."""

    session: str
    agent: str
    returned: ToolCallReturned | None = None


class Unused(NamedTuple):
    """A hook event the guard has nothing to do with."""


Action = AgentEvent | SessionEnded | AfterCall | Unused


class HookInput(NamedTuple):
    """The parts of one hook call the guard reads: its event name, ``cwd`` and meaning."""

    hook_event: str
    cwd: str | None
    action: Action


def hook_specific_output(
    hook_event: str, context: str | None, denied: str | None
) -> dict[str, object]:
    """Claude Code's answer (which Codex and others adopted): ``hookSpecificOutput`` with
    ``additionalContext`` for a reminder and ``permissionDecision: "deny"`` with its reason."""
    output = {"hookEventName": hook_event}
    if denied is not None:
        output["permissionDecision"] = "deny"
        output["permissionDecisionReason"] = denied
    if context is not None:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}


def command_group(event: str, role: Role, command: str) -> dict[str, object]:
    """Claude Code's settings entry (which Codex adopted): one matcher group (matcher ``*`` for
    a tool event) holding one command hook, with its timeout in seconds."""
    return _group(role, {"type": "command", "command": command})


def http_group(event: str, role: Role, url: str) -> dict[str, object]:
    """Claude Code's http entry: the group ``command_group`` writes, its hook POSTing the input
    to ``url`` with the secret header, whose value the host reads from ``$SECRET_VARIABLE``
    (listed in ``allowedEnvVars``: the host interpolates no other variable)."""
    hook: dict[str, object] = {
        "type": "http",
        "url": url,
        "headers": {SECRET_HEADER: f"${SECRET_VARIABLE}"},
        "allowedEnvVars": [SECRET_VARIABLE],
    }
    return _group(role, hook)


def start_group(command: str) -> dict[str, object]:
    """The group that runs ``command`` (the one starting the guard) when a session starts."""
    return {"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}]}


def _group(role: Role, hook: dict[str, object]) -> dict[str, object]:
    group: dict[str, object] = {"matcher": "*"} if role in TOOL_ROLES else {}
    timeout = _SESSION_END_TIMEOUT if role == "session-end" else HOOK_TIMEOUT_SECONDS
    group["hooks"] = [{**hook, "timeout": timeout}]
    return group


_PLAIN_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_SPECIAL = frozenset("\\.^$|?+()[]{}")  # what a regular expression reads as more than itself


def exact_matcher(patterns: Sequence[str]) -> str:
    """Claude Code's (and Codex's) matcher for the tools that the core's tool-name
    ``patterns`` match: plain names joined by ``|``, which both hosts read as a list of exact
    names when it holds only letters, digits, ``_`` and ``|`` (anything else makes it a
    regular expression, searched unanchored); else ``full_matcher``'s expression."""
    if all(pattern and set(pattern) <= _PLAIN_NAME for pattern in patterns):
        return "|".join(patterns)
    return full_matcher(patterns)


def full_matcher(patterns: Sequence[str]) -> str:
    """A regular expression matching the whole of each tool name that one of the core's
    tool-name ``patterns`` matches (in a pattern ``*`` is any run of characters, and every
    other character is itself), anchored at both ends: Copilot CLI matches the whole name
    anyway; Claude Code and Codex search for it."""
    alternatives = (
        "".join(".*" if c == "*" else f"\\{c}" if c in _SPECIAL else c for c in pattern)
        for pattern in patterns
    )
    return f"^(?:{'|'.join(alternatives)})$"


def hook_path(host: str, preset: str | None = None) -> str:
    """The path of the resident guard's listener that answers ``host``'s http hooks, with
    ``preset`` standing in for the host's own (``None``: the host's)."""
    return f"/hook/{host}" if preset is None else f"/hook/{host}?preset={preset}"


SECRET_HEADER = "X-Repeat-Guard-Secret"
"""The header an http hook sends the listener's secret in (``_http`` compares it)."""
SECRET_VARIABLE = "REPEAT_GUARD_HTTP_SECRET"
"""The environment variable an http entry reads the secret from (``install --http`` sets it in
the ``env`` of a settings file people do not commit)."""


class HttpHooks(NamedTuple):
    """How ``install --http`` writes a host's http hooks.

    ``entry``: the group for one event, its role and the listener's URL; ``start_event`` and
    ``start_entry``: the event and the group (for the command given) that make sure the guard
    is up, since an http hook with nothing listening is not counted; ``secret_scopes``: for
    each scope, the scope of the settings file whose ``env`` holds the secret (never one that
    is committed)."""

    entry: Callable[[str, Role, str], dict[str, object]]
    start_event: str
    start_entry: Callable[[str], dict[str, object]]
    secret_scopes: Mapping[str, str]


_CLAUDE_CODE_EVENTS: Mapping[str, Role] = {
    "PreToolUse": "call",
    "UserPromptSubmit": "prompt",
    "SubagentStop": "subagent-end",
    "SessionEnd": "session-end",
    "PostToolUse": "result",
    "PostToolUseFailure": "failure",
}

CLAUDE_CODE = Dialect(
    name="claude-code",
    events=_CLAUDE_CODE_EVENTS,
    answer=hook_specific_output,
    wraps_context=True,
    settings=(
        SettingsFile("project", "cwd", ".claude", "settings.json"),
        SettingsFile("local", "cwd", ".claude", "settings.local.json"),
        SettingsFile("user", "home", ".claude", "settings.json"),
    ),
    entry=command_group,
    tool_matcher=exact_matcher,
    # Checked with Claude Code 2.1.332 and 2.1.197: http hooks get the command hook's answers,
    # and a variable set in the ``env`` of settings.local.json reaches their headers.
    http=HttpHooks(
        entry=http_group,
        start_event="SessionStart",
        start_entry=start_group,
        secret_scopes={"project": "local", "local": "local", "user": "user"},
    ),
)

CODEX = CLAUDE_CODE._replace(
    name="codex",
    http=None,
    # Codex reports a failed command with PostToolUse and its output.
    events={k: v for k, v in _CLAUDE_CODE_EVENTS.items() if v != "failure"},
    wraps_context=False,
    settings=(
        SettingsFile("user", "home", ".codex", "hooks.json", env="CODEX_HOME"),
        SettingsFile(
            "project", "cwd", ".codex", "hooks.json", note="read only when the project is trusted"
        ),
    ),
    install_note=(
        "Codex runs a new or changed hook only after you trust it: start `codex`, open /hooks, "
        "and\ntrust the repeat-guard entries. For a one-off automated run you have vetted, "
        "`codex exec\n--dangerously-bypass-hook-trust` runs them untrusted.\n"
    ),
)


def copilot_result(tool: str, response: object) -> tuple[object, bool]:
    """Copilot CLI's ``tool_result`` (``result_type``, ``text_result_for_llm``) as a result,
    and whether the call failed: its ``result_type`` is ``"failure"``, or the text ends saying
    its command completed with an exit code other than 0.

    Copilot CLI 1.0.102 gives a command exiting non-zero ``result_type: "success"`` and says
    the exit code only at the end of the text, after the shell's id, which differs on every
    command: the result keeps the exit code and drops the id (``copilot_shell_exit``, which the
    transcript reader shares), so that the same output of the same command is the same
    result."""
    if not isinstance(response, dict):
        return response, False
    failed = response.get("result_type") == "failure"
    text = response.get("text_result_for_llm")
    ended = copilot_shell_exit(text) if isinstance(text, str) else None
    if ended is None:
        return response, failed
    kept, code = ended
    return {**response, "text_result_for_llm": kept}, failed or code != 0


def copilot_answer(hook_event: str, context: str | None, denied: str | None) -> object:
    """Copilot CLI's answer: Claude Code's, and for a call's result the reminder at the top
    level too. Copilot CLI 1.0.102 reads a postToolUse or postToolUseFailure answer's
    ``additionalContext`` at the top level only (in ``hookSpecificOutput`` alone it never
    reached the model); with it in both places, the model read it once, from the top level,
    and a preToolUse answer's once, from ``hookSpecificOutput``. A preToolUse answer is Claude
    Code's, as it was checked."""
    answer = hook_specific_output(hook_event, context, denied)
    if context is None or hook_event == "PreToolUse":
        return answer
    return {"additionalContext": context, **answer}


# GitHub Copilot CLI, configured with Claude Code's event names (its "VS Code compatible" hook
# format), sends Claude Code's snake_case fields and reads Claude Code's answer, but for a
# postToolUse answer's context (``copilot_answer``); checked with Copilot CLI 1.0.102. A
# subagent's calls carry the subagent's id as ``session_id`` and ``agent_id`` both, with the
# session in ``parent_agent_id`` (its SubagentStop names the session in ``session_id``), so the
# session is ``parent_agent_id`` where there is one. Copilot adds no envelope of its own: the
# model reads "Additional context from preToolUse hook:" and the text after a call's result, or
# the result followed by 'Tool "bash" succeeded. Additional guidance from postToolUse hooks:'
# and the text. A command exiting non-zero is reported with PostToolUse (``copilot_result``),
# never PostToolUseFailure, which Copilot fires for a tool's own error (``view`` of a missing
# path: ``error: "Path does not exist"``; its answer's context follows the result as a user
# message 'Tool "view" failed. Additional guidance from postToolUseFailure hooks:'). A
# preToolUse hook that exits non-zero denies the call, so a bad configuration exits 0.
COPILOT = CLAUDE_CODE._replace(
    name="copilot",
    http=None,
    session_field="parent_agent_id|session_id",
    response_field="tool_result",
    read_result=copilot_result,
    answer=copilot_answer,
    wraps_context=False,
    error_status=0,
    # Copilot CLI reads a matcher as a regular expression matching the whole tool name its
    # hooks' input carries (Bash for its bash, Read for view), as 1.0.102 was seen to.
    tool_matcher=full_matcher,
    settings=(
        SettingsFile(
            "project",
            "cwd",
            os.path.join(".github", "hooks"),
            "repeat-guard.json",
            note="read only in a folder Copilot trusts",
        ),
        SettingsFile("user", "home", os.path.join(".copilot", "hooks"), "repeat-guard.json"),
    ),
    install_note=(
        "Copilot also runs the hooks of .claude/settings.json: where `repeat-guard install\n"
        "claude-code` is in the same project, uninstall one of the two, or every call counts "
        "twice.\n"
    ),
)


def refusal(denied: str, context: str | None) -> str:
    """A refusal's reason with the reminders due at it after a blank line: a host that refuses
    a call runs nothing after it, so the reason is the only text of the call the model reads."""
    return denied if context is None else f"{denied}\n\n{context}"


def decision_answer(hook_event: str, context: str | None, denied: str | None) -> object:
    """Gemini CLI's answer: a refusal is ``decision: "deny"`` with its ``reason`` (the model
    reads it as the call's error, and the reminders with it: no event follows a refused
    call); a reminder is ``hookSpecificOutput.additionalContext``, which Gemini CLI reads from
    ``AfterTool`` only."""
    if denied is not None:
        return {
            "decision": "deny",
            "reason": refusal(denied, context),
        }
    return hook_specific_output(hook_event, context, None)


def millisecond_group(event: str, role: Role, command: str) -> dict[str, object]:
    """``command_group`` with its timeout in milliseconds, as Gemini CLI reads it."""
    group = command_group(event, role, command)
    hooks = group["hooks"]
    assert isinstance(hooks, list)  # command_group's own
    group["hooks"] = [{**hook, "timeout": hook["timeout"] * 1000} for hook in hooks]
    return group


GEMINI_SHELL = "run_shell_command"
"""Gemini CLI's shell tool, whose output says how its command ended."""


def gemini_result(tool: str, response: object) -> tuple[object, bool]:
    """Gemini CLI's ``tool_response`` (``llmContent``, ``returnDisplay``) as a result, less the
    process ids its shell writes anew for every call, and whether the call failed: a
    ``run_shell_command`` whose ``llmContent`` has a failing ``Exit Code:`` line (Gemini CLI
    0.61.0 reports such a call like any other). The same text, and the same rules, as its chat
    records (``repeat_guard.shell_output``, which the transcript reader shares)."""
    return _shell_result(tool, response, responses_without_process_ids)


def qwen_result(tool: str, response: object) -> tuple[object, bool]:
    """Qwen Code's ``PostToolUse`` ``tool_response``, read as ``gemini_result`` reads Gemini
    CLI's (its fork writes the same ``llmContent``), less also what its shell writes anew when
    it starts a command in the background (``qwen_responses_without_process_ids``, the rules
    its chat reader uses)."""
    return _shell_result(tool, response, qwen_responses_without_process_ids)


def _shell_result(
    tool: str, response: object, comparable: Callable[[object], object]
) -> tuple[object, bool]:
    content = response.get("llmContent") if isinstance(response, dict) else None
    failed = tool == GEMINI_SHELL and isinstance(content, str) and output_failed(content)
    return comparable(response), failed


# Gemini CLI counts before a call (BeforeTool, which also sees a call its policy refuses) but
# hands the model a hook's context only after it (AfterTool's additionalContext, appended to
# the call's result inside <hook_context>): the reminders of a BeforeTool wait in the store for
# that call's AfterTool, which also carries the call's result (``tool_response``,
# ``gemini_result``) for every tool, so results need no entry of their own. Its subagents'
# calls carry the session's id and nothing of their own. Checked with Gemini CLI 0.61.0.
GEMINI = Dialect(
    name="gemini",
    events={
        "BeforeTool": "call",
        "AfterTool": "after-result",
        "BeforeAgent": "prompt",
        "SessionEnd": "session-end",
    },
    answer=decision_answer,
    wraps_context=True,
    settings=(
        SettingsFile(
            "project",
            "cwd",
            ".gemini",
            "settings.json",
            note="read only in a folder Gemini CLI trusts",
        ),
        SettingsFile("user", "home", ".gemini", "settings.json"),
    ),
    entry=millisecond_group,
    read_result=gemini_result,
)

QWEN_LABEL = "[repeat-guard] "
"""What Qwen Code's reminders start with: it escapes ``<`` and ``>`` in a hook's text, so no
tag can mark where a reminder begins; this label does."""


def labelled_answer(hook_event: str, context: str | None, denied: str | None) -> object:
    """Qwen Code's answer: Claude Code's, with the reminder after ``QWEN_LABEL``, and put into
    a refusal's reason (Qwen Code drops a ``PreToolUse`` answer's ``additionalContext``, and
    no event follows a refused call)."""
    labelled = None if context is None else f"{QWEN_LABEL}{context}"
    if denied is not None and labelled is not None:
        return hook_specific_output(hook_event, None, refusal(denied, labelled))
    return hook_specific_output(hook_event, labelled, denied)


# Qwen Code sends Claude Code's fields and events, but drops PreToolUse's additionalContext and
# appends PostToolUse's (or PostToolUseFailure's) to the call's result after a blank line, with
# < and > escaped: the reminders PreToolUse counted wait in the store for that call's
# PostToolUse, and carry a label rather than a tag. PostToolUse carries the call's result
# (``tool_response``, Gemini CLI's shape: ``qwen_result``), PostToolUseFailure a failed call's
# ``error`` (a shell command that exits non-zero is one), so results need no entry of their
# own. It fires UserPromptSubmit with an empty prompt before every request that goes on after a
# tool's result; a subagent's calls carry its agent_id. A call its permission check refuses in
# headless mode fires no hook at all, and it halts a run itself at the fifth identical call in a
# row. Checked with Qwen Code 0.24.4.
QWEN_CODE = CLAUDE_CODE._replace(
    http=None,  # its http hooks are not checked yet
    name="qwen-code",
    events={
        "PreToolUse": "call",
        "PostToolUse": "after-result",
        "PostToolUseFailure": "after-failure",
        "UserPromptSubmit": "prompt",
        "SubagentStop": "subagent-end",
        "SessionEnd": "session-end",
    },
    answer=labelled_answer,
    prompt_field="prompt",
    read_result=qwen_result,
    settings=(
        SettingsFile("project", "cwd", ".qwen", "settings.json"),
        SettingsFile("user", "home", ".qwen", "settings.json"),
    ),
)


def cancel_answer(hook_event: str, context: str | None, denied: str | None) -> object:
    """Cline's answer: a reminder is ``context`` (the model reads it in a ``<hook_context>``
    message after the call's result); a refusal is ``cancel: true`` with an ``errorMessage``,
    which in Cline 3.0.65 stops the whole task, not the call alone."""
    if denied is not None:
        return {
            "cancel": True,
            "errorMessage": refusal(denied, context),
        }
    return {"context": context}


def _no_entry(event: str, role: Role, command: str) -> dict[str, object]:
    raise NotImplementedError("Cline's hooks are files, not settings entries")


# Cline (the cline CLI, 3.0.65) runs a hook file per event (``.clinerules/hooks/PreToolUse``,
# ``~/.cline/hooks/PreToolUse``) and names the event in ``hookName`` by its own names. Every
# agent has an ``agent_id`` (a subagent's ``parent_agent_id`` names its parent), and the agents
# of one run share ``sessionContext.rootSessionId``. Its input has no ``cwd``: the workspace root
# is ``workspaceInfo.rootPath``. It looks for hook files in ``.clinerules/hooks`` and
# ``.cline/hooks`` of the workspace, ``$CLINE_DIR/hooks`` (default ``~/.cline``) and
# ``~/Documents/Cline/Hooks``; ``install`` writes them into the first or the third.
CLINE = Dialect(
    name="cline",
    events={
        "tool_call": "call",
        "prompt_submit": "prompt",
        "agent_end": "subagent-end",
        "session_shutdown": "session-end",
    },
    answer=cancel_answer,
    wraps_context=True,
    settings=(
        SettingsFile("project", "cwd", ".clinerules", "hooks", note="a folder of hook files"),
        SettingsFile("user", "home", ".cline", "hooks", env="CLINE_DIR"),
    ),
    entry=_no_entry,
    hook_files={
        "tool_call": "PreToolUse",
        "prompt_submit": "UserPromptSubmit",
        "agent_end": "TaskComplete",
        "session_shutdown": "SessionShutdown",
    },
    event_field="hookName",
    cwd_field="workspaceInfo.rootPath",
    session_field="sessionContext.rootSessionId",
    tool_field="tool_call.name",
    arguments_field="tool_call.input",
)


def context_answer(hook_event: str, context: str | None, denied: str | None) -> object:
    """Crush's answer: a reminder is ``context`` (appended to the call's result after a line
    break); a refusal is ``decision: "deny"`` with its ``reason``, which the model reads as
    the call's error, with the reminders in it (a refused call's ``context`` is dropped). No
    ``decision`` otherwise: ``"allow"`` would skip Crush's permission prompt."""
    if denied is not None:
        return {
            "decision": "deny",
            "reason": refusal(denied, context),
        }
    return {"context": context}


def flat_entry(event: str, role: Role, command: str) -> dict[str, object]:
    """Crush's settings entry: the hook itself, flat in the event's list (no matcher: every
    tool), with its timeout in seconds."""
    return {"command": command, "timeout": HOOK_TIMEOUT_SECONDS}


# Crush, from its documented schema and source (charmbracelet/crush docs/hooks/README.md and
# internal/hooks/input.go, internal/agent/hooked_tool.go at 37f36e9), not run against the
# binary: only PreToolUse, fired for the top-level agent's calls alone (a subagent's calls fire
# no hook; the call that starts one does), with the event's name in ``event``. A hook's
# ``context`` is appended to the call's result as it is, so the reminder goes with the core's
# envelope; a refused call's result is "Tool call blocked by hook. Reason: <reason>". Exit 2
# blocks, 49 halts the turn, any other status is a non-blocking error. There is no prompt
# event: a new prompt does not start a chain over.
CRUSH = Dialect(
    name="crush",
    events={"PreToolUse": "call"},
    answer=context_answer,
    wraps_context=False,
    settings=(
        SettingsFile("project", "cwd", "", "crush.json"),
        SettingsFile(
            "user",
            "home",
            os.path.join(".config", "crush"),
            "crush.json",
            env="CRUSH_GLOBAL_CONFIG",
        ),
    ),
    entry=flat_entry,
    event_field="event",
)


def permission_answer(hook_event: str, context: str | None, denied: str | None) -> object:
    """Cursor's answer: a refusal is ``permission: "deny"`` with the message for the agent
    (the reminders due with it) and for the user, under both spellings Cursor has documented
    (``agent_message``, and ``agentMessage`` in its published types). Nothing otherwise: no
    field of an allowed call's answer is documented to reach the model, and ``"allow"`` would
    skip Cursor's own approval."""
    if denied is None:
        return None
    text = refusal(denied, context)
    return {
        "permission": "deny",
        "agent_message": text,
        "agentMessage": text,
        "user_message": denied,
        "userMessage": denied,
    }


# Cursor, from its documented hook schema (cursor.com/docs/agent/hooks, as the typed mirror
# cursor-hooks 1.1.6 gives it), not run against the binary: Cursor ships no package this
# project can install. Its shell, MCP and file-read events each stand for one tool and the
# first and last name none, so the row names them (``event_tools``); a conversation is
# ``conversation_id``; ``beforeSubmitPrompt`` carries the user's prompt. Calls made inside a
# subagent carry nothing of the subagent's own, so they count in the conversation's chain. No
# documented field of an allowed call's answer reaches the model: the guard can only refuse
# (``denyAt``), and the model reads the reminders with the refusal. ``hooks.json`` must say
# ``"version": 1``.
CURSOR = Dialect(
    name="cursor",
    events={
        "beforeShellExecution": "call",
        "beforeMCPExecution": "call",
        "beforeReadFile": "call",
        "beforeSubmitPrompt": "prompt",
    },
    answer=permission_answer,
    wraps_context=False,
    settings=(
        SettingsFile("project", "cwd", ".cursor", "hooks.json"),
        SettingsFile("user", "home", ".cursor", "hooks.json"),
    ),
    entry=flat_entry,
    event_tools={"beforeShellExecution": "Shell", "beforeReadFile": "Read"},
    session_field="conversation_id",
    arguments_field="tool_input|command|file_path",
    settings_defaults={"version": 1},
)


def block_answer(hook_event: str, context: str | None, denied: str | None) -> object:
    """goose's answer: a refusal is ``decision: "block"`` with its ``reason`` (the reminders due
    with it), which goose hands the model as the call's error; nothing otherwise, since stdout
    is goose's decision channel alone and no field carries text to the model."""
    if denied is None:
        return None
    return {"decision": "block", "reason": refusal(denied, context)}


def unmatched_group(event: str, role: Role, command: str) -> dict[str, object]:
    """goose's settings entry: a group with no matcher (every tool; goose's matcher is a regular
    expression, and ``*`` is none) holding our command hook."""
    return start_group(command)


# goose (block/goose, crates/goose/src/hooks/mod.rs and plugins/discovery.rs, read in their
# source), not run against the binary: hooks are a plugin's ``hooks/hooks.json``, and a plugin
# is a folder of ``.agents/plugins`` in the project or of goose's plugins folder; the input
# names its event in ``event``, with ``session_id``, ``tool_name``, ``tool_input`` and
# ``working_dir``; ``UserPromptSubmit`` carries the prompt. stdout is the decision channel
# alone (``{"decision": "block", "reason": ...}``; anything else is no decision, and goose lets
# the call run): no text reaches the model on an allowed call, so the guard can only refuse.
# A hook exiting 1 makes no decision, and the call runs.
GOOSE = Dialect(
    name="goose",
    events={"PreToolUse": "call", "UserPromptSubmit": "prompt", "SessionEnd": "session-end"},
    answer=block_answer,
    wraps_context=False,
    settings=(
        SettingsFile(
            "project",
            "cwd",
            os.path.join(".agents", "plugins", "repeat-guard", "hooks"),
            "hooks.json",
        ),
        SettingsFile(
            "user",
            "home",
            os.path.join(".agents", "plugins", "repeat-guard", "hooks"),
            "hooks.json",
            note="goose's plugins folder, by default",
        ),
    ),
    entry=unmatched_group,
    event_field="event",
    cwd_field="working_dir",
)


def _no_answer(hook_event: str, context: str | None, denied: str | None) -> object:
    # Kiro CLI reads a refusal from the exit status (``Dialect.deny_status``) and nothing else.
    return None


def kiro_hook(event: str, role: Role, command: str) -> dict[str, object]:
    """Kiro CLI 3's hook, an item of its hooks file's list: named, naming its ``trigger``
    (matcher ``.*``, a regular expression, for a tool event) and running our command, with its
    timeout in seconds."""
    hook: dict[str, object] = {"name": f"repeat-guard-{event}", "trigger": event}
    if role in TOOL_ROLES:
        hook["matcher"] = ".*"
    hook["action"] = {"type": "command", "command": command}
    hook["timeout"] = HOOK_TIMEOUT_SECONDS
    return hook


# Kiro CLI, from its documented schema (kiro.dev/docs/cli/hooks, kiro.dev/docs/cli/v3/hooks and
# kiro.dev/changelog/cli/2-13), not run against the binary: Kiro ships no package this project
# can install. Its input holds ``hook_event_name`` (``preToolUse``, ``userPromptSubmit``),
# ``cwd``, ``tool_name`` and ``tool_input``, and no session: the working directory stands for
# one, so Kiro sessions in one folder share a chain. Exit 2 refuses the call and hands stderr
# to the model; a preToolUse hook's stdout is not documented to reach it, so the guard can only
# refuse. Kiro CLI 2 reads hooks from an agent's configuration (``.kiro/agents/<agent>.json``,
# ``hooks``: which agent is the user's choice, so install writes none; the README gives the
# entries). Kiro CLI 3 reads every hooks file of ``.kiro/hooks/`` (and, for every workspace, of
# ``~/.kiro/hooks/``): ``{"version": "v1", "hooks": [...]}``, each hook naming its ``trigger``,
# the same events with a capital first letter ("case change only"); install writes its own
# file there.
KIRO = Dialect(
    name="kiro",
    events={
        "PreToolUse": "call",
        "UserPromptSubmit": "prompt",
        "preToolUse": "call",
        "userPromptSubmit": "prompt",
    },
    legacy_events=frozenset({"preToolUse", "userPromptSubmit"}),
    answer=_no_answer,
    wraps_context=False,
    settings=(
        SettingsFile("project", "cwd", os.path.join(".kiro", "hooks"), "repeat-guard.json"),
        SettingsFile("user", "home", os.path.join(".kiro", "hooks"), "repeat-guard.json"),
    ),
    entry=kiro_hook,
    trigger_field="trigger",
    command_field="action.command",
    settings_defaults={"version": "v1"},
    install_note=(
        "Kiro CLI 3 reads this hooks file; Kiro CLI 2 reads hooks from an agent's configuration"
        " only: the hooks README gives its entries.\n"
    ),
    session_field="session_id|cwd",
    deny_status=2,
)

DIALECTS: Mapping[str, Dialect] = {
    dialect.name: dialect
    for dialect in (
        CLAUDE_CODE,
        CODEX,
        COPILOT,
        GEMINI,
        QWEN_CODE,
        CLINE,
        CRUSH,
        CURSOR,
        GOOSE,
        KIRO,
    )
}
"""Every host the hook speaks to, by the name ``hook``, ``install`` and ``uninstall`` take."""

# Hosts that load in-process plugins rather than run command hooks: ``install`` lists the
# plugin (the npm package ``adapters/js``, built into ``repeat_guard_hooks/plugins``) in the
# host's settings; the plugin talks to ``repeat-guard serve`` and never runs ``hook``. Checked
# with pi 0.73.1 and opencode 1.18.33.
_PLUGIN_NOTE = (
    "the plugin starts `repeat-guard serve --state` from PATH: keep this repeat-guard on it.\n"
)
PI = CLAUDE_CODE._replace(
    http=None,
    name="pi",
    events={},
    settings=(
        SettingsFile("project", "cwd", ".pi", "settings.json"),
        SettingsFile(
            "user", "home", os.path.join(".pi", "agent"), "settings.json", env="PI_CODING_AGENT_DIR"
        ),
    ),
    plugin="pi.js",
    plugin_key="extensions",
    install_note=_PLUGIN_NOTE,
)
OPENCODE = PI._replace(
    name="opencode",
    settings=(
        SettingsFile("project", "cwd", "", "opencode.json"),
        SettingsFile("user", "home", os.path.join(".config", "opencode"), "opencode.json"),
    ),
    plugin="opencode.js",
    plugin_key="plugin",
)

# OpenClaw loads a plugin listed in ``plugins.load.paths`` (its manifest, openclaw.plugin.json,
# beside it); the plugin's tool-result middleware needs it enabled, and its prompt hook
# conversation access. Checked with openclaw 2026.9.6.
OPENCLAW = PI._replace(
    name="openclaw",
    settings=(
        SettingsFile("user", "home", ".openclaw", "openclaw.json", env="OPENCLAW_STATE_DIR"),
    ),
    plugin="openclaw.js",
    plugin_key="plugins.load.paths",
    plugin_settings={
        "plugins.entries.repeat-guard.enabled": True,
        "plugins.entries.repeat-guard.hooks.allowConversationAccess": True,
    },
)

PLUGIN_HOSTS: Mapping[str, Dialect] = {host.name: host for host in (PI, OPENCODE, OPENCLAW)}
"""The hosts ``install`` and ``uninstall`` give a plugin, by name (``hook`` takes none)."""


def agent_key(session: str, agent_id: str | None) -> str:
    """Return the guard's agent id for a call in ``session`` (by subagent ``agent_id``)."""
    return session if agent_id is None else f"{session}/{agent_id}"


def parse_hook_input(dialect: Dialect, data: bytes) -> Result[HookInput, str]:
    """Return what the hook input ``data`` in ``dialect`` means to the guard, or why it is
    unusable.

    The reason never quotes the input: tool arguments must not reach a log.
    """
    from returns.result import Failure, Success  # noqa: PLC0415  # see hook_input_or_reason

    read = hook_input_or_reason(dialect, data)
    return Failure(read) if isinstance(read, str) else Success(read)


def hook_input_or_reason(dialect: Dialect, data: bytes) -> HookInput | str:
    """Return what ``data`` means to the guard, or why it is unusable: ``parse_hook_input``
    without the ``Result``, which a hook process uses so that it never imports ``returns``
    (a new process for every tool call pays for every import). ``data`` over
    ``INPUT_LIMIT`` bytes is not parsed."""
    if len(data) > INPUT_LIMIT:
        return f"stdin holds more than {INPUT_LIMIT} bytes (INPUT_LIMIT); stood aside"
    try:
        payload: object = json.loads(data)
    except (ValueError, RecursionError):
        return "stdin is not JSON"
    if not isinstance(payload, dict):
        return f"stdin is {json_type_name(payload)}, not a JSON object"
    hook_event = _field(payload, dialect.event_field)
    if not isinstance(hook_event, str):
        return f"{dialect.event_field} is missing or not a string"
    cwd = _field(payload, dialect.cwd_field)
    where = cwd if isinstance(cwd, str) else None
    role = dialect.events.get(hook_event)
    if role is None:
        return HookInput(hook_event, where, Unused())
    ids = (dialect.session_field, dialect.agent_field)
    broken = next((key for key in ids if not _is_unicode(_field(payload, key))), None)
    if broken is not None:
        return f"{hook_event}: {broken} holds a lone surrogate"
    action = _action(dialect, hook_event, role, payload)
    return action if isinstance(action, str) else HookInput(hook_event, where, action)


def _field(payload: Mapping[str, object], path: str) -> object:
    # The value at a dotted path, or None where the path leads nowhere; "a|b": the value at a,
    # else the one at b (a host that moves a field in some events).
    for alternative in path.split("|"):
        value: object = payload
        for key in alternative.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            return value
    return None


# The store keys its rows by the session and agent ids, and SQLite's text is UTF-8, which cannot
# hold a lone surrogate (a valid JSON escape, "\\ud800"): no agent sends one, and such a call
# fails open.
def _is_unicode(value: object) -> bool:
    if not isinstance(value, str):
        return True  # not an id's problem to report here
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _action(
    dialect: Dialect, hook_event: str, role: Role, payload: Mapping[str, object]
) -> Action | str:
    session = _field(payload, dialect.session_field)
    if not isinstance(session, str) or not session:
        return f"{hook_event}: {dialect.session_field} is missing or not a string"
    if role == "session-end":
        return SessionEnded(session)
    agent_id = _field(payload, dialect.agent_field)
    if agent_id is not None and not isinstance(agent_id, str):
        return f"{hook_event}: {dialect.agent_field} is not a string"
    agent = agent_key(session, agent_id)
    if role == "prompt":
        return _prompt(dialect, payload, session, agent)
    if role in _AFTER:
        return _after(dialect, hook_event, role, payload, (session, agent))
    if role == "subagent-end":
        if agent_id is None:
            return f"{hook_event}: {dialect.agent_field} is missing"
        return AgentEvent(session, AgentDisposed(agent))
    return _tool_event(dialect, hook_event, role, payload, (session, agent))


def _after(
    dialect: Dialect,
    hook_event: str,
    role: Role,
    payload: Mapping[str, object],
    where: tuple[str, str],
) -> AfterCall:
    # A call that ran, and for ``after-result`` (``after-failure``) its result (error): one
    # whose tool is not named is no event, but the reminders its call left are still due.
    session, agent = where
    tool = _tool(dialect, hook_event, payload) if role != "after" else None
    if tool is None:
        return AfterCall(session, agent)
    if role == "after-failure":
        return AfterCall(session, agent, _failed(dialect, agent, tool, payload))
    return AfterCall(session, agent, _returned(dialect, agent, tool, payload))


def _prompt(
    dialect: Dialect, payload: Mapping[str, object], session: str, agent: str
) -> AgentEvent | Unused:
    # The user's message to the main agent, or (Codex) the task a subagent starts with; with a
    # prompt_field, only when it holds a prompt (Qwen Code also fires UserPromptSubmit with an
    # empty one before each request that goes on after a tool's result).
    if dialect.prompt_field and not _field(payload, dialect.prompt_field):
        return Unused()
    return AgentEvent(session, PromptSubmitted(agent))


def _tool_event(
    dialect: Dialect,
    hook_event: str,
    role: Role,
    payload: Mapping[str, object],
    where: tuple[str, str],
) -> AgentEvent | str:
    # A call about to run, or the result of one that ran.
    session, agent = where
    tool = _tool(dialect, hook_event, payload)
    if tool is None:
        return f"{hook_event}: {dialect.tool_field} is missing or not a string"
    if role == "call":
        arguments = _field(payload, dialect.arguments_field)
        return AgentEvent(session, ToolCallFinished(agent, tool, arguments))
    if role == "result":
        return AgentEvent(session, _returned(dialect, agent, tool, payload))
    return AgentEvent(session, _failed(dialect, agent, tool, payload))


def _tool(dialect: Dialect, hook_event: str, payload: Mapping[str, object]) -> str | None:
    tool = dialect.event_tools.get(hook_event) or _field(payload, dialect.tool_field)
    return tool if isinstance(tool, str) else None


def _returned(
    dialect: Dialect, agent: str, tool: str, payload: Mapping[str, object]
) -> ToolCallReturned:
    # A result event's call and result, read as the host writes them (Dialect.read_result).
    result, failed = dialect.read_result(tool, _field(payload, dialect.response_field))
    arguments = _field(payload, dialect.arguments_field)
    return ToolCallReturned(agent, tool, arguments, result, failed)


def _failed(
    dialect: Dialect, agent: str, tool: str, payload: Mapping[str, object]
) -> ToolCallReturned:
    # A failure event's call and error. An interrupted call did not fail: it was stopped, and
    # what it would return is unknown.
    failed = payload.get("is_interrupt") is not True
    arguments = _field(payload, dialect.arguments_field)
    return ToolCallReturned(agent, tool, arguments, _error(payload), failed)


def _error(payload: Mapping[str, object]) -> object:
    # Claude Code's PostToolUseFailure: the error as the result, kept apart from any response;
    # None (unknown, never progress) when the input does not say or the call was interrupted.
    error = payload.get("error")
    if error is None or payload.get("is_interrupt") is True:
        return None
    return {"error": error}


def render_answer(
    dialect: Dialect,
    hook_event: str,
    reminders: Sequence[Reminder],
    denied: str | None = None,
) -> bytes:
    """Return the hook's stdout for ``reminders`` and, when the call is refused, the ``denied``
    reason, written as ``dialect`` reads them; empty when there is nothing to say (or the
    event is neither a call, a call's ``after``, nor a call's result, the only ones
    answered)."""
    if dialect.events.get(hook_event) not in _ANSWERED or (not reminders and denied is None):
        return b""
    answer = dialect.answer(hook_event, reminder_text(dialect, reminders), denied)
    if answer is None:
        return b""
    return json.dumps(answer, ensure_ascii=True).encode("ascii") + b"\n"


def reminder_text(dialect: Dialect, reminders: Sequence[Reminder]) -> str | None:
    """The reminders as ``dialect`` gets them (bodies for a host that wraps them in an envelope
    of its own, else whole texts), a blank line apart; ``None`` for none."""
    texts = [r.body if dialect.wraps_context else r.text for r in reminders]
    return "\n\n".join(texts) if texts else None


# A result can bring a reminder too: the retry window's, once a call's failure is reported.
_ANSWERED: frozenset[Role | None] = frozenset(TOOL_ROLES)


def carries(dialect: Dialect) -> bool:
    """Whether ``dialect`` hears a call's reminders only after the call (it has an ``after`` or
    ``after-result`` event): its ``call`` event then leaves them in the store for that event to
    answer."""
    return not _AFTER.isdisjoint(dialect.events.values())


_AFTER: frozenset[Role] = frozenset({"after", "after-result", "after-failure"})


def hears_every_result(dialect: Dialect) -> bool:
    """Whether every call's result reaches ``dialect``'s hook whatever ``install`` adds: the
    event that answers for a call that ran carries it (``after-result``: Gemini CLI's
    ``AfterTool``, Qwen Code's ``PostToolUse``), so ``progress = "result"``, a preset and
    ``retryWindow`` need no ``--results``."""
    return "after-result" in dialect.events.values()
