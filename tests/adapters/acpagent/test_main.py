"""The command lines: configs, bad input before anything runs, and a recorded demo run."""

from __future__ import annotations

import asyncio
import importlib
import json
import runpy
import socket
import sys
import threading
from pathlib import Path

import pytest

from repeat_guard import GuardConfig
from repeat_guard_acp_agent import (
    ClientPlan,
    Recording,
    agent_command,
    load_config,
    load_script,
    record_main,
    record_streams,
    serve_main,
)

DEMO = (
    Path(__file__).parents[3] / "adapters/acpagent/src/repeat_guard_acp_agent/data/demo_script.json"
)


def test_load_config_reads_json_and_toml_and_names_bad_files(tmp_path: Path) -> None:
    assert load_config(None) == GuardConfig()
    as_json = tmp_path / "guard.json"
    as_json.write_text(json.dumps({"thresholds": [2, 4]}), encoding="utf-8")
    assert load_config(str(as_json)).thresholds == (2, 4)
    as_toml = tmp_path / "guard.toml"
    as_toml.write_text('exclude = ["todo_write"]\n', encoding="utf-8")
    assert load_config(str(as_toml)).exclude == ("todo_write",)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"thresholds": [1]}), encoding="utf-8")
    with pytest.raises(ValueError, match="thresholds must be 2 or more"):
        load_config(str(bad))
    with pytest.raises(ValueError, match="cannot read config file"):
        load_config(str(tmp_path / "absent.json"))


def test_a_bad_script_or_config_exits_2_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    absent = str(tmp_path / "absent.json")
    with pytest.raises(SystemExit) as exited:
        serve_main(["--script", absent])
    assert exited.value.code == 2  # argparse's usage status: the one definition of it
    assert "cannot read the script" in capsys.readouterr().err
    out = str(tmp_path / "out.jsonl")
    with pytest.raises(SystemExit) as exited:
        record_main(["--script", str(DEMO), "--config", absent, "--out", out])
    assert exited.value.code == 2
    assert "cannot read config file" in capsys.readouterr().err
    assert not Path(out).exists()


def test_record_main_writes_a_recording_of_the_spawned_agent(tmp_path: Path) -> None:
    out = tmp_path / "demo.jsonl"
    log = tmp_path / "log.jsonl"
    assert record_main(["--script", str(DEMO), "--out", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {record["dir"] for record in records} == {"c2a", "a2c"}
    assert records[0]["msg"]["method"] == "initialize"
    assert records[-1]["msg"]["result"] == {"stopReason": "end_turn"}
    assert not log.exists()


def test_serve_main_serves_stdio_and_appends_the_session_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stdin and stdout become sockets, so the real stdio entry point runs in this process.
    stdin_agent, stdin_client = socket.socketpair()
    stdout_agent, stdout_client = socket.socketpair()
    agent_stdin, agent_stdout = stdin_agent.makefile("rb"), stdout_agent.makefile("wb")
    monkeypatch.setattr(sys, "stdin", agent_stdin)
    monkeypatch.setattr(sys, "stdout", agent_stdout)
    log = tmp_path / "log.jsonl"
    status: list[int] = []
    server = threading.Thread(
        target=lambda: status.append(serve_main(["--script", str(DEMO), "--log", str(log)]))
    )
    server.start()
    script = load_script(DEMO).unwrap()

    async def drive() -> Recording:
        reader, unused_writer = await asyncio.open_connection(sock=stdout_client)
        unused_reader, writer = await asyncio.open_connection(sock=stdin_client)
        del unused_reader
        try:
            return await record_streams(reader, writer, ClientPlan.from_script(script))
        finally:
            writer.close()
            unused_writer.close()

    recording = asyncio.run(drive())
    server.join()
    for opened in (agent_stdin, agent_stdout, stdin_agent, stdout_agent):
        opened.close()
    assert status == [0]
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [event["type"] for event in events].count("context_message") == 3
    assert recording.session_ids == ("session-1", "session-2")


@pytest.mark.parametrize("module", ["repeat_guard_acp_agent", "repeat_guard_acp_agent.record"])
def test_the_modules_run_as_commands(
    module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    absent = str(tmp_path / "absent.json")
    monkeypatch.setattr(sys, "argv", [module, "--script", absent, "--out", absent])
    if module.endswith("agent"):
        monkeypatch.setattr(sys, "argv", [module, "--script", absent])
    with pytest.raises(SystemExit) as exited:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    assert exited.value.code == 2


def test_importing_the_command_modules_runs_nothing() -> None:
    for module in ("repeat_guard_acp_agent.__main__", "repeat_guard_acp_agent.record"):
        assert importlib.import_module(module).__name__ == module


def test_agent_command_adds_only_the_files_given() -> None:
    base = [sys.executable, "-m", "repeat_guard_acp_agent", "--script", "s.json"]
    assert agent_command("s.json") == base
    assert agent_command("s.json", log="l.jsonl") == [*base, "--log", "l.jsonl"]
    assert agent_command("s.json", "g.toml") == [*base, "--config", "g.toml"]
