"""Per-tool settings (``tools``) and host presets (``preset``), scripted."""

from __future__ import annotations

import pytest

from repeat_guard import (
    HOST_PRESETS,
    PRESETS,
    Admit,
    Deny,
    GuardConfig,
    GuardState,
    Policy,
    ToolCallFinished,
    ToolCallReturned,
    ToolPolicy,
    admit,
    parse_config,
    reduce,
)


def polls(state: GuardState, tool: str, outputs: list[str]) -> list[tuple[str, int]]:
    fired: list[tuple[str, int]] = []
    for output in outputs:
        state, reminders = reduce(state, ToolCallFinished("a", tool, {"id": 1}, result=output))
        fired += [(r.form, r.count) for r in reminders]
    return fired


def test_a_tool_named_a_poll_follows_its_results_and_the_others_do_not() -> None:
    config = parse_config({"tools": {"write_stdin": {"progress": "result"}}}).unwrap()
    state = GuardState.initial(config)
    growing = ["a", "ab", "abc", "abcd", "abcde"]
    assert polls(state, "write_stdin", growing) == []
    assert polls(state, "write_stdin", ["x"] * 5) == [("gentle", 3), ("detailed", 5)]
    assert polls(state, "Bash", growing) == [("gentle", 3), ("detailed", 5)]
    assert config.reads_results
    assert config.policy("Bash") == Policy((3, 5, 8), "off", None)


def test_a_result_reported_later_is_read_only_for_a_tool_that_follows_results() -> None:
    config = GuardConfig(tools=(("poll", ToolPolicy(progress="result")),))
    for tool, repeats in (("poll", 2), ("grep", 3)):
        state = GuardState.initial(config)
        for output in ["1", "2", "2"]:
            state, _ = reduce(state, ToolCallFinished("a", tool, {}))
            state, _ = reduce(state, ToolCallReturned("a", tool, {}, output))
        # poll: the second call's new result started its chain over; grep ignores results.
        chain = state.chain("a")
        assert chain is not None
        assert chain.repeats == repeats


def test_the_first_matching_pattern_decides_and_unset_keys_keep_the_configs_own() -> None:
    config = GuardConfig(
        thresholds=(4,),
        deny_at=9,
        tools={"mcp__*": {"thresholds": [6, 2]}, "mcp__fs__read": {"denyAt": 3}},  # type: ignore[arg-type]  # a mapping, as for budgets
    )
    assert config.policy("mcp__fs__read") == Policy((2, 6), "off", 9)
    assert config.policy("grep") == Policy((4,), "off", 9)
    assert config.policy("grep") is config.policy("grep")  # remembered
    state = GuardState.initial(config)
    call = ToolCallFinished("a", "mcp__fs__read", {})
    fired = []
    for _ in range(6):
        state, reminders = reduce(state, call)
        fired += [(r.form, r.count) for r in reminders]
    assert fired == [("gentle", 2), ("detailed", 6)]


def test_deny_at_per_tool_refuses_only_that_tool() -> None:
    config = GuardConfig(tools=(("Bash", ToolPolicy(deny_at=2)),))
    state = GuardState.initial(config)
    for tool in ("Bash", "Read"):
        state, _ = reduce(state, ToolCallFinished("a", tool, {}))
        verdict = admit(state, ToolCallFinished("a", tool, {}))
        assert isinstance(verdict, Deny if tool == "Bash" else Admit)


def test_a_host_preset_makes_its_polling_tools_follow_results() -> None:
    config = GuardConfig(preset="codex")
    polling = ToolPolicy(progress="result")
    assert config.tool_policies == (
        ("write_stdin", polling),
        ("exec_command", polling),
        ("Bash", polling),
    )
    state = GuardState.initial(config)
    assert polls(state, "write_stdin", ["1", "2", "3", "4", "5"]) == []
    assert polls(state, "exec_command", ["1", "2", "3", "4", "5"]) == []
    assert polls(state, "Bash", ["1", "2", "3", "4", "5"]) == []
    assert polls(state, "exec_command", ["same", "same", "same"]) == [("gentle", 3)]
    assert polls(state, "apply_patch", ["1", "2", "3"]) == [("gentle", 3)]
    # The user's own tools come first: they can say otherwise for a preset's tool.
    mine = GuardConfig(preset="codex", tools=(("write_stdin", ToolPolicy(progress="off")),))
    assert polls(GuardState.initial(mine), "write_stdin", ["1", "2", "3"]) == [("gentle", 3)]


def test_the_qwen_code_preset_follows_its_shell_and_read_file_results() -> None:
    # Qwen Code's polls: tail of a growing log, read_file of a background command's output file
    state = GuardState.initial(GuardConfig(preset="qwen-code"))
    growing = ["line 1", "line 2", "line 3", "line 4"]
    for tool in ("run_shell_command", "read_file", "task_list"):
        assert polls(state, tool, growing) == []
    # an unchanged re-read answers the same each time: a loop still
    unchanged = ["[File calc.py unchanged since last read in this session]"] * 3
    assert polls(state, "read_file", unchanged) == [("gentle", 3)]
    assert polls(state, "edit", growing) == [("gentle", 3)]  # not a poll of Qwen Code's


def test_the_seed_preset_and_a_host_with_no_polling_tool_add_nothing() -> None:
    assert GuardConfig().preset == "seed"
    assert GuardConfig(preset="seed").tool_policies == ()
    assert GuardConfig(preset="cline").tool_policies == ()
    assert not GuardConfig(preset="cline").policies
    assert set(PRESETS) == {"seed", *HOST_PRESETS}
    assert "write_stdin" in HOST_PRESETS["codex"]
    assert "BashOutput" in HOST_PRESETS["claude-code"]
    assert "read_file" in HOST_PRESETS["qwen-code"]


@pytest.mark.parametrize(
    ("host", "shell"),
    [("claude-code", "Bash"), ("codex", "exec_command"), ("gemini", "run_shell_command")],
)
def test_a_hosts_shell_is_in_its_preset_a_poll_through_it_is_progress_a_loop_is_not(
    host: str, shell: str
) -> None:
    # make eval: the polls through each host's shell (sleep 2 && tail) drew reminders under
    # the preset without it; with it, none, and every labelled loop still at its third call.
    state = GuardState.initial(GuardConfig(preset=host))
    assert polls(state, shell, ["batch 1 of 4", "batch 2 of 4", "batch 3 of 4", "done"]) == []
    assert polls(state, shell, ["no such file"] * 3) == [("gentle", 3)]
    # A passing test run again and again, only its durations changing (make eval's
    # claude-code/loop_passing_tests.jsonl), is a loop too; a counter naming a line is a poll.
    runs = [f"Ran 1 test in 0.05{n}s\n\nOK\n\nreal\t0m0.3{n}s" for n in (3, 8, 0)]
    assert polls(state, shell, runs) == [("gentle", 3)]
    assert polls(state, shell, [f"processed line {n} of 400" for n in (100, 200, 300)]) == []


def test_tools_and_preset_round_trip_through_the_mapping() -> None:
    raw = {
        "tools": {"Bash": {"thresholds": [4, 2], "denyAt": 6}, "poll": {"progress": "result"}},
        "preset": "claude-code",
    }
    config = parse_config(raw).unwrap()
    mapping = config.to_mapping()
    assert mapping["tools"] == {
        "Bash": {"thresholds": [2, 4], "denyAt": 6},
        "poll": {"progress": "result"},
    }
    assert mapping["preset"] == "claude-code"
    assert parse_config(mapping).unwrap() == config
    assert parse_config({"tools": [["Bash", {"deny_at": 3}]]}).unwrap().policy("Bash").deny_at == 3
    assert "tools" not in GuardConfig().to_mapping()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"tools": 3}, "tools must map tool-name patterns to settings, got 3"),
        ({"tools": [["Bash"]]}, "tools must map tool-name patterns to settings, got [['Bash']]"),
        ({"tools": {"Bash": 3}}, "tools['Bash'] must be a table of settings, got 3"),
        (
            {"tools": {"Bash": {"budgets": 3}}},
            "tools['Bash'] has an unknown key 'budgets' (known: thresholds, progress, denyAt)",
        ),
        (
            {"tools": {"Bash": {1: 3}}},
            "tools['Bash'] has an unknown key 1 (known: thresholds, progress, denyAt)",
        ),
        (
            {"tools": {"Bash": {"progress": "on"}}},
            "tools['Bash'].progress must be 'off' or 'result', got 'on'",
        ),
        (
            {"tools": {"Bash": {"thresholds": [1]}}},
            "tools['Bash'].thresholds must be 2 or more, got 1 in [1]",
        ),
        (
            {"tools": {"Bash": {"denyAt": 1}}},
            "tools['Bash'].denyAt must be an integer of 2 or more (or absent), got 1",
        ),
        (
            {"preset": "vim"},
            "preset must be one of 'seed', 'claude-code', 'codex', 'copilot', 'gemini', "
            "'qwen-code', 'cline', 'crush', 'pi', 'opencode', 'openclaw', got 'vim'",
        ),
    ],
)
def test_a_bad_tools_or_preset_value_is_named(raw: dict[str, object], message: str) -> None:
    assert parse_config(raw).failure().message == message


def test_a_tool_policy_given_directly_is_checked_too() -> None:
    with pytest.raises(ValueError, match="denyAt must be an integer"):
        GuardConfig(tools=(("Bash", ToolPolicy(deny_at=1)),))


def test_a_config_remembers_a_bounded_number_of_tool_names() -> None:
    config = GuardConfig(tools=(("poll_*", ToolPolicy(progress="result")),))
    for n in range(5000):  # past the limit: answered the same, remembered no more
        assert config.policy(f"poll_{n}").progress == "result"
    assert config.policy("poll_4999") == config.policy("poll_1")


def test_a_tool_policys_thresholds_come_back_sorted() -> None:
    config = GuardConfig(tools=(("grep", ToolPolicy(thresholds=(3, 2))),))
    assert config.tools == (("grep", ToolPolicy(thresholds=(2, 3))),)


def test_load_config_defaults_stand_under_the_documents_keys() -> None:
    from repeat_guard import load_config

    given = load_config("thresholds = [4]\n", fmt="toml", defaults={"preset": "codex"})
    assert given.unwrap() == GuardConfig(thresholds=(4,), preset="codex")
    said = load_config('preset = "seed"\n', fmt="toml", defaults={"preset": "codex"})
    assert said.unwrap() == GuardConfig()
    over = load_config("{}", overrides={"preset": "gemini"}, defaults={"preset": "codex"})
    assert over.unwrap().preset == "gemini"
