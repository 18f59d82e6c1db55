"""Script parsing: a good script's values, and every rejection naming where it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repeat_guard_acp_agent import AgentScript, ScriptError, ToolScript, load_script, parse_script
from repeat_guard_agentloop import ToolCallRequest


def test_a_full_script_parses_to_its_values() -> None:
    raw = {
        "tools": {
            "grep": {"kind": "search", "results": ["a", "b"], "permission": True},
            "boom": {"error": "no"},
            "plain": {},
        },
        "sessions": [{"prompts": ["go"], "turns": [[{"tool": "grep", "id": "c9"}], "done"]}],
        "client": {"cwd": "/src", "permissions": ["reject_once", "cancelled"]},
    }
    script = parse_script(raw).unwrap()
    assert script.tools == (
        ToolScript("grep", "search", ("a", "b"), None, True),
        ToolScript("boom", "other", ("ok",), "no", False),
        ToolScript("plain"),
    )
    assert script.sessions[0].turns == ((ToolCallRequest("grep", {}, "c9"),), "done")
    assert script.cwd == "/src"
    assert script.permissions == ("reject_once", "cancelled")
    assert script.tool("plain") == ToolScript("plain")
    assert script.tool("absent") is None


def test_defaults_need_only_sessions() -> None:
    script = parse_script({"sessions": []}).unwrap()
    assert script == AgentScript((), (), "/", ())
    assert parse_script({"tools": {"t": {"results": []}}, "sessions": []}).unwrap().tools == (
        ToolScript("t"),
    )


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ([], "script"),
        ({}, "sessions"),
        ({"sessions": [], "tools": {"t": {"kind": "dance"}}}, "tools.t.kind"),
        ({"sessions": [], "tools": {"t": {"error": 3}}}, "tools.t.error"),
        ({"sessions": [], "tools": {"t": {"permission": "yes"}}}, "tools.t.permission"),
        ({"sessions": [], "tools": {"t": {"results": "x"}}}, "tools.t.results"),
        ({"sessions": [{"prompts": [1], "turns": []}]}, "sessions[0].prompts[0]"),
        ({"sessions": [{"prompts": [], "turns": [[]]}]}, "sessions[0].turns[0]"),
        ({"sessions": [{"prompts": [], "turns": [[{"id": "x"}]]}]}, "sessions[0].turns[0][0].tool"),
        ({"sessions": [], "client": {"cwd": 1}}, "client.cwd"),
        ({"sessions": [], "client": {"permissions": ["maybe"]}}, "client.permissions[0]"),
    ],
)
def test_a_bad_script_names_where_it_went_wrong(raw: object, where: str) -> None:
    error = parse_script(raw).failure()
    assert isinstance(error, ScriptError)
    assert error.where == where
    assert str(error).startswith(f"{where}: ")


def test_load_script_reads_json_and_reports_unreadable_files(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"sessions": []}), encoding="utf-8")
    assert load_script(good).unwrap() == AgentScript((), ())
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert load_script(bad).failure().where == str(bad)
    assert "cannot read" in load_script(tmp_path / "absent.json").failure().message
