"""Installing the hook: ``install`` and ``uninstall`` add and remove our entries in an agent
host's settings (or, for a host that reads hook files, those files), through
``repeat_guard_files.write_atomically``, the writer every command that replaces a file uses.
Apart from ``repeat_guard_hooks`` so that a hook process never imports it.
"""

from __future__ import annotations

from ._hook_files import HookFilesChange, install_hook_files, uninstall_hook_files
from ._install import (
    HttpInstall,
    InstallError,
    Place,
    Scope,
    SettingsChange,
    apply_change,
    hook_command,
    hook_url,
    install,
    installed_events,
    installed_executable,
    listener_settings,
    plan_install,
    plan_scope,
    plan_secret,
    plan_uninstall,
    plugin_path,
    preset_polls,
    scopes,
    settings_path,
    splice_json,
    start_command,
    uninstall,
)

__all__ = [
    "HookFilesChange",
    "HttpInstall",
    "InstallError",
    "Place",
    "Scope",
    "SettingsChange",
    "apply_change",
    "hook_command",
    "hook_url",
    "install",
    "install_hook_files",
    "installed_events",
    "installed_executable",
    "listener_settings",
    "plan_install",
    "plan_scope",
    "plan_secret",
    "plan_uninstall",
    "plugin_path",
    "preset_polls",
    "scopes",
    "settings_path",
    "splice_json",
    "start_command",
    "uninstall",
    "uninstall_hook_files",
]
