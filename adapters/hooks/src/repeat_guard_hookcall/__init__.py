"""A hook call before the core: what a ``repeat-guard hook HOST`` process does first.

Every tool call of a host runs one, so this package imports only what passing bytes needs
(``os``, ``sys``; not even ``typing``, which costs a hook call more than the whole call when the
resident guard answers it). ``run_hook_call`` reads the command line the installer writes
without argparse, hands the call to the resident guard of the state file when one is running
(the socket protocol of ``_client``), and otherwise runs ``repeat_guard_hooks.run_hook`` itself,
importing the core only then. The state's paths and the input limit live here because this path
needs them before anything else does.
"""

from __future__ import annotations

from ._client import (
    ACCEPTED,
    ACK_TIMEOUT,
    ANSWER_TIMEOUT,
    DECLINED,
    ask_daemon,
    decode_answer,
    encode_answer,
    encode_hook_request,
    hook_via_daemon,
    start_daemon,
)
from ._limits import INPUT_LIMIT
from ._paths import (
    SOCKET_PATH_LIMIT,
    DaemonPaths,
    daemon_paths,
    default_state_path,
    resolve_state,
)
from ._process import (
    DAEMON_SWITCH,
    HookArguments,
    daemon_command,
    hook_shape,
    parse_hook_arguments,
    run_hook_call,
    run_hook_process,
    silence,
)

__all__ = [
    "ACCEPTED",
    "ACK_TIMEOUT",
    "ANSWER_TIMEOUT",
    "DAEMON_SWITCH",
    "DECLINED",
    "INPUT_LIMIT",
    "SOCKET_PATH_LIMIT",
    "DaemonPaths",
    "HookArguments",
    "ask_daemon",
    "daemon_command",
    "daemon_paths",
    "decode_answer",
    "default_state_path",
    "encode_answer",
    "encode_hook_request",
    "hook_shape",
    "hook_via_daemon",
    "parse_hook_arguments",
    "resolve_state",
    "run_hook_call",
    "run_hook_process",
    "silence",
    "start_daemon",
]
