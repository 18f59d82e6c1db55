"""``install`` into plugin managers of any project name, with and without the specs present."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pluggy
import pytest

from repeat_guard import GuardConfig
from repeat_guard_pluggy import (
    PLUGIN_NAME,
    Accept,
    Block,
    GuardConfigError,
    RepeatGuardPlugin,
    ToolResult,
    hookspecs,
    install,
    specs_for,
)

from ...readme import run_blocks
from ._support import Agent, answering, execute, repeat, summaries

README = Path(__file__).parents[3] / "adapters" / "pluggy" / "README.md"


def _spec(pm: pluggy.PluginManager, name: str) -> Any:
    """The spec of hook ``name`` (pluggy does not export the ``HookSpec`` type)."""
    caller: pluggy.HookCaller = getattr(pm.hook, name)
    assert caller.spec is not None
    return caller.spec


def test_install_adds_the_specs_to_a_default_manager() -> None:
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    guard = install(pm)
    assert _spec(pm, "tool_post_execute").namespace is hookspecs
    registered = pm.get_plugin(PLUGIN_NAME)
    assert registered is not None
    assert registered.guard is guard
    agent = Agent()
    assert repeat(3, lambda: execute(pm, agent)) == [[], [], ["grep × 3"]]


def test_a_manager_with_its_own_project_name_needs_no_glue() -> None:
    pm = pluggy.PluginManager("myharness")
    guard = install(pm, {"thresholds": [2]})
    pm.register(answering(Block("no"), project="myharness"))
    agent = Agent()
    decisions = [execute(pm, agent) for _ in range(2)]
    assert decisions[0] == Block("no")
    assert isinstance(decisions[1], Block)
    assert summaries(decisions[1]) == ["grep × 2"]
    pm.hook.agent_prompt_submit(agent=agent, prompt="again")
    assert len(guard.state) == 0
    execute(pm, agent)
    pm.hook.agent_dispose(agent=agent)
    assert guard.known_agents == 0


def test_re_marked_specs_keep_their_options_and_leave_hookspecs_alone() -> None:
    pm = pluggy.PluginManager("myharness")
    install(pm)
    spec = _spec(pm, "tool_post_execute")
    assert spec.opts["firstresult"] is True
    assert spec.function.__doc__ == hookspecs.tool_post_execute.__doc__
    assert _spec(pm, "agent_prompt_submit").opts["firstresult"] is False
    assert not hasattr(hookspecs.tool_post_execute, "myharness_spec")
    assert spec.function is not hookspecs.tool_post_execute


def test_specs_already_added_by_the_host_are_kept() -> None:
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    install(pm)
    assert _spec(pm, "agent_dispose").namespace is hookspecs
    assert execute(pm, Agent()) is None


def test_only_the_missing_specs_are_added() -> None:
    class HostSpecs:
        @pluggy.HookspecMarker("myharness")
        def agent_dispose(self, agent: object) -> None:
            """The host's own disposal spec."""

    pm = pluggy.PluginManager("myharness")
    pm.add_hookspecs(HostSpecs)
    install(pm)
    assert _spec(pm, "agent_dispose").namespace is HostSpecs
    assert _spec(pm, "tool_post_execute").namespace is not HostSpecs
    assert pm.hook.agent_prompt_submit.has_spec()


def test_implementations_registered_before_the_specs_are_verified() -> None:
    pm = pluggy.PluginManager("myharness")
    early = Accept(ToolResult("early"))
    pm.register(answering(early, project="myharness"))
    assert not pm.hook.tool_post_execute.has_spec()
    install(pm)
    assert pm.hook.tool_post_execute.has_spec()
    assert execute(pm, Agent()) is early


def test_installing_twice_fails_clearly() -> None:
    pm = pluggy.PluginManager("myharness")
    install(pm)
    with pytest.raises(ValueError, match="already installed in plugin manager 'myharness'"):
        install(pm)


def test_an_invalid_config_fails_at_install_naming_the_key_and_leaves_pm_alone() -> None:
    pm = pluggy.PluginManager("myharness")
    with pytest.raises(GuardConfigError, match="thresholds") as raised:
        install(pm, {"thresholds": [3, 3]})
    assert raised.value.key == "thresholds"
    assert not pm.has_plugin(PLUGIN_NAME)
    assert not hasattr(pm.hook, "tool_post_execute")


def test_a_blocked_name_leaves_the_guard_inert() -> None:
    pm = pluggy.PluginManager("myharness")
    pm.set_blocked(PLUGIN_NAME)
    guard = install(pm, GuardConfig(thresholds=(2,)))
    agent = Agent()
    assert repeat(2, lambda: execute(pm, agent)) == [[], []]
    assert guard.known_agents == 0


def test_specs_for_the_default_project_is_the_hookspecs_module() -> None:
    assert specs_for(hookspecs.PROJECT_NAME) is hookspecs
    custom = specs_for("other")
    names = {"tool_post_execute", "agent_prompt_submit", "agent_dispose"}
    assert {name for name in names if hasattr(getattr(custom, name), "other_spec")} == names
    only = specs_for("other", frozenset({"agent_dispose"}))
    assert not hasattr(only, "tool_post_execute")


def test_the_readme_examples_run() -> None:
    usage, denying = run_blocks(README)
    guard = usage["guard"]
    assert isinstance(guard, RepeatGuardPlugin)
    assert guard.config.thresholds == (3, 5)
    pm = denying["pm"]
    assert isinstance(pm, pluggy.PluginManager)
    registered = pm.get_plugin(PLUGIN_NAME)
    assert registered is not None
    assert registered.guard.config.deny_at == 3
