"""The state's layers: the same answers from every layer, and the shape ``_state`` promises.

A chain moves from the small dict of recent agents into the middle dict and then into the
shards. Whichever layer holds it, the state must answer the same; these tests drive agents
through every layer on each of the three paths through ``reduce`` (every tool tracked and no
policy, some tools left out, the opt-in policies).

They also check the representation the docstrings of ``_state`` state, which no answer shows
but which the module's speed rests on: the small dict holds at most ``_RECENT_SLOTS`` chains,
the middle dict fewer than ``_MIDDLE_SLOTS``, ``stored`` counts the shards' chains, every chain
sits in the shard its agent's hash falls on, and the shards are the fewest (a power of two from
``_FIRST_SHARDS`` up) that hold ``_SHARD_LOAD`` chains a shard or fewer on average.
"""

from __future__ import annotations

from itertools import count

import pytest

from repeat_guard import (
    AgentDisposed,
    Chain,
    GuardConfig,
    GuardState,
    PromptSubmitted,
    ToolCallFinished,
    _state,
    argument_key,
    canonical_arguments,
    reduce,
)

CONFIGS = [
    GuardConfig(),
    GuardConfig(exclude=("todo_write",)),
    GuardConfig(budgets=(("grep", 10_000),)),
]


def check_layers(state: GuardState, *, only_grown: bool) -> None:
    """Assert the layers' documented shape; ``only_grown``: no chain ever left the shards."""
    _config, recent, middle, shards, stored, _memories = state._parts
    assert len(recent) <= _state._RECENT_SLOTS
    assert len(middle) < _state._MIDDLE_SLOTS
    shard_count = len(shards)
    assert shard_count >= _state._FIRST_SHARDS
    assert shard_count & (shard_count - 1) == 0, f"{shard_count} shards: not a power of two"
    assert stored == sum(len(shard) for shard in shards)
    assert stored <= _state._SHARD_LOAD * shard_count
    if only_grown:  # half as many shards would hold them too: more are not the fewest
        assert shard_count == _state._FIRST_SHARDS or stored > _state._SHARD_LOAD * shard_count // 2


def check_placement(state: GuardState) -> None:
    shards = state._parts[3]
    mask = len(shards) - 1
    for index, shard in enumerate(shards):
        assert all(hash(agent) & mask == index for agent in shard)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("agents", [40, 600, 1_200])
def test_every_agent_keeps_counting_whichever_layer_holds_its_chain(
    config: GuardConfig, agents: int
) -> None:
    # 40 agents in turn: an agent calls again while its chain sits in the middle dict. 600 and
    # 1,200: the middle dict is written into the shards, which double on the way.
    state = GuardState.initial(config)
    names = [f"agent-{n}" for n in range(agents)]
    key = argument_key(canonical_arguments({"p": 1}))
    reminded = []
    for repeats in (1, 2, 3):
        fired = 0
        for name in names:
            state, reminders = reduce(state, ToolCallFinished(name, "grep", {"p": 1}))
            fired += len(reminders)
            assert state.chain(name) == Chain("grep", key, repeats), (name, repeats)
            check_layers(state, only_grown=True)
        check_placement(state)
        reminded.append(fired)
    assert reminded == [0, 0, agents]  # the first threshold is 3
    assert dict(state.chains) == dict.fromkeys(names, Chain("grep", key, 3))
    assert len(state) == agents


def test_a_state_built_from_chains_has_the_fewest_shards_that_hold_them() -> None:
    # Every count up to 200, and those around a doubling of the shards further on.
    for agents in [*range(0, 200), 255, 256, 257, 511, 512, 513, 1_024, 1_025]:
        chains = {f"agent-{n}": Chain("grep", f"{n}", 1) for n in range(agents)}
        state = GuardState.from_chains(GuardConfig(), chains)
        check_layers(state, only_grown=True)
        check_placement(state)
        assert dict(state.chains) == chains
        assert len(state) == agents


@pytest.mark.parametrize("drop", [PromptSubmitted, AgentDisposed])
def test_a_prompt_drops_a_chain_held_in_every_layer_at_once(
    drop: type[PromptSubmitted | AgentDisposed],
) -> None:
    # An agent's newest chain hides its older ones in the layers below; with a policy on it
    # also has a memory. Dropping the agent must drop every one of them.
    state = GuardState.initial(CONFIGS[2])
    others = (f"other-{n}" for n in count())

    def call(state: GuardState, agent: str) -> GuardState:
        return reduce(state, ToolCallFinished(agent, "grep", {"p": 1}))[0]

    def layers_holding(state: GuardState, agent: str) -> list[str]:
        _config, recent, middle, shards, _stored, memories = state._parts
        shard = shards[hash(agent) & (len(shards) - 1)]
        held = {"recent": recent, "middle": middle, "shard": shard, "memories": memories}
        return [name for name, layer in held.items() if agent in layer]

    state = call(state, "a")
    while "shard" not in layers_holding(state, "a"):
        state = call(state, next(others))
    state = call(state, "a")
    while "middle" not in layers_holding(state, "a"):
        state = call(state, next(others))
    state = call(state, "a")
    assert layers_holding(state, "a") == ["recent", "middle", "shard", "memories"]
    assert state.memory("a").spent == (3,)

    after, reminders = reduce(state, drop("a"))
    assert reminders == ()
    assert after.chain("a") is None
    assert "a" not in after.chains
    assert "a" not in after.memories
    assert len(after) == len(state) - 1
    assert dict(after.chains) == {agent: c for agent, c in state.chains.items() if agent != "a"}
    check_layers(after, only_grown=False)
    again = call(after, "a")
    assert again.chain("a") == Chain("grep", argument_key(canonical_arguments({"p": 1})), 1)
