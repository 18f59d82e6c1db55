"""repeat-guard-acp-agent: the guarded agent loop served as an ACP agent, and a frame recorder.

Each ACP session is an agent of one ``AgentLoop`` with the guard installed; its session-log
events stream out as ACP frames, the guard's reminders as the same ``user_message_chunk``
notifications ``repeat-guard replay --annotate`` writes. The recorder drives such an agent with
the SDK's client side and keeps every frame, so a replay of the recording can be compared with
what the live loop injected.
"""

from ._agent import AGENT_NAME, GuardedAgent, as_acp_agent, session_reminder
from ._main import load_config, record_main, serve_main
from ._recorder import ClientPlan, Frame, Recording, agent_command, record_agent, record_streams
from ._script import (
    AgentScript,
    ScriptError,
    SessionScript,
    ToolScript,
    load_script,
    parse_script,
)

__all__ = [
    "AGENT_NAME",
    "AgentScript",
    "ClientPlan",
    "Frame",
    "GuardedAgent",
    "Recording",
    "ScriptError",
    "SessionScript",
    "ToolScript",
    "agent_command",
    "as_acp_agent",
    "load_config",
    "load_script",
    "parse_script",
    "record_agent",
    "record_main",
    "record_streams",
    "serve_main",
    "session_reminder",
]
