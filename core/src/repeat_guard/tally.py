"""What the guard saw, counted: a pure fold over events and reminders, and its merge.

A replay or an audit feeds every event to ``reduce`` and then to ``tally`` with the state
``reduce`` returned and the reminders it gave. The tally never looks back at earlier states, so
one file's tally, or one session's, is independent of any other's, and ``merge_tallies`` adds
them up in any grouping and any order (it is associative and commutative, with ``Tally()`` as
its identity), which lets an audit split its work across processes or machines.

Definitions (one place for each):

* a *call* is a ``ToolCallFinished`` with an agent; calls without an agent are not counted;
* a *tracked* call is one the configuration tracks;
* a *wasted* call is a tracked call that repeated the agent's previous tracked call, i.e. whose
  run count after the call is 2 or more: every call of a run beyond its first;
* a *denied* call is a call marked denied, tracked or not;
* ``longest_run`` is the highest run count reached.

Tallies are named tuples: a fold over millions of calls builds one per call, and a tuple is the
cheapest immutable value Python builds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final, NamedTuple

from pyrsistent import PMap, pmap

if TYPE_CHECKING:
    from returns.result import Result

from ._codec import CodecError
from ._events import Event, ToolCallFinished
from ._reminders import Reminder
from ._state import GuardState

__all__ = [
    "NO_COUNTS",
    "WASTED_FROM",
    "CountedCall",
    "PackedTally",
    "Step",
    "Tally",
    "TallySums",
    "ToolTally",
    "count_calls",
    "count_packed",
    "counted_call",
    "merge_all_tallies",
    "merge_packed",
    "merge_tallies",
    "run_length",
    "tally",
    "tally_from_json",
    "tally_steps",
    "tally_to_json",
    "unpack_tally",
]


class ToolTally(NamedTuple):
    """The counts for one tool name."""

    calls: int = 0
    tracked: int = 0
    wasted: int = 0
    reminders: int = 0
    longest_run: int = 0


_NO_FORMS: PMap[str, int] = pmap()
_NO_TOOLS: PMap[str, ToolTally] = pmap()


class Tally(NamedTuple):
    """Counts over a stream of events (see the module's definitions).

    ``reminders_by_form`` maps a reminder form to how many reminders had it; ``tools`` maps a
    tool name to its own counts.
    """

    calls: int = 0
    tracked: int = 0
    wasted: int = 0
    denied: int = 0
    reminders: int = 0
    longest_run: int = 0
    reminders_by_form: PMap[str, int] = _NO_FORMS
    tools: PMap[str, ToolTally] = _NO_TOOLS


_EMPTY = Tally()

WASTED_FROM: Final = 2
"""The run length from which a call is wasted: every call of a run beyond its first. Compare
``run_length(...) >= WASTED_FROM``; the tallies count wasted calls so."""


def run_length(state: GuardState, event: Event) -> int:
    """Return the count of the run ``event`` belongs to: its agent's chain in ``state`` (the
    state ``reduce`` returned for ``event``) when ``event`` is a tracked call with an agent,
    else 0.

    A run starts at 1; a call whose run length is ``WASTED_FROM`` (2) or more is wasted.
    """
    if not isinstance(event, ToolCallFinished) or event.agent is None:
        return 0
    config = state.config
    if not config._plain and not config.tracks(event.tool):  # a plain config tracks every tool
        return 0
    stored = state._stored(event.agent)  # the chain's repeats, without building a ``Chain``
    return 0 if stored is None else stored[2]


def tally(counts: Tally, state: GuardState, event: Event, reminders: tuple[Reminder, ...]) -> Tally:
    """Return ``counts`` with ``event`` added.

    ``state`` is the state ``reduce`` returned for ``event`` and ``reminders`` what it gave.
    Events other than calls, and calls without an agent, leave the counts as they are. A chunk
    of one step for ``tally_steps``: the definitions are counted in one loop, ``count_packed``'s.
    """
    return tally_steps(counts, ((state, event, reminders),))


Step = tuple[GuardState, Event, tuple[Reminder, ...]]
"""One step of a replay: the state ``reduce`` returned for an event, the event, its reminders."""


PackedTally = tuple[
    int,
    int,
    int,
    int,
    int,
    int,
    tuple[tuple[str, int], ...],
    tuple[tuple[str, int, int, int, int, int], ...],
]
"""A ``Tally`` in exact tuples, for a fold that keeps one per session while steps come.

``(calls, tracked, wasted, denied, reminders, longest_run, forms, tools)``: ``forms`` holds
``(form, count)`` pairs and ``tools`` ``(name, calls, tracked, wasted, reminders, longest_run)``
rows, in the order first counted. Adding steps to it builds a few small tuples where adding
them to a ``Tally`` builds persistent maps (about three times the cost for one step), and the
garbage collector stops tracking an exact tuple of strings and ints, so a hundred thousand
sessions' counts cost its collections nothing. Build one with ``count_packed`` from
``NO_COUNTS``; read it with ``unpack_tally``.
"""

NO_COUNTS: PackedTally = (0, 0, 0, 0, 0, 0, (), ())
"""The packed tally of nothing: ``unpack_tally(NO_COUNTS) == Tally()``."""


CountedCall = tuple[str, int, bool, tuple[str, ...]]
"""What the tally reads of a call: its tool, its ``run_length``, whether it was denied, and the
forms of the reminders it gave (``counted_call``)."""


def counted_call(event: Event, run: int, reminders: tuple[Reminder, ...]) -> CountedCall | None:
    """What the tally reads of ``event`` (``None`` for an event that is not a call): ``run`` is
    its ``run_length`` in the state ``reduce`` returned for it, ``reminders`` what it gave.

    Calls that read the same are counted alike: a fold can keep how many of each it saw
    (``count_calls``) instead of the steps themselves."""
    if not isinstance(event, ToolCallFinished) or event.agent is None:
        return None
    forms = tuple(reminder.form for reminder in reminders) if reminders else ()
    return (event.tool, run, event.denied, forms)


def count_packed(packed: PackedTally, steps: Iterable[Step]) -> PackedTally:
    """Return ``packed`` with every step of ``steps`` added, in order.

    ``unpack_tally`` of the result equals folding ``tally`` over the steps from
    ``unpack_tally(packed)``. Feed it a bounded chunk at a time: it holds one count for each
    call that reads differently (``counted_call``), then adds them up with ``count_calls``.
    """
    calls: dict[CountedCall, int] = {}
    for state, event, reminders in steps:
        call = counted_call(event, run_length(state, event), reminders)
        if call is not None:
            calls[call] = calls.get(call, 0) + 1
    return count_calls(packed, calls)


def count_calls(packed: PackedTally, calls: Mapping[CountedCall, int]) -> PackedTally:
    """Return ``packed`` with each call of ``calls`` (``counted_call``) added as many times
    as it maps to; tools and reminder forms first counted are kept in the order of ``calls``.

    The counts are kept in plain local counters and packed once."""
    if not calls:
        return packed
    counted, tracked, wasted, denied, spoken, longest, packed_forms, packed_tools = packed
    forms = dict(packed_forms)
    # Per tool: [calls, tracked, wasted, reminders, longest_run], as in ``ToolTally``.
    tools = {row[0]: list(row[1:]) for row in packed_tools}
    for (tool, run, was_denied, said), times in calls.items():
        mine = tools.get(tool)
        if mine is None:
            mine = tools[tool] = [0, 0, 0, 0, 0]
        is_tracked, is_wasted = times * (run > 0), times * (run >= WASTED_FROM)
        counted += times
        tracked += is_tracked
        wasted += is_wasted
        longest = max(longest, run)
        mine[0] += times
        mine[1] += is_tracked
        mine[2] += is_wasted
        mine[4] = max(mine[4], run)
        denied += times * was_denied
        if said:
            spoken += times * len(said)
            mine[3] += times * len(said)
            for form in said:
                forms[form] = forms.get(form, 0) + times
    return _packed((counted, tracked, wasted, denied, spoken, longest), forms, tools)


def _packed(
    six: tuple[int, int, int, int, int, int], forms: dict[str, int], tools: dict[str, list[int]]
) -> PackedTally:
    """The packed tally of ``Tally``'s first six fields, its forms and its tools' counters
    (``[calls, tracked, wasted, reminders, longest_run]`` each)."""
    return (
        *six,
        tuple(forms.items()),
        tuple((name, mine[0], mine[1], mine[2], mine[3], mine[4]) for name, mine in tools.items()),
    )


def unpack_tally(packed: PackedTally) -> Tally:
    """Return the ``Tally`` that ``packed`` holds."""
    calls, tracked, wasted, denied, spoken, longest, forms, tools = packed
    return Tally(
        calls,
        tracked,
        wasted,
        denied,
        spoken,
        longest,
        pmap(dict(forms)),
        pmap({name: ToolTally(*counts) for name, *counts in tools}),
    )


def tally_steps(counts: Tally, steps: Iterable[Step]) -> Tally:
    """Return ``counts`` with every step of ``steps`` added, in order.

    Equal to folding ``tally`` over the steps one at a time, and cheaper: the steps are counted
    by ``count_packed`` and become one ``Tally``, merged into ``counts`` once. Feed it a
    bounded chunk at a time.
    """
    packed = count_packed(NO_COUNTS, steps)
    if packed is NO_COUNTS:
        return counts
    chunk = unpack_tally(packed)
    # A session's first chunk is most chunks: by the merge's identity it is the total.
    return chunk if counts == _EMPTY else merge_tallies(counts, chunk)


def merge_tallies(first: Tally, second: Tally) -> Tally:
    """Return the counts of both: sums, and the larger longest run, per tool as well."""
    tools = first.tools
    for name, theirs in second.tools.items():
        mine = tools.get(name)
        tools = tools.set(name, theirs if mine is None else _merge_tool(mine, theirs))
    forms = first.reminders_by_form
    for form, count in second.reminders_by_form.items():
        forms = forms.set(form, forms.get(form, 0) + count)
    return Tally(
        first.calls + second.calls,
        first.tracked + second.tracked,
        first.wasted + second.wasted,
        first.denied + second.denied,
        first.reminders + second.reminders,
        max(first.longest_run, second.longest_run),
        forms,
        tools,
    )


def merge_all_tallies(tallies: Iterable[Tally]) -> Tally:
    """Return the counts of all of ``tallies``: equal to folding ``merge_tallies`` over them
    from ``Tally()``, and cheaper for many (the sums gather in plain counters and become one
    ``Tally`` at the end)."""
    sums = TallySums()
    for counts in tallies:
        sums.add(counts)
    return sums.tally()


def merge_packed(packs: Iterable[PackedTally]) -> PackedTally:
    """Return the packed counts of all of ``packs``: ``unpack_tally`` of it equals
    ``merge_all_tallies`` of them unpacked. For a fold that keeps one ``PackedTally`` per
    session and wants their total: nothing is unpacked on the way, so the sessions cost no
    ``Tally`` each."""
    sums = TallySums()
    for packed in packs:
        sums.add_packed(packed)
    return sums.packed()


def _merge_tool(first: ToolTally, second: ToolTally) -> ToolTally:
    return ToolTally(
        first.calls + second.calls,
        first.tracked + second.tracked,
        first.wasted + second.wasted,
        first.reminders + second.reminders,
        max(first.longest_run, second.longest_run),
    )


_COUNTS = ("calls", "tracked", "wasted", "denied", "reminders", "longest_run")


def tally_to_json(counts: Tally) -> dict[str, object]:
    """Return ``counts`` as JSON-ready values, maps sorted by key."""
    encoded: dict[str, object] = {name: getattr(counts, name) for name in _COUNTS}
    encoded["reminders_by_form"] = dict(sorted(counts.reminders_by_form.items()))
    encoded["tools"] = {name: tool._asdict() for name, tool in sorted(counts.tools.items())}
    return encoded


def tally_from_json(raw: object) -> Result[Tally, CodecError]:
    """Return the tally ``raw`` encodes (as ``tally_to_json`` writes it), or the first problem."""
    from returns.result import Failure  # noqa: PLC0415  # when used: see _codec

    if not isinstance(raw, Mapping):
        return Failure(CodecError("tally", raw, "a tally must be a mapping"))
    counts: dict[str, int] = {}
    for name in _COUNTS:
        error = _count_error(f"tally.{name}", raw.get(name))
        if error is not None:
            return Failure(error)
        counts[name] = raw[name]
    forms = _counts_map("tally.reminders_by_form", raw.get("reminders_by_form"))
    tools = _tools_map(raw.get("tools"))
    return forms.bind(
        lambda by_form: tools.map(
            lambda by_tool: Tally(**counts, reminders_by_form=by_form, tools=by_tool)
        )
    )


def _count_error(path: str, value: object) -> CodecError | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return None
    return CodecError(path, value, "a count must be an integer of 0 or more")


def _counts_map(path: str, raw: object) -> Result[PMap[str, int], CodecError]:
    from returns.result import Failure, Success  # noqa: PLC0415  # when used: see _codec

    if not isinstance(raw, Mapping):
        return Failure(CodecError(path, raw, "must be a mapping"))
    for key, value in raw.items():
        error = _count_error(f"{path}[{key!r}]", value)
        if error is None and not isinstance(key, str):
            error = CodecError(path, key, "keys must be strings")
        if error is not None:
            return Failure(error)
    return Success(pmap(raw))


def _tools_map(raw: object) -> Result[PMap[str, ToolTally], CodecError]:
    from returns.result import Failure, Success  # noqa: PLC0415  # when used: see _codec

    if not isinstance(raw, Mapping):
        return Failure(CodecError("tally.tools", raw, "must be a mapping"))
    tools: dict[str, ToolTally] = {}
    for name, item in raw.items():
        path = f"tally.tools[{name!r}]"
        fields = _counts_map(path, item)
        if isinstance(fields, Failure) or not isinstance(name, str):
            return Failure(CodecError(path, item, "a tool's counts must map its fields"))
        values = fields.unwrap()
        if set(values) != set(ToolTally._fields):
            return Failure(CodecError(path, item, f"a tool's counts are {ToolTally._fields}"))
        tools[name] = ToolTally(**values)
    return Success(pmap(tools))


class TallySums:
    """Mutable counters that add many tallies, packed or not, up: ``add`` and ``add_packed``
    each, then ``tally()`` or ``packed()``, equal to folding ``merge_tallies`` from
    ``Tally()``. For one call that merges many (``merge_all_tallies``, ``merge_packed``, an
    audit's total); it holds a counter per tool and form, nothing per tally."""

    def __init__(self) -> None:
        # calls, tracked, wasted, denied, reminders, as in ``Tally``, and its longest run.
        self.counts = [0] * 5
        self.longest = 0
        self.forms: dict[str, int] = {}
        self.tools: dict[str, list[int]] = {}

    def add(self, counts: Tally) -> None:
        """Add ``counts``."""
        self._add(counts, counts.reminders_by_form.items(), counts.tools.items())

    def add_packed(self, packed: PackedTally) -> None:
        """Add the packed ``packed``."""
        self._add(packed, packed[6], ((row[0], row[1:]) for row in packed[7]))

    def _add(
        self,
        counts: Tally | PackedTally,
        forms: Iterable[tuple[str, int]],
        tools: Iterable[tuple[str, tuple[int, ...]]],
    ) -> None:
        """Add the first six counts of ``counts`` (a ``Tally`` and a ``PackedTally`` begin
        alike), its forms' items and its tools' items (each tool's counts in ``ToolTally``'s
        order)."""
        _add_into(self.counts, counts[:5])
        self.longest = max(self.longest, counts[5])
        for form, count in forms:
            self.forms[form] = self.forms.get(form, 0) + count
        for name, tool in tools:
            mine = self.tools.setdefault(name, [0] * 5)
            _add_into(mine, tool[:4])
            mine[4] = max(mine[4], tool[4])

    def packed(self) -> PackedTally:
        """The sum, packed."""
        calls, tracked, wasted, denied, reminders = self.counts
        return _packed(
            (calls, tracked, wasted, denied, reminders, self.longest), self.forms, self.tools
        )

    def tally(self) -> Tally:
        """The sum."""
        return unpack_tally(self.packed())


def _add_into(sums: list[int], values: tuple[int, ...]) -> None:
    for index, value in enumerate(values):
        sums[index] += value
