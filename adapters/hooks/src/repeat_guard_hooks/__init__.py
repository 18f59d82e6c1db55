"""repeat-guard as a hook of agent hosts: Claude Code, the Codex CLI, and each ``Dialect`` in
``DIALECTS``.

``run_hook`` turns one hook call (the JSON the agent sends on stdin) into the guard's events,
applies them to the per-agent state kept in a SQLite file between hook processes, and returns
the hook's answer: the reminder as ``additionalContext`` for the model's next request, and a
refusal (``permissionDecision: "deny"``) for a call past a configured hard limit.
``install`` and ``uninstall`` add and remove the hook entries in the agent's settings, through
``write_atomically``, the writer every command that replaces a file uses.

Each name is imported from its module when first used, so that a hook process (a new one for
every tool call) never loads the installer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._config_file import CONFIG_LIMIT, read_config_file
    from ._dialects import (
        CLAUDE_CODE,
        CODEX,
        DIALECTS,
        EXIT_BAD_CONFIG,
        HOOK_TIMEOUT_SECONDS,
        TOOL_ROLES,
        AgentEvent,
        Answer,
        Dialect,
        HookInput,
        Role,
        SessionEnded,
        SettingsFile,
        Unused,
        agent_key,
        command_group,
        hook_input_or_reason,
        hook_specific_output,
        parse_hook_input,
        render_answer,
    )
    from ._files import (
        TargetError,
        Terminated,
        check_target,
        termination_raises,
        write_atomically,
    )
    from ._install import (
        InstallError,
        Scope,
        SettingsChange,
        apply_change,
        hook_command,
        install,
        installed_events,
        installed_executable,
        plan_install,
        plan_uninstall,
        scopes,
        settings_path,
        splice_json,
        uninstall,
    )
    from ._run import (
        CONFIG_FILE_NAME,
        LOG_LIMIT,
        HookOptions,
        HookOutcome,
        find_config_file,
        hook_config,
        log_reason,
        resolve_state,
        run_hook,
    )
    from ._store import (
        BUSY_TIMEOUT,
        DEFAULT_EXPIRE_AFTER,
        CorruptStore,
        StoreResult,
        apply_action,
        default_state_path,
        open_store,
        set_aside,
        step_agent,
    )

__all__ = [
    "BUSY_TIMEOUT",
    "CLAUDE_CODE",
    "CODEX",
    "CONFIG_FILE_NAME",
    "CONFIG_LIMIT",
    "DEFAULT_EXPIRE_AFTER",
    "DIALECTS",
    "EXIT_BAD_CONFIG",
    "HOOK_TIMEOUT_SECONDS",
    "LOG_LIMIT",
    "TOOL_ROLES",
    "AgentEvent",
    "Answer",
    "CorruptStore",
    "Dialect",
    "HookInput",
    "HookOptions",
    "HookOutcome",
    "InstallError",
    "Role",
    "Scope",
    "SessionEnded",
    "SettingsChange",
    "SettingsFile",
    "StoreResult",
    "TargetError",
    "Terminated",
    "Unused",
    "agent_key",
    "apply_action",
    "apply_change",
    "check_target",
    "command_group",
    "default_state_path",
    "find_config_file",
    "hook_command",
    "hook_config",
    "hook_input_or_reason",
    "hook_specific_output",
    "install",
    "installed_events",
    "installed_executable",
    "log_reason",
    "open_store",
    "parse_hook_input",
    "plan_install",
    "plan_uninstall",
    "read_config_file",
    "render_answer",
    "resolve_state",
    "run_hook",
    "scopes",
    "set_aside",
    "settings_path",
    "splice_json",
    "step_agent",
    "termination_raises",
    "uninstall",
    "write_atomically",
]

_HOMES = {
    "CONFIG_LIMIT": "._config_file",
    "read_config_file": "._config_file",
    "CLAUDE_CODE": "._dialects",
    "CODEX": "._dialects",
    "DIALECTS": "._dialects",
    "EXIT_BAD_CONFIG": "._dialects",
    "HOOK_TIMEOUT_SECONDS": "._dialects",
    "TOOL_ROLES": "._dialects",
    "AgentEvent": "._dialects",
    "Answer": "._dialects",
    "Dialect": "._dialects",
    "HookInput": "._dialects",
    "Role": "._dialects",
    "SessionEnded": "._dialects",
    "SettingsFile": "._dialects",
    "Unused": "._dialects",
    "agent_key": "._dialects",
    "command_group": "._dialects",
    "hook_input_or_reason": "._dialects",
    "hook_specific_output": "._dialects",
    "parse_hook_input": "._dialects",
    "render_answer": "._dialects",
    "TargetError": "._files",
    "Terminated": "._files",
    "check_target": "._files",
    "termination_raises": "._files",
    "write_atomically": "._files",
    "InstallError": "._install",
    "Scope": "._install",
    "SettingsChange": "._install",
    "apply_change": "._install",
    "hook_command": "._install",
    "install": "._install",
    "installed_events": "._install",
    "installed_executable": "._install",
    "plan_install": "._install",
    "plan_uninstall": "._install",
    "scopes": "._install",
    "settings_path": "._install",
    "splice_json": "._install",
    "uninstall": "._install",
    "CONFIG_FILE_NAME": "._run",
    "LOG_LIMIT": "._run",
    "HookOptions": "._run",
    "HookOutcome": "._run",
    "find_config_file": "._run",
    "hook_config": "._run",
    "log_reason": "._run",
    "resolve_state": "._run",
    "run_hook": "._run",
    "BUSY_TIMEOUT": "._store",
    "DEFAULT_EXPIRE_AFTER": "._store",
    "CorruptStore": "._store",
    "StoreResult": "._store",
    "apply_action": "._store",
    "set_aside": "._store",
    "step_agent": "._store",
    "default_state_path": "._store",
    "open_store": "._store",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
