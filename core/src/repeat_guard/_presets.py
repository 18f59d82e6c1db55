"""Host presets: the tools each supported host uses to poll a command that is still running.

A poll repeats the same call while the command's output grows, which the back-to-back rule
takes for a loop. ``preset = HOST`` (which ``repeat-guard install HOST`` sets) gives the tools
listed here ``progress = "result"``: a poll whose output changed is progress, an unchanged one
still counts. Everything else keeps the configuration's own settings, and ``preset = "seed"``
(the default) adds nothing: the design note's rule, exactly.

Each entry says where its names were found. A host with no entry here has no polling tool
that was found (its preset adds nothing); its name is still a valid preset.
"""

from __future__ import annotations

__all__ = ["HOST_PRESETS", "NO_PRESET", "PRESETS"]

NO_PRESET = "seed"
"""The preset that adds nothing: the core's own defaults."""

HOST_PRESETS: dict[str, tuple[str, ...]] = {
    # Claude Code: BashOutput read a background shell's output (releases up to 2.0), then
    # TaskOutput; 2.1.332's binary lists TaskOutput, AgentOutputTool, BashOutputTool, AgentOutput
    # and BashOutput among removed tool names, and says a background task's output file is
    # read with Read instead (not listed: a file re-read unchanged is a loop worth seeing).
    "claude-code": ("BashOutput", "TaskOutput", "BashOutputTool", "AgentOutputTool", "AgentOutput"),
    # Codex CLI: write_stdin polls an exec_command session (empty chars: read what it printed
    # since), as recorded with Codex CLI 0.171.0 in tests/data/eval.
    "codex": ("write_stdin",),
    # GitHub Copilot CLI: read_bash reads an async bash session's output (github/copilot-cli
    # issue 4110, release 1.0.70); on Windows the family is read_powershell.
    "copilot": ("read_bash", "read_powershell"),
    # Gemini CLI 0.61.0: read_background_output (static Name in its bundle) reads the output of
    # a process started with run_shell_command in the background.
    "gemini": ("read_background_output",),
    # Qwen Code 0.24.4, Cline 3.0.65, Crush, pi, opencode 1.18.33, OpenClaw: no tool that reads
    # a running command's output again was found in their packages or docs.
    "qwen-code": (),
    "cline": (),
    "crush": (),
    "pi": (),
    "opencode": (),
    "openclaw": (),
}

PRESETS: tuple[str, ...] = (NO_PRESET, *HOST_PRESETS)
"""Every valid value of ``preset``."""
