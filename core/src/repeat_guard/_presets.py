"""Host presets: the tools through which each supported host polls a command that is still
running.

A poll repeats the same call while the command's output grows, which the back-to-back rule
takes for a loop. ``preset = HOST`` (which ``repeat-guard install HOST`` sets) gives the tools
listed here ``progress = "result"``: a poll whose output changed is progress, an unchanged one
still counts (a failure after a failure too, whatever its text). Everything else keeps the
configuration's own settings, and ``preset = "seed"`` (the default) adds nothing: the design
note's rule, exactly.

A host's list holds its tools made to read a running command's output, and the tools its agents
poll through in the labelled corpus (``tests/data/eval``, ``make eval``): the shell
(``sleep 2 && tail -n 1 build.log``) and, for Claude Code and Qwen Code, ``Read`` and
``read_file`` of a log that grows. Those
join only where ``make eval`` shows the preset meets both targets on that host's files: every
loop of three identical calls or more reminded by its fifth call, and no reminder on a poll whose
output made progress. Each entry says where its names were found. A host with no entry here has
no polling tool that was found (its preset adds nothing); its name is still a valid preset.
"""

from __future__ import annotations

__all__ = ["HOST_PRESETS", "NO_PRESET", "PRESETS"]

NO_PRESET = "seed"
"""The preset that adds nothing: the core's own defaults."""

HOST_PRESETS: dict[str, tuple[str, ...]] = {
    # Claude Code: BashOutput read a background shell's output (releases up to 2.0), then
    # TaskOutput; 2.1.332's binary lists TaskOutput, AgentOutputTool, BashOutputTool, AgentOutput
    # and BashOutput among removed tool names, and says a background task's output file is
    # read with Read instead. Bash and Read: the polls of tests/data/eval/claude-code
    # (sleep 2 && tail; Read of a growing log, recorded with 2.1.332) are reminded without
    # them, and its five loops (Bash, Edit, Read: an unchanged re-read has an equal result)
    # are reminded at their third call with them.
    "claude-code": (
        "BashOutput",
        "TaskOutput",
        "BashOutputTool",
        "AgentOutputTool",
        "AgentOutput",
        "Bash",
        "Read",
    ),
    # Codex CLI: write_stdin polls an exec_command session (empty chars: read what it printed
    # since), as recorded with Codex CLI 0.171.0 in tests/data/eval; exec_command: its
    # sleep 2 && tail poll there, and its four loops (exec_command, write_stdin) still reminded
    # at their third call: the reader leaves out Codex's Chunk ID and Wall time, and its
    # PostToolUse hook carries the command's output alone. Bash: what Codex 0.171.0 calls
    # exec_command in its hooks' input (tool_name "Bash", tool_input {"command": ...}; its
    # hooks hear nothing of write_stdin), so a hook's PostToolUse matcher hears the shell.
    "codex": ("write_stdin", "exec_command", "Bash"),
    # GitHub Copilot CLI: read_bash reads an async bash session's output (github/copilot-cli
    # issue 4110, release 1.0.70); on Windows the family is read_powershell. bash: its shell,
    # as its session events name it; its sleep 2 && tail and read_bash polls in tests/data/eval
    # (recorded with 1.0.102) are reminded without it, and its five loops (bash, edit, view)
    # still at their third call with it: the reader drops the shell id of the result's last
    # line and marks a non-zero exit failed. Bash: what 1.0.102 calls bash in its hooks' input,
    # which its PostToolUse matcher is matched against (^(?:bash)$ matched nothing there).
    "copilot": ("read_bash", "read_powershell", "bash", "Bash"),
    # Gemini CLI 0.61.0: read_background_output (static Name in its bundle) reads the output of
    # a process started with run_shell_command in the background; run_shell_command: its
    # sleep 2 && tail poll in tests/data/eval, and its loops there still reminded at their third
    # call (the reader leaves out the response id and process ids, and marks a failing Exit
    # Code as failed); its AfterTool hook carries the same output, read by the same rules.
    "gemini": ("read_background_output", "run_shell_command"),
    # Qwen Code 0.24.4: task_list, the one tool its own loop detection reads results of
    # (STATEFUL_READ_TOOLS in its bundle: "identical arguments whose results keep changing are
    # productive polling"); run_shell_command (its shell, Gemini CLI's name) and read_file: its
    # polls in tests/data/eval, tail of a growing log and read_file of the output file a
    # background command writes (its shell's answer says to read that file; it refuses a
    # foreground sleep 2 && ...), and its five loops there (run_shell_command, edit, read_file:
    # an unchanged re-read answers "unchanged since last read" each time) still reminded at
    # their third call; its PostToolUse hook carries the same output.
    "qwen-code": ("task_list", "run_shell_command", "read_file"),
    # Cline 3.0.65, Crush, pi, opencode 1.18.33, OpenClaw: no tool that reads a running
    # command's output again was found in their packages or docs.
    "cline": (),
    "crush": (),
    "pi": (),
    "opencode": (),
    "openclaw": (),
}

PRESETS: tuple[str, ...] = (NO_PRESET, *HOST_PRESETS)
"""Every valid value of ``preset``."""
