"""Scoring the guard against hand labels: what ``make eval`` counts, kept apart from its I/O.

A label (a line of ``tests/data/eval/labels.txt``) marks calls of one agent in one file: a
genuine ``loop`` (the same call back to back, answered the same way), a ``retry`` (the same call
failing the same way with other calls between) or ``progress`` (the same call again, whose
output changed because work progressed: no reminder is wanted). ``agent_calls`` folds the one
replay's steps (``steps(items, config)``) into each agent's calls in order, with the reminders
each got and whether ``admit`` would have refused it; ``score_file`` matches them against the
file's labels. A label that names calls the file does not have, or lines other than theirs, is a
mismatch, reported rather than scored, so a label can never silently score nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from repeat_guard import Deny, GuardState, ToolCallFinished, admit
from repeat_guard_transcripts import Step, Stepped

Kind = Literal["loop", "retry", "progress"]
KINDS: tuple[str, ...] = get_args(Kind)
CAUGHT_BY = 5
"""The target: a loop of 3 or more identical calls is caught by its fifth call."""


@dataclass(frozen=True, slots=True)
class Label:
    """One labelled event: ``calls`` are ordinals (from 1) in the agent's stream of calls."""

    file: str
    session: str | None  # None: the file's only session
    agent: str | None  # None: the session's only agent
    calls: tuple[int, ...]
    lines: tuple[int, int]
    kind: Kind
    note: str


@dataclass(frozen=True, slots=True)
class Call:
    """A call as the guard saw it: its line, the reminders it got, and whether ``admit``
    would have refused it before it ran."""

    line: int
    reminders: int
    refused: bool


Calls = Mapping[tuple[str, str], list[Call]]
"""Each (session, agent)'s calls, in order."""


def parse_labels(text: str) -> tuple[list[Label], list[str]]:
    """Return the labels in ``text`` and an error for each line that is not one (its number
    and why); blank lines and ``#`` comments are skipped."""
    labels: list[Label] = []
    errors: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        label = _label(line)
        if isinstance(label, str):
            errors.append(f"labels:{number}: {label}")
        else:
            labels.append(label)
    return labels, errors


def _label(line: str) -> Label | str:
    fields = line.split(None, 6)
    if len(fields) < 7:
        return "a label needs file, session, agent, calls, lines, kind and a note"
    file, session, agent, calls_text, lines_text, kind, note = fields
    calls = _ordinals(calls_text)
    lines = _ordinals(lines_text) if "," not in lines_text else None
    if calls is None or lines is None:
        return f"calls and lines must be ordinals, got {calls_text!r} and {lines_text!r}"
    if kind not in KINDS:
        return f"kind must be one of {', '.join(KINDS)}, got {kind!r}"
    return Label(
        file,
        None if session == "-" else session,
        None if agent == "-" else agent,
        calls,
        (lines[0], lines[-1]),
        kind,  # type: ignore[arg-type]  # checked against KINDS above
        note,
    )


def _ordinals(text: str) -> tuple[int, ...] | None:
    """``"3-5"`` as (3, 4, 5), ``"3,7"`` as (3, 7); None when it is neither, or not rising."""
    if "-" in text:
        first, _, last = text.partition("-")
        if not (first.isdigit() and last.isdigit()) or int(last) < int(first):
            return None
        return tuple(range(int(first), int(last) + 1))
    parts = text.split(",")
    if not all(part.isdigit() for part in parts):
        return None
    numbers = tuple(int(part) for part in parts)
    return numbers if list(numbers) == sorted(set(numbers)) and numbers[0] >= 1 else None


def agent_calls(stepped: Iterable[Stepped]) -> dict[tuple[str, str], list[Call]]:
    """Fold the replay's steps into each (session, agent)'s calls, in order.

    ``refused`` is what ``admit`` answers for the call in the state before it (the session's
    state after its previous step): the call a ``denyAt`` or a spent budget would have stopped.
    The recorded call still ran, so the replay goes on as it happened."""
    states: dict[str, GuardState] = {}
    calls: dict[tuple[str, str], list[Call]] = {}
    for item in stepped:
        if not isinstance(item, Step):
            continue
        where, event = item.located.where, item.located.event
        before = states.get(where.session)
        states[where.session] = item.state
        if not isinstance(event, ToolCallFinished) or event.agent is None:
            continue
        refused = before is not None and isinstance(admit(before, event), Deny)
        calls.setdefault((where.session, event.agent), []).append(
            Call(where.line, len(item.reminders), refused)
        )
    return calls


@dataclass(slots=True)
class Score:
    """Counts over labels: per kind, how many, how many got a reminder (``reminded``), how many
    reminders they got (``reminders``) and how many would have been refused (``refused``); for
    each label, the ordinal within it of the first call reminded (0: none); reminders on calls
    no label names (``other``); and mismatches."""

    labels: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    reminded: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    reminders: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    refused: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    first: dict[Label, int] = field(default_factory=dict)
    other: int = 0
    mismatches: list[str] = field(default_factory=list)

    def add(self, other: Score) -> None:
        """Add ``other``'s counts to these."""
        for kind in KINDS:
            self.labels[kind] += other.labels[kind]
            self.reminded[kind] += other.reminded[kind]
            self.reminders[kind] += other.reminders[kind]
            self.refused[kind] += other.refused[kind]
        self.first.update(other.first)
        self.other += other.other
        self.mismatches += other.mismatches

    def caught_by(self, limit: int = CAUGHT_BY, shortest: int = 3) -> tuple[int, int]:
        """Of the loops of ``shortest`` calls or more: how many were reminded by their
        ``limit``-th call, and how many there are."""
        long = [(label, k) for label, k in self.first.items() if label.kind == "loop"]
        long = [(label, k) for label, k in long if len(label.calls) >= shortest]
        return sum(1 for _, k in long if 0 < k <= limit), len(long)


def score_file(labels: Iterable[Label], calls: Calls) -> Score:
    """Score one file's ``calls`` (from ``agent_calls``) against its ``labels``."""
    score = Score()
    named: set[tuple[tuple[str, str], int]] = set()
    for label in labels:
        key = _key(label, calls)
        if isinstance(key, str):
            score.mismatches.append(f"{label.file}: {key}")
            continue
        stream = calls[key]
        if label.calls[-1] > len(stream):
            score.mismatches.append(f"{label.file}: {key[0]} has {len(stream)} calls")
            continue
        chosen = [stream[n - 1] for n in label.calls]
        if (chosen[0].line, chosen[-1].line) != label.lines:
            found = f"{chosen[0].line}-{chosen[-1].line}"
            score.mismatches.append(f"{label.file}: calls {label.calls} are on lines {found}")
            continue
        named.update((key, n) for n in label.calls)
        reminded = [k for k, call in enumerate(chosen, 1) if call.reminders]
        score.labels[label.kind] += 1
        score.reminded[label.kind] += bool(reminded)
        score.reminders[label.kind] += sum(call.reminders for call in chosen)
        score.refused[label.kind] += any(call.refused for call in chosen)
        score.first[label] = reminded[0] if reminded else 0
    score.other = sum(
        call.reminders
        for key, stream in calls.items()
        for n, call in enumerate(stream, 1)
        if (key, n) not in named
    )
    return score


def _key(label: Label, calls: Calls) -> tuple[str, str] | str:
    """The (session, agent) a label names, or why it names none."""
    sessions = sorted({session for session, _ in calls})
    session = label.session
    if session is None:
        if len(sessions) != 1:
            return f"'-' names no session: the file has {len(sessions)}"
        session = sessions[0]
    agents = sorted(agent for s, agent in calls if s == session)
    agent = label.agent
    if agent is None:
        if len(agents) != 1:
            return f"'-' names no agent: session {session!r} has {len(agents)}"
        agent = agents[0]
    if (session, agent) not in calls:
        return f"no calls of agent {agent!r} in session {session!r}"
    return session, agent
