"""Hypothesis strategies for the guard's configs and events.

The defaults are chosen to make the interesting cases common: few tools and argument values,
so identical calls repeat; keys in both orders and ``1`` beside ``1.0``, so canonicalisation
matters; tool names with ``.`` and ``*`` patterns, so wildcard escaping matters; more agents
than the reducer keeps outside its persistent map; prompts and disposals between calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st

from repeat_guard import (
    AgentDisposed,
    Event,
    GuardConfig,
    PromptSubmitted,
    ToolCallFinished,
    ToolCallReturned,
    ToolPolicy,
)

__all__ = [
    "AGENTS",
    "ARGUMENTS",
    "FAILED",
    "KNOWN_RESULTS",
    "PATTERNS",
    "RESULTS",
    "TOOLS",
    "configs",
    "events",
    "failure_events",
    "policy_configs",
    "tool_calls",
]

AGENTS: tuple[str, ...] = tuple(f"agent-{n}" for n in range(12))
TOOLS: tuple[str, ...] = ("grep", "read", "todo_write", "mcp.fs", "mcpXfs")
ARGUMENTS: tuple[object, ...] = (
    {"p": "x"},
    {"p": "y"},
    {"q": [1, 2], "p": "x"},
    {"p": "x", "q": [1, 2.0]},
    "raw{",
)
PATTERNS: tuple[str, ...] = ("grep", "todo_*", "mcp.*", "*", "re*d")
RESULTS: tuple[object, ...] = (
    None,
    "same",
    "same",
    {"changed": 1},
    ["changed", 2.0],
    "at line 7",
    "at line 9",  # the same fingerprint as line 7
)
KNOWN_RESULTS: tuple[object, ...] = tuple(result for result in RESULTS if result is not None)
"""``RESULTS`` but ``None``: for harnesses whose calls always report a result."""
FAILED: tuple[bool, ...] = (False, False, True)


def configs(patterns: Sequence[str] = PATTERNS) -> st.SearchStrategy[GuardConfig]:
    """Valid configs: 1 to 3 distinct thresholds in 2..7, up to two include and exclude patterns."""
    return st.builds(
        GuardConfig,
        thresholds=st.lists(st.integers(2, 7), min_size=1, max_size=3, unique=True).map(tuple),
        include=st.lists(st.sampled_from(patterns), max_size=2).map(tuple),
        exclude=st.lists(st.sampled_from(patterns), max_size=2).map(tuple),
        arguments_preview_chars=st.integers(1, 30),
    )


def policy_configs(
    patterns: Sequence[str] = PATTERNS, refusals: bool = True
) -> st.SearchStrategy[GuardConfig]:
    """Configs with the opt-in policies drawn too: cycles, progress, budgets (counted per prompt
    or per session), ``deny_at``, ``cycle_deny_at`` (where cycles are on), per-tool settings
    (``tools``), a host preset and the retry window.

    Each policy is on in about half of the configs, so each is seen alone and with others.
    ``refusals=False`` leaves out every setting that refuses a call (``deny_at``, the tools'
    and cycles' too, budgets), for harnesses that check results: a refused call has none.
    """
    budgets = st.lists(
        st.tuples(st.sampled_from(patterns), st.integers(1, 6)),
        max_size=2,
        unique_by=lambda b: b[0],
    ).map(tuple)
    overrides = st.builds(
        ToolPolicy,
        thresholds=st.one_of(
            st.none(), st.lists(st.integers(2, 7), min_size=1, max_size=2, unique=True).map(tuple)
        ),
        progress=st.sampled_from([None, "off", "result"]),
        deny_at=st.one_of(st.none(), st.integers(2, 6)),
    )
    tools = st.lists(
        st.tuples(st.sampled_from(patterns), overrides), max_size=2, unique_by=lambda t: t[0]
    ).map(tuple)
    drawn = st.fixed_dictionaries(
        {
            "thresholds": st.lists(st.integers(2, 7), min_size=1, max_size=3, unique=True).map(
                tuple
            ),
            "include": st.lists(st.sampled_from(patterns), max_size=1).map(tuple),
            "exclude": st.lists(st.sampled_from(patterns), max_size=1).map(tuple),
            "arguments_preview_chars": st.integers(1, 30),
            "cycle_period": st.sampled_from([0, 0, 2, 3, 4]),
            "cycle_thresholds": st.lists(
                st.integers(2, 4), min_size=1, max_size=2, unique=True
            ).map(tuple),
            "progress": st.sampled_from(["off", "result"]),
            "budgets": st.one_of(st.just(()), budgets),
            "budget_scope": st.sampled_from(["prompt", "session"]),
            "tools": st.one_of(st.just(()), tools),
            "preset": st.sampled_from(["seed", "codex"]),
            "deny_at": st.one_of(st.none(), st.integers(2, 6)),
            "errors_are_progress": st.booleans(),
            "cycle_deny_at": st.one_of(st.none(), st.integers(2, 4)),
            "retry_window": st.sampled_from([0, 0, 2, 4, 8]),
            "retry_thresholds": st.lists(
                st.integers(2, 4), min_size=1, max_size=2, unique=True
            ).map(tuple),
        }
    ).map(_policy_config)
    return drawn if refusals else drawn.map(_without_refusals)


def _without_refusals(config: GuardConfig) -> GuardConfig:
    tools = tuple((pattern, replace(policy, deny_at=None)) for pattern, policy in config.tools)
    return replace(config, deny_at=None, cycle_deny_at=None, budgets=(), tools=tools)


def _policy_config(fields: dict[str, object]) -> GuardConfig:
    # cycle_deny_at needs cycles: without them it is left out.
    if not fields["cycle_period"]:
        fields = {**fields, "cycle_deny_at": None}
    return GuardConfig(**fields)  # type: ignore[arg-type]  # each drawn as its field's type


def tool_calls(
    agents: Sequence[str] = AGENTS,
    tools: Sequence[str] = TOOLS,
    arguments: Sequence[object] = ARGUMENTS,
    results: Sequence[object] = (None,),
    failed: Sequence[bool] = (False,),
    refusals: bool = True,
) -> st.SearchStrategy[ToolCallFinished]:
    """Finished calls by one of ``agents`` (or, rarely, no agent), denied or not.

    ``results`` are the results the calls report (none by default; ``RESULTS`` for progress),
    ``failed`` the host's failure flags they carry (never by default; ``FAILED`` for both);
    with ``refusals=False`` no call is drawn denied.
    """
    agent = st.one_of(st.sampled_from(agents), st.sampled_from(agents), st.none())
    return st.builds(
        ToolCallFinished,
        agent=agent,
        tool=st.sampled_from(tools),
        arguments=st.sampled_from(arguments),
        denied=st.booleans() if refusals else st.just(False),
        result=st.sampled_from(results),
        failed=st.sampled_from(failed),
    )


def events(
    agents: Sequence[str] = AGENTS,
    tools: Sequence[str] = TOOLS,
    arguments: Sequence[object] = ARGUMENTS,
    results: Sequence[object] = (None,),
    failed: Sequence[bool] = (False,),
    late_results: bool = True,
    refusals: bool = True,
) -> st.SearchStrategy[Event]:
    """Any event, mostly calls: a prompt or a disposal about one time in eight each.

    When some of ``results`` is not ``None``, results reported after their calls
    (``ToolCallReturned``) come too, as often as prompts, unless ``late_results=False`` (a
    harness that sees a call's result only with the call). ``refusals=False``: no call is
    drawn denied (see ``tool_calls``).
    """
    call = tool_calls(agents, tools, arguments, results, failed, refusals)
    agent = st.sampled_from(agents)
    others = [st.builds(PromptSubmitted, agent), st.builds(AgentDisposed, agent)]
    if late_results and any(result is not None for result in results):
        returned = st.builds(
            ToolCallReturned,
            agent=st.one_of(agent, agent, st.none()),
            tool=st.sampled_from(tools),
            arguments=st.sampled_from(arguments),
            result=st.sampled_from(results),
            failed=st.sampled_from(failed),
        )
        others.append(returned)
    return st.one_of(*[call] * 6, *others)


def failure_events(arguments: Sequence[object] = ARGUMENTS[:1]) -> st.SearchStrategy[Event]:
    """``events`` at the kit's narrow breadth for checking results and failures: one agent's
    calls of two tools with one argument each (``arguments``: a harness whose tools take
    mappings only passes its own), each call with a result (``KNOWN_RESULTS``) and
    failing or not, one time in two; no late results and no refused call. The same call comes
    back often, failing or not, so progress and the retry window decide most steps. Pair it with
    ``policy_configs(refusals=False)``."""
    return events(
        agents=AGENTS[:1],
        tools=TOOLS[:2],
        arguments=arguments,
        results=KNOWN_RESULTS,
        failed=(False, True),
        late_results=False,
        refusals=False,
    )
