"""The ``*_or_error`` forms: the same answers as the ``Result`` forms, and no ``returns`` import.

A hook process imports the core once per tool call; importing ``returns`` would cost it more
than the rest of the core, so ``import repeat_guard`` must not load it, and the forms a hook
uses give the value or the error as it is.
"""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from repeat_guard import (
    Chain,
    CodecError,
    ConfigError,
    GuardConfig,
    Memory,
    decode_chain,
    decode_chain_or_error,
    decode_memory,
    decode_memory_or_error,
    encode_chain,
    encode_memory,
    load_config,
    load_config_or_error,
)

junk = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)
chains = st.builds(Chain, st.text(max_size=3), st.text(max_size=3), st.integers(1, 9))
memories = st.builds(
    Memory,
    st.lists(st.tuples(st.text(max_size=2), st.text(max_size=2)), max_size=3).map(tuple),
    st.lists(st.integers(0, 9), max_size=3).map(tuple),
    st.none() | st.text(max_size=3),
    st.lists(st.integers(0, 9), max_size=3).map(tuple),
)


def _wrapped(value: object) -> object:
    return Failure(value) if isinstance(value, CodecError | ConfigError) else Success(value)


@given(junk | chains.map(encode_chain))
def test_a_chain_decodes_the_same_either_way(raw: object) -> None:
    assert _wrapped(decode_chain_or_error(raw, "c")) == decode_chain(raw, "c")


@given(junk | memories.map(encode_memory))
def test_a_memory_decodes_the_same_either_way(raw: object) -> None:
    assert _wrapped(decode_memory_or_error(raw, "m")) == decode_memory(raw, "m")


@given(
    st.sampled_from(
        [
            b"thresholds = [2, 4]\n",
            b'{"denyAt": 3}',
            b"thresholds = [1]\n",
            b"\xff",
            b"[not toml",
            b"unknown = 1\n",
            b"[1, 2]",
        ]
    ),
    st.sampled_from([None, "a.toml", "b.json"]),
)
def test_a_config_loads_the_same_either_way(data: bytes, source: str | None) -> None:
    either = load_config_or_error(data, source=source)
    assert _wrapped(either) == load_config(data, source=source)
    if isinstance(either, ConfigError):
        assert either.source == source
    else:
        assert isinstance(either, GuardConfig)


def test_importing_the_core_does_not_import_returns() -> None:
    probe = "import sys, repeat_guard\nprint(sorted(m for m in sys.modules if 'returns' in m))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
