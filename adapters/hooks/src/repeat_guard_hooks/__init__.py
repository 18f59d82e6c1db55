"""repeat-guard as a hook of Claude Code and the Codex CLI.

``run_hook`` turns one hook call (the JSON the agent sends on stdin) into the guard's events,
applies them to the per-agent state kept in a SQLite file between hook processes, and returns
the hook's answer: the reminder as ``additionalContext`` for the model's next request, and a
refusal (``permissionDecision: "deny"``) for a call past a configured hard limit.
``install`` and ``uninstall`` add and remove the hook entries in the agent's settings.
"""

from ._dialects import (
    DIALECTS,
    AgentEvent,
    Dialect,
    HookInput,
    SessionEnded,
    Unused,
    agent_key,
    parse_hook_input,
    render_answer,
)
from ._install import (
    HOOK_EVENTS,
    HOOK_TIMEOUT_SECONDS,
    SCOPES,
    InstallError,
    Scope,
    SettingsChange,
    apply_change,
    hook_command,
    install,
    installed_executable,
    plan_install,
    plan_uninstall,
    settings_path,
    uninstall,
)
from ._run import (
    CONFIG_FILE_NAME,
    EXIT_BAD_CONFIG,
    HookOptions,
    HookOutcome,
    find_config_file,
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
)

__all__ = [
    "BUSY_TIMEOUT",
    "CONFIG_FILE_NAME",
    "DEFAULT_EXPIRE_AFTER",
    "DIALECTS",
    "EXIT_BAD_CONFIG",
    "HOOK_EVENTS",
    "HOOK_TIMEOUT_SECONDS",
    "SCOPES",
    "AgentEvent",
    "CorruptStore",
    "Dialect",
    "HookInput",
    "HookOptions",
    "HookOutcome",
    "InstallError",
    "Scope",
    "SessionEnded",
    "SettingsChange",
    "StoreResult",
    "Unused",
    "agent_key",
    "apply_action",
    "apply_change",
    "default_state_path",
    "find_config_file",
    "hook_command",
    "install",
    "installed_executable",
    "open_store",
    "parse_hook_input",
    "plan_install",
    "plan_uninstall",
    "render_answer",
    "resolve_state",
    "run_hook",
    "settings_path",
    "uninstall",
]
