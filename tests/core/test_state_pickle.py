"""A state pickled in one process and loaded in another holds the same chains there: where a
chain sits inside the state depends on string hashes, which differ between processes."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys

from repeat_guard import GuardConfig, GuardState, ToolCallFinished, reduce

AGENTS = 2_000  # enough that most chains sit in the shards, not the recent or middle dicts

_LOAD = """
import pickle, sys
state = pickle.loads(sys.stdin.buffer.read())
lost = [n for n in range(int(sys.argv[1])) if state.chain(f"agent-{n}") is None]
print(len(lost), len(state), state.memory("agent-0").spent)
"""


def _state() -> GuardState:
    state = GuardState.initial(GuardConfig(budgets=(("grep", 5),)))
    for n in range(AGENTS):
        state, _ = reduce(state, ToolCallFinished(f"agent-{n}", "grep", {"p": n}))
    return state


def test_a_state_loaded_in_another_process_finds_every_chain() -> None:
    state = _state()
    environment = {**os.environ, "PYTHONHASHSEED": "12345"}  # not this process's hashes
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, str(AGENTS)],
        input=pickle.dumps(state),
        capture_output=True,
        env=environment,
        check=True,
    )
    assert done.stdout.decode().split() == ["0", str(AGENTS), "(1,)"]


def test_a_copied_state_is_equal_and_keeps_counting() -> None:
    state = _state()
    for twin in (pickle.loads(pickle.dumps(state)), copy.deepcopy(state)):
        assert twin == state
        after, _ = reduce(twin, ToolCallFinished("agent-7", "grep", {"p": 7}))
        chain = after.chain("agent-7")
        assert chain is not None
        assert chain.repeats == 2
