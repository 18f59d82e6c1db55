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

Audits (the second half of this file): an audit folds each session's events into a ``Waste``
(a ``Tally`` plus where the runs were, which turns they cost, on which day and in which
project), adds sessions up into files and files into one total with ``merge_waste``. Files are
independent, so the total must not depend on how the work was split or in which order the
pieces came back: ``merge_waste`` is associative and commutative, and ``Waste()`` is its
identity.

Audit definitions (the ones above hold; these are added):

* a *run* is a maximal sequence of identical tracked calls by one agent (the chain the reducer
  keeps); a run of length 2 or more is a loop, and its length minus one is its waste;
* a *wasted turn* is a model turn (one assistant message, one response) that made at least one
  wasted call; ``wasted_tokens`` adds up the output tokens those turns recorded, once per
  turn, and ``wasted_input_tokens`` the input tokens (every token of the context the model
  read for the turn, cached or not);
* the *worst* runs are the longest, ties broken by file, first line, session, agent, tool and
  arguments, so any two ways of splitting the same work keep the same runs; the worst sessions
  are those with the most wasted calls, ties broken by calls, file and session;
* a day is the ``YYYY-MM-DD`` of the call's timestamp, ``"unknown"`` when it has none.

Only the best ``keep`` runs and sessions survive a merge: a total over a million files stays
as small as one over ten.
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
    "UNKNOWN_DAY",
    "WASTED_FROM",
    "DayTally",
    "PackedTally",
    "ProjectTally",
    "Run",
    "SessionAudit",
    "SessionWaste",
    "Step",
    "Tally",
    "ToolTally",
    "Waste",
    "count_packed",
    "merge_all_tallies",
    "merge_audits",
    "merge_packed",
    "merge_sessions",
    "merge_tallies",
    "merge_waste",
    "merge_wastes",
    "run_length",
    "tally",
    "tally_from_json",
    "tally_steps",
    "tally_to_json",
    "unpack_tally",
    "waste_to_json",
    "worst_runs",
    "worst_sessions",
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
    if not state.config.tracks(event.tool):
        return 0
    chain = state.chain(event.agent)
    return 0 if chain is None else chain.repeats


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


def count_packed(packed: PackedTally, steps: Iterable[Step]) -> PackedTally:
    """Return ``packed`` with every step of ``steps`` added, in order.

    ``unpack_tally`` of the result equals folding ``tally`` over the steps from
    ``unpack_tally(packed)``. The steps are counted in plain local counters and packed once:
    feed it a bounded chunk at a time (it holds nothing beyond one counter per tool and form).
    """
    calls, tracked, wasted, denied, spoken, longest, packed_forms, packed_tools = packed
    forms = dict(packed_forms)
    # Per tool: [calls, tracked, wasted, reminders, longest_run], as in ``ToolTally``.
    tools = {row[0]: list(row[1:]) for row in packed_tools}
    before = calls
    for state, event, reminders in steps:
        if not isinstance(event, ToolCallFinished) or event.agent is None:
            continue
        run = run_length(state, event)
        mine = tools.get(event.tool)
        if mine is None:
            mine = tools[event.tool] = [0, 0, 0, 0, 0]
        calls += 1
        tracked += run > 0
        wasted += run >= WASTED_FROM
        longest = max(longest, run)
        mine[0] += 1
        mine[1] += run > 0
        mine[2] += run >= WASTED_FROM
        mine[4] = max(mine[4], run)
        denied += event.denied
        if reminders:
            spoken += len(reminders)
            mine[3] += len(reminders)
            _count_forms(forms, reminders)
    if calls == before:
        return packed
    return _packed((calls, tracked, wasted, denied, spoken, longest), forms, tools)


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


def _count_forms(forms: dict[str, int], reminders: tuple[Reminder, ...]) -> None:
    for reminder in reminders:
        forms[reminder.form] = forms.get(reminder.form, 0) + 1


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
    sums = _TallySums()
    for counts in tallies:
        sums.add(counts)
    return sums.tally()


def merge_packed(packs: Iterable[PackedTally]) -> PackedTally:
    """Return the packed counts of all of ``packs``: ``unpack_tally`` of it equals
    ``merge_all_tallies`` of them unpacked. For a fold that keeps one ``PackedTally`` per
    session and wants their total: nothing is unpacked on the way, so the sessions cost no
    ``Tally`` each."""
    sums = _TallySums()
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


UNKNOWN_DAY = "unknown"


class Run(NamedTuple):
    """A loop: ``length`` identical calls in a row by ``agent``.

    ``arguments`` is the canonical argument text, cut to a preview by the caller; ``lines``
    holds the line of each call of the run in order, the first few of them when the run is
    long (``length`` counts them all).
    """

    length: int
    tool: str
    arguments: str
    file: str
    session: str
    agent: str
    lines: tuple[int, ...]


class SessionWaste(NamedTuple):
    """One session's place in the ranking of sessions by waste."""

    wasted: int
    calls: int
    file: str
    session: str
    project: str


class DayTally(NamedTuple):
    """Calls and wasted calls made on one day."""

    calls: int = 0
    wasted: int = 0


class ProjectTally(NamedTuple):
    """What one project's sessions did."""

    sessions: int = 0
    calls: int = 0
    wasted: int = 0
    wasted_tokens: int = 0
    wasted_input_tokens: int = 0


_NO_DAYS: PMap[str, DayTally] = pmap()
_NO_PROJECTS: PMap[str, ProjectTally] = pmap()
_NO_TALLY = Tally()


class Waste(NamedTuple):
    """The audit's counts over some sessions (see the module's definitions).

    ``counts`` is the core tally of their events; ``files``, ``sessions``, ``diagnostics`` and
    ``bytes`` count what was read; ``worst`` and ``worst_sessions`` are ranked and cut to the
    ``keep`` the merge was given.
    """

    counts: Tally = _NO_TALLY
    files: int = 0
    sessions: int = 0
    diagnostics: int = 0
    bytes: int = 0
    wasted_turns: int = 0
    wasted_tokens: int = 0
    wasted_input_tokens: int = 0
    days: PMap[str, DayTally] = _NO_DAYS
    projects: PMap[str, ProjectTally] = _NO_PROJECTS
    worst: tuple[Run, ...] = ()
    worst_sessions: tuple[SessionWaste, ...] = ()


class SessionAudit(NamedTuple):
    """What an audit keeps of one session, in exact tuples: a file may hold a hundred thousand
    sessions, and a ``Waste`` each (a score of objects: persistent maps, named tuples) cost more
    for every full garbage collection to walk, for a process pool to pickle and for the file's
    total to add up than reading the calls did.

    ``counts`` is the session's packed tally (``count_packed``), ``days`` holds
    ``(day, calls, wasted)`` rows, one per day, ``worst`` the session's worst runs, already
    ranked and cut, and ``ranked`` whether the session takes part in the ranking of sessions
    (a session with no wasted call never does). ``waste`` is the session's ``Waste``, with
    ``sessions == 1`` and the session in its project; ``merge_sessions`` adds many up.
    """

    file: str
    session: str
    project: str
    counts: PackedTally = NO_COUNTS
    wasted_turns: int = 0
    wasted_tokens: int = 0
    wasted_input_tokens: int = 0
    days: tuple[tuple[str, int, int], ...] = ()
    worst: tuple[Run, ...] = ()
    ranked: bool = True

    @property
    def waste(self) -> Waste:
        """The session's counts as a ``Waste``."""
        return _session_waste(self)


def _session_waste(session: SessionAudit) -> Waste:
    """``SessionAudit.waste``: built directly, since most files hold one session and their
    total is this; ``merge_sessions`` adds the same parts up without it."""
    counts = unpack_tally(session.counts)
    return Waste(
        counts=counts,
        sessions=1,
        wasted_turns=session.wasted_turns,
        wasted_tokens=session.wasted_tokens,
        wasted_input_tokens=session.wasted_input_tokens,
        days=pmap({day: DayTally(calls, wasted) for day, calls, wasted in session.days}),
        projects=pmap({session.project: _project_row(session, counts.calls, counts.wasted)}),
        worst=session.worst,
        worst_sessions=_ranking_entry(session, counts.calls, counts.wasted),
    )


def _project_row(session: SessionAudit, calls: int, wasted: int) -> ProjectTally:
    """What ``session`` adds to its project (it made ``calls`` calls, ``wasted`` wasted)."""
    return ProjectTally(1, calls, wasted, session.wasted_tokens, session.wasted_input_tokens)


def _ranking_entry(session: SessionAudit, calls: int, wasted: int) -> tuple[SessionWaste, ...]:
    """``session``'s place in the ranking of sessions: none unless it is ranked and wasted a
    call."""
    if session.ranked and wasted > 0:
        return (SessionWaste(wasted, calls, session.file, session.session, session.project),)
    return ()


def _run_rank(run: Run) -> tuple[object, ...]:
    first = run.lines[0] if run.lines else 0
    return (-run.length, run.file, first, run.session, run.agent, run.tool, run.arguments, run)


def _session_rank(session: SessionWaste) -> tuple[object, ...]:
    return (-session.wasted, -session.calls, session.file, session.session, session.project)


def worst_runs(runs: Iterable[Run], keep: int) -> tuple[Run, ...]:
    """Return the ``keep`` worst of ``runs``, worst first (see the module's definitions)."""
    return tuple(sorted(runs, key=_run_rank)[:keep])


def worst_sessions(sessions: Iterable[SessionWaste], keep: int) -> tuple[SessionWaste, ...]:
    """Return the ``keep`` sessions with the most waste, most first."""
    return tuple(sorted(sessions, key=_session_rank)[:keep])


def merge_waste(first: Waste, second: Waste, keep: int) -> Waste:
    """Return the counts of both, keeping the ``keep`` worst runs and sessions.

    Associative and commutative for a given ``keep``; ``Waste()`` is the identity whenever the
    other side already holds at most ``keep`` runs and sessions (as every merge's result does).
    """
    return Waste(
        merge_tallies(first.counts, second.counts),
        first.files + second.files,
        first.sessions + second.sessions,
        first.diagnostics + second.diagnostics,
        first.bytes + second.bytes,
        first.wasted_turns + second.wasted_turns,
        first.wasted_tokens + second.wasted_tokens,
        first.wasted_input_tokens + second.wasted_input_tokens,
        _merge_days(first.days, second.days),
        _merge_projects(first.projects, second.projects),
        worst_runs(first.worst + second.worst, keep),
        worst_sessions(first.worst_sessions + second.worst_sessions, keep),
    )


def merge_wastes(wastes: Iterable[Waste], keep: int) -> Waste:
    """Return the counts of all of ``wastes``, keeping the ``keep`` worst runs and sessions.

    Equal to folding ``merge_waste`` over ``wastes`` from ``Waste()``, and cheaper for many:
    the sums gather in plain counters and become one ``Waste`` at the end, and the rankings are
    cut to ``keep`` whenever ``4 * keep`` entries wait, so what is held stays bounded however
    many wastes come (``merge_audits``, which takes sessions too).
    """
    return merge_audits(wastes, keep)


def merge_sessions(sessions: Iterable[SessionAudit], keep: int) -> Waste:
    """Return the counts of all of ``sessions``, keeping the ``keep`` worst runs and sessions.

    Equal to ``merge_wastes`` of their ``waste``, without building one per session: their
    packed counts and rows are added into the same counters directly (``merge_audits``). For
    one session its ``waste`` is cheaper (the merge's counters cost more than they save).
    """
    return merge_audits(sessions, keep)


def merge_audits(parts: Iterable[SessionAudit | Waste], keep: int) -> Waste:
    """Return the counts of all of ``parts``, sessions' audits and wastes in any mix, keeping
    the ``keep`` worst runs and sessions.

    Equal to folding ``merge_waste`` over each part's ``Waste`` (a session's ``waste``) from
    ``Waste()``; ``merge_wastes`` and ``merge_sessions`` are this fold. An audit of
    many files hands each file's sessions and a ``Waste`` of the file's own numbers (files,
    bytes, diagnostics) to one call, so no file's sessions are ever built into persistent maps.
    """
    sums = _WasteSums()
    for part in parts:
        if isinstance(part, SessionAudit):
            sums.add_session(part, keep)
        else:
            sums.add(part, keep)
    return sums.waste(keep)


class _TallySums:
    """The mutable counters that add many tallies up; never leaves the call that made it."""

    def __init__(self) -> None:
        # calls, tracked, wasted, denied, reminders, as in ``Tally``, and its longest run.
        self.counts = [0] * 5
        self.longest = 0
        self.forms: dict[str, int] = {}
        self.tools: dict[str, list[int]] = {}

    def add(self, counts: Tally) -> None:
        self._add(counts, counts.reminders_by_form.items(), counts.tools.items())

    def add_packed(self, packed: PackedTally) -> None:
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
        calls, tracked, wasted, denied, reminders = self.counts
        return _packed(
            (calls, tracked, wasted, denied, reminders, self.longest), self.forms, self.tools
        )

    def tally(self) -> Tally:
        return unpack_tally(self.packed())


class _WasteSums:
    """The mutable counters of one ``merge_wastes`` call; never leaves it."""

    def __init__(self) -> None:
        # files, sessions, diagnostics, bytes, wasted_turns, wasted_tokens,
        # wasted_input_tokens, as in ``Waste``.
        self.numbers = [0] * 7
        self.counts = _TallySums()
        self.days: dict[str, list[int]] = {}
        self.projects: dict[str, list[int]] = {}
        self.runs: list[Run] = []
        self.sessions: list[SessionWaste] = []

    def add(self, waste: Waste, keep: int) -> None:
        _add_into(self.numbers, waste[1:8])
        self.counts.add(waste.counts)
        for day, both in waste.days.items():
            _add_into(self.days.setdefault(day, [0, 0]), both)
        for project, five in waste.projects.items():
            _add_into(self.projects.setdefault(project, [0] * 5), five)
        self.runs += waste.worst
        self.sessions += waste.worst_sessions
        self.cut(keep)

    def add_session(self, session: SessionAudit, keep: int) -> None:
        """Add the ``Waste`` that ``session`` stands for (``SessionAudit.waste``)."""
        counts = session.counts
        calls, wasted = counts[0], counts[2]
        numbers = self.numbers
        numbers[1] += 1
        numbers[4] += session.wasted_turns
        numbers[5] += session.wasted_tokens
        numbers[6] += session.wasted_input_tokens
        self.counts.add_packed(counts)
        for day, day_calls, day_wasted in session.days:
            _add_into(self.days.setdefault(day, [0, 0]), (day_calls, day_wasted))
        project = _project_row(session, calls, wasted)
        _add_into(self.projects.setdefault(session.project, [0] * 5), project)
        self.runs += session.worst
        self.sessions += _ranking_entry(session, calls, wasted)
        self.cut(keep)

    def cut(self, keep: int) -> None:
        """Cut the rankings waiting to ``keep`` once ``4 * keep`` entries wait."""
        if len(self.runs) >= 4 * keep:
            self.runs[:] = worst_runs(self.runs, keep)
        if len(self.sessions) >= 4 * keep:
            self.sessions[:] = worst_sessions(self.sessions, keep)

    def waste(self, keep: int) -> Waste:
        files, sessions, diagnostics, size, turns, tokens, input_tokens = self.numbers
        return Waste(
            self.counts.tally(),
            files,
            sessions,
            diagnostics,
            size,
            turns,
            tokens,
            input_tokens,
            pmap({day: DayTally(*both) for day, both in self.days.items()}),
            pmap({name: ProjectTally(*five) for name, five in self.projects.items()}),
            worst_runs(self.runs, keep),
            worst_sessions(self.sessions, keep),
        )


def _add_into(sums: list[int], values: tuple[int, ...]) -> None:
    for index, value in enumerate(values):
        sums[index] += value


def _merge_days(first: PMap[str, DayTally], second: PMap[str, DayTally]) -> PMap[str, DayTally]:
    merged = first
    for day, theirs in second.items():
        mine = merged.get(day)
        both = theirs if mine is None else DayTally(mine[0] + theirs[0], mine[1] + theirs[1])
        merged = merged.set(day, both)
    return merged


def _merge_projects(
    first: PMap[str, ProjectTally], second: PMap[str, ProjectTally]
) -> PMap[str, ProjectTally]:
    merged = first
    for name, theirs in second.items():
        mine = merged.get(name)
        merged = merged.set(name, theirs if mine is None else _merge_project(mine, theirs))
    return merged


def _merge_project(first: ProjectTally, second: ProjectTally) -> ProjectTally:
    return ProjectTally(
        first.sessions + second.sessions,
        first.calls + second.calls,
        first.wasted + second.wasted,
        first.wasted_tokens + second.wasted_tokens,
        first.wasted_input_tokens + second.wasted_input_tokens,
    )


def waste_to_json(waste: Waste) -> dict[str, object]:
    """Return ``waste`` as JSON-ready values: maps sorted by key, rankings in rank order."""
    return {
        **tally_to_json(waste.counts),
        "files": waste.files,
        "sessions": waste.sessions,
        "diagnostics": waste.diagnostics,
        "bytes": waste.bytes,
        "wasted_turns": waste.wasted_turns,
        "wasted_tokens": waste.wasted_tokens,
        "wasted_input_tokens": waste.wasted_input_tokens,
        "days": {day: counts._asdict() for day, counts in sorted(waste.days.items())},
        "projects": {name: p._asdict() for name, p in sorted(waste.projects.items())},
        "worst_runs": [{**run._asdict(), "lines": list(run.lines)} for run in waste.worst],
        "worst_sessions": [session._asdict() for session in waste.worst_sessions],
    }
