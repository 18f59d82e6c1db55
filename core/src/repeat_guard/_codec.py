"""The guard's state as JSON-ready values, and back.

A harness that cannot keep one ``GuardState`` in memory (a hook that is a new process for every
tool call) stores the state between calls. This module is the one codec for it: ``encode_*``
returns plain lists, dicts, strings and integers that ``json`` writes as they are, and
``decode_*`` accepts anything at all and returns ``Success`` with the value or ``Failure`` with a
``CodecError`` that says where and what is wrong. Decoding never raises but what the input's own
methods raise (a mapping whose ``__getitem__`` does), which no value ``json.loads`` returns can.
``decode_chain_or_error`` and ``decode_memory_or_error`` return the value or the ``CodecError``
as it is.

Importing ``returns`` costs more than importing the rest of the core, and a hook process (a new
process for every tool call) imports the core every time while it needs no ``Result`` on its way:
it uses the ``*_or_error`` forms, which return the value or the error as they are. So no module of
the core imports ``returns`` when it is itself imported; a function that builds a ``Result``
imports it when it runs.

The encoding is versioned: a chain is ``[CHAIN_VERSION, tool, key, repeats]`` and a state is
``{"version": STATE_VERSION, "chains": {agent: chain, ...}}``, plus ``"memories": {agent:
memory, ...}`` when an opt-in policy remembers something, a memory being ``[MEMORY_VERSION,
recent, runs, result, spent, earlier, outcomes]`` (``recent`` a list of ``[tool, key]``,
``outcomes`` a list of result keys or nulls); a memory of version 1, ``[1, recent, runs, result,
spent]``, written before ``earlier`` existed, is read with ``earlier`` null, and one of version 2
(6 items, no ``outcomes``) with none. A memory with no outcomes (every one made without cycles
under ``progress = "result"``) is written in version 2, as before they existed. Version 4,
``[4, recent, runs, result, spent, earlier, outcomes, failures]``, adds the retry window
(``failures``: a list of ``[tool, key, failure key or null]``) and is written only when the
window holds a call; version 3 is the same without it. The
configuration is not part of the state's encoding: it comes from the harness's configuration
each time. But a memory means something only under the policy settings
it was made with (its budget counts are per configured budget, in order; its cycle runs per
period), so a state with memories also carries ``"policies": encode_memory_settings(config)``;
decoded under a config whose settings differ, its memories are dropped (the policies start
afresh, the chains are kept), as a harness that stores memories apart does with the same
function. A state written before it carried them keeps the memories that fit the config's
shape (``memory_fits``) and drops the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ._config import GuardConfig
from ._policies import Memory, memory_fits
from ._state import Chain, GuardState

if TYPE_CHECKING:
    from returns.result import Result

__all__ = [
    "CHAIN_VERSION",
    "MEMORY_VERSION",
    "STATE_VERSION",
    "CodecError",
    "decode_chain",
    "decode_chain_or_error",
    "decode_memory",
    "decode_memory_or_error",
    "decode_state",
    "encode_chain",
    "encode_memory",
    "encode_memory_settings",
    "encode_state",
    "memory_under",
]

CHAIN_VERSION = 1
STATE_VERSION = 1
MEMORY_VERSION = 4


@dataclass(frozen=True, slots=True)
class CodecError:
    """Why a value could not be decoded: where in it (``path``), the value there, and why."""

    path: str
    value: object
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def encode_chain(chain: Chain) -> list[object]:
    """Return ``chain`` as ``[CHAIN_VERSION, tool, key, repeats]``."""
    return [CHAIN_VERSION, chain.tool, chain.key, chain.repeats]


def decode_chain(raw: object, path: str = "chain") -> Result[Chain, CodecError]:
    """Return the chain ``raw`` encodes, or a ``CodecError`` naming ``path`` and the problem."""
    return _as_result(decode_chain_or_error(raw, path))


def decode_chain_or_error(raw: object, path: str = "chain") -> Chain | CodecError:
    """Return the chain ``raw`` encodes, or the ``CodecError``: ``decode_chain`` unwrapped."""
    if not isinstance(raw, list) or len(raw) != 4:
        return _error(path, raw, "a chain must be a list of 4 items")
    version, tool, key, repeats = raw
    if version != CHAIN_VERSION or not _is_integer(version):
        return _error(f"{path}[0]", version, f"chain version must be {CHAIN_VERSION}")
    if not isinstance(tool, str):
        return _error(f"{path}[1]", tool, "the tool must be a string")
    if not isinstance(key, str):
        return _error(f"{path}[2]", key, "the argument key must be a string")
    if not _is_integer(repeats) or repeats < 1:
        return _error(f"{path}[3]", repeats, "repeats must be an integer of 1 or more")
    return Chain(tool, key, repeats)


def encode_memory(memory: Memory) -> list[object]:
    """Return ``memory`` as ``[MEMORY_VERSION, recent, runs, result, spent, earlier, outcomes,
    failures]``; when it has no failures, as version 3 (without them), and when it has no
    outcomes either, as version 2's ``[2, recent, runs, result, spent, earlier]``."""
    recent = [[tool, key] for tool, key in memory.recent]
    runs, spent = list(memory.runs), list(memory.spent)
    if not memory.outcomes and not memory.failures:
        return [2, recent, runs, memory.result, spent, memory.earlier]
    encoded = [3, recent, runs, memory.result, spent, memory.earlier, list(memory.outcomes)]
    if memory.failures:
        encoded[0] = MEMORY_VERSION
        encoded.append([[tool, key, failed] for tool, key, failed in memory.failures])
    return encoded


def decode_memory(raw: object, path: str = "memory") -> Result[Memory, CodecError]:
    """Return the policies' memory ``raw`` encodes, or a ``CodecError`` naming the problem."""
    return _as_result(decode_memory_or_error(raw, path))


def decode_memory_or_error(raw: object, path: str = "memory") -> Memory | CodecError:
    """Return the memory ``raw`` encodes, or the ``CodecError``: ``decode_memory`` unwrapped."""
    if not isinstance(raw, list) or len(raw) not in (5, 6, 7, 8):
        return _error(path, raw, _MEMORY_SHAPE)
    version, recent, runs, result, spent, *rest = raw
    if (
        version not in (1, 2, 3, MEMORY_VERSION)
        or not _is_integer(version)
        or len(rest) != version - 1
    ):
        return _error(f"{path}[0]", version, _MEMORY_VERSIONS)
    if not isinstance(recent, list) or not all(_is_key(item) for item in recent):
        return _error(f"{path}[1]", recent, "recent calls must be a list of [tool, key]")
    for index, counts in ((2, runs), (4, spent)):
        if not isinstance(counts, list) or not all(_is_count(item) for item in counts):
            return _error(f"{path}[{index}]", counts, "must be a list of counts (0 or more)")
    earlier = rest[0] if rest else None
    outcomes = rest[1] if len(rest) >= 2 else []  # version 3 on
    failures = rest[2] if len(rest) == 3 else []  # version 4
    error = _results_error(path, result, earlier, outcomes)
    if error is not None:
        return error
    if not isinstance(failures, list) or not all(_is_failure(item) for item in failures):
        return _error(f"{path}[7]", failures, "failures must be a list of [tool, key, key or null]")
    keys = tuple((tool, key) for tool, key in recent)
    window = tuple((tool, key, failed) for tool, key, failed in failures)
    return Memory(keys, tuple(runs), result, tuple(spent), earlier, tuple(outcomes), window)


def _results_error(
    path: str, result: object, earlier: object, outcomes: object
) -> CodecError | None:
    """Why a memory's result keys (last, earlier, outcomes) are not result keys, or ``None``."""
    for index, item in ((3, result), (5, earlier)):
        if not _is_result(item):
            return _error(f"{path}[{index}]", item, "a result key must be a string or null")
    if not isinstance(outcomes, list) or not all(_is_result(item) for item in outcomes):
        return _error(f"{path}[6]", outcomes, "outcomes must be a list of result keys or nulls")
    return None


_MEMORY_SHAPE = "a memory must be a list of 8 items (7 in version 3, 6 in 2, 5 in 1)"
_MEMORY_VERSIONS = f"memory version must be {MEMORY_VERSION} (8 items), 3 (7), 2 (6) or 1 (5)"


def _is_failure(item: object) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 3  # tool, key, failure
        and isinstance(item[0], str)
        and isinstance(item[1], str)
        and _is_result(item[2])
    )


def _is_result(item: object) -> bool:
    return item is None or isinstance(item, str)


def encode_memory_settings(config: GuardConfig) -> list[object]:
    """Return what a memory's meaning depends on in ``config``: ``[cycle_period, [[pattern,
    limit], ...]]``, and the retry window when one is set. Memories made under other settings
    must not be used under these."""
    settings: list[object] = [config.cycle_period, [[p, limit] for p, limit in config.budgets]]
    if config.retry_window:
        settings.append(config.retry_window)
    return settings


def encode_state(state: GuardState) -> dict[str, object]:
    """Return ``state`` as ``{"version": STATE_VERSION, "chains": {...}}`` (and memories, with
    the settings they were made under)."""
    chains = {agent: encode_chain(chain) for agent, chain in state.chains.items()}
    encoded: dict[str, object] = {"version": STATE_VERSION, "chains": chains}
    if state.memories:
        memories = {agent: encode_memory(memory) for agent, memory in state.memories.items()}
        encoded["memories"] = memories
        encoded["policies"] = encode_memory_settings(state.config)
    return encoded


def decode_state(raw: object, config: GuardConfig) -> Result[GuardState, CodecError]:
    """Return the state ``raw`` encodes, under ``config``, or the first problem found."""
    return _as_result(_state_or_error(raw, config))


_STATE_KEYS = frozenset({"version", "chains", "memories", "policies"})


def _state_or_error(raw: object, config: GuardConfig) -> GuardState | CodecError:
    if not isinstance(raw, Mapping):
        return _error("state", raw, "a state must be a mapping")
    unknown = [key for key in raw if key not in _STATE_KEYS]
    if unknown:
        known = ", ".join(sorted(_STATE_KEYS))
        return _error("state", unknown[0], f"unknown key {unknown[0]!r} (known: {known})")
    version = raw.get("version")
    if version != STATE_VERSION or not _is_integer(version):
        return _error("state.version", version, f"state version must be {STATE_VERSION}")
    chains = _chains(raw.get("chains"))
    if isinstance(chains, CodecError):
        return chains
    memories = _memories(raw.get("memories", {}))
    if isinstance(memories, CodecError):
        return memories
    usable = _usable(memories, raw.get("policies", _UNSAID), config)
    if isinstance(usable, CodecError):
        return usable
    return GuardState.from_chains(config, chains, usable)


def _chains(encoded: object) -> dict[str, Chain] | CodecError:
    if not isinstance(encoded, Mapping):
        return _error("state.chains", encoded, "chains must be a mapping")
    chains: dict[str, Chain] = {}
    for agent, item in encoded.items():
        if not isinstance(agent, str):
            return _error("state.chains", agent, "an agent id must be a string")
        chain = decode_chain_or_error(item, f"state.chains[{agent!r}]")
        if isinstance(chain, CodecError):
            return chain
        chains[agent] = chain
    return chains


_UNSAID = object()


def _usable(
    memories: dict[str, Memory], settings: object, config: GuardConfig
) -> dict[str, Memory] | CodecError:
    """The memories ``config`` may use, made under ``settings`` (``_UNSAID`` when not stored)."""
    if settings is _UNSAID:
        # Written before states carried their settings: keep what fits this config's shape.
        return {agent: memory for agent, memory in memories.items() if memory_fits(config, memory)}
    usable: dict[str, Memory] = {}
    for agent, memory in memories.items():
        kept = memory_under(memory, settings, config, f"state.memories[{agent!r}]")
        if isinstance(kept, CodecError):
            return kept
        if kept is not None:
            usable[agent] = kept
    return usable


def memory_under(
    memory: Memory, settings: object, config: GuardConfig, path: str = "memory"
) -> Memory | CodecError | None:
    """``memory``, made under ``settings`` (``encode_memory_settings``, as JSON gives it back),
    as ``config`` may use it: ``None`` when made under other settings (the policies start
    afresh), a ``CodecError`` when its shape is not the one its settings give (corrupt)."""
    if settings != encode_memory_settings(config):
        return None
    if not memory_fits(config, memory):
        return _error(path, encode_memory(memory), "does not fit the state's policies")
    return memory


def _memories(encoded: object) -> dict[str, Memory] | CodecError:
    if not isinstance(encoded, Mapping):
        return _error("state.memories", encoded, "memories must be a mapping")
    memories: dict[str, Memory] = {}
    for agent, item in encoded.items():
        if not isinstance(agent, str):
            return _error("state.memories", agent, "an agent id must be a string")
        memory = decode_memory_or_error(item, f"state.memories[{agent!r}]")
        if isinstance(memory, CodecError):
            return memory
        memories[agent] = memory
    return memories


def _is_key(item: object) -> bool:
    return isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item)


def _is_count(item: object) -> bool:
    return _is_integer(item) and item >= 0  # type: ignore[operator]  # an int, checked first


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_Value = TypeVar("_Value")


def _as_result(value: _Value | CodecError) -> Result[_Value, CodecError]:
    from returns.result import Failure, Success  # noqa: PLC0415  # see the module docstring

    if isinstance(value, CodecError):
        return Failure(value)
    return Success(value)


def _error(path: str, value: object, message: str) -> CodecError:
    return CodecError(path, value, message)
