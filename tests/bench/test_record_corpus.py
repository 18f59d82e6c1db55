"""The corpus recorder (``bench.record_corpus``) with the real hosts ``make e2e`` installs (Codex
CLI 0.171.0, Claude Code 2.1.332, GitHub Copilot CLI 1.0.102, Qwen Code 0.24.4) against the
scripted model: each poll and loop it records into a temporary folder reads back through the
project's readers as the corpus's copy does, with the calls its labels name, and scores as they
say (a poll reminded at the defaults and not under ``progress = "result"``; every loop
reminded). ``e2e``: a poll's recording runs a host for half a minute."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest
from bench.record_corpus import main
from bench.scoring import Label, agent_calls, parse_labels, score_file

from repeat_guard import GuardConfig, ToolCallFinished, canonical_arguments
from repeat_guard_transcripts import READERS, Step, sniff_format, steps

pytestmark = pytest.mark.e2e

CORPUS = Path(__file__).parents[1] / "data" / "eval"
POLLS = [
    "codex/poll_write_stdin.jsonl",
    "claude-code/poll_sleep_tail.jsonl",
    "copilot-cli/poll_sleep_tail.jsonl",
    "copilot-cli/poll_read_bash.jsonl",
    "qwen-code/poll_tail.jsonl",
    "qwen-code/poll_read_output.jsonl",
]
NOTHING_CAPTURED = "Output: (empty)"
"""What Qwen Code 0.24.4's shell now and then returns for a command that did print, on a busy
machine (its e2e tests saw it too)."""


def read_back(path: Path, config: GuardConfig) -> list[Step]:
    """The replay's steps of the transcript at ``path``, read by the reader its format names."""
    reader = READERS[sniff_format(str(path)) or "unknown"]
    with path.open("rb") as stream:
        return [
            item for item in steps(reader.read(stream, path.name), config) if isinstance(item, Step)
        ]


def calls(path: Path) -> list[tuple[int, ToolCallFinished]]:
    """The transcript's tool calls (one agent's in these files) with their lines."""
    return [
        (step.located.where.line, step.located.event)
        for step in read_back(path, GuardConfig())
        if isinstance(step.located.event, ToolCallFinished)
    ]


def polls_of(found: list[tuple[int, ToolCallFinished]], first: int) -> list[ToolCallFinished]:
    """The calls from the ``first``-th on that are the same call as it: the polls (Copilot CLI
    reads an async shell once more itself when it ends, with other arguments)."""
    poll = found[first - 1][1]
    same = (poll.tool, canonical_arguments(poll.arguments))
    polls = []
    for _, event in found[first - 1 :]:
        if (event.tool, canonical_arguments(event.arguments)) != same:
            break
        polls.append(event)
    return polls


def label_of(name: str) -> Label:
    labels, errors = parse_labels((CORPUS / "labels.txt").read_text(encoding="utf-8"))
    assert errors == []
    (label,) = [label for label in labels if label.file == name]
    return label


Recorder = Callable[[str], Path]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorder:
    """Record a transcript by its corpus name, once for the module (so the hosts of the tests
    not selected are not run); return where the recording is."""
    out = tmp_path_factory.mktemp("corpus")

    def record(name: str) -> Path:
        if not (out / name).exists():
            main(out, [name])
        return out / name

    return record


@pytest.mark.parametrize("name", POLLS)
def test_a_recorded_poll_reads_back_with_its_labels_calls(recorded: Recorder, name: str) -> None:
    label, fresh, kept = label_of(name), calls(recorded(name)), calls(CORPUS / name)
    assert label.kind == "progress"
    first = label.calls[0]
    # as in the corpus's copy: the calls before the label's start the job, then one call polls
    assert [event.tool for _, event in fresh[: first - 1]] == [e.tool for _, e in kept[: first - 1]]
    polls = polls_of(fresh, first)
    assert len(polls) >= 3  # enough identical calls for the defaults' first reminder
    assert polls[0].tool == kept[first - 1][1].tool
    assert len(polls_of(kept, first)) == len(label.calls)  # the corpus's label: its polls
    # the label's kind: each poll's output is new (the job moved on), and none failed; a poll
    # whose output the host did not capture is new too, but says nothing of the job
    outputs = [canonical_arguments(event.result) for event in polls]
    captured = [output for output in outputs if NOTHING_CAPTURED not in output]
    assert len(captured) >= 2
    assert all(before != after for before, after in pairwise(captured))
    assert not any(event.failed for event in polls)


@pytest.mark.parametrize("name", POLLS)
def test_a_recorded_poll_scores_as_its_label_says(recorded: Recorder, name: str) -> None:
    fresh = calls(recorded(name))
    label = label_of(name)
    first = label.calls[0]
    # the label, with the calls and lines of this recording (its polls may number otherwise)
    last = first - 1 + len(polls_of(fresh, first))
    relabelled = replace(
        label, calls=tuple(range(first, last + 1)), lines=(fresh[first - 1][0], fresh[last - 1][0])
    )
    for config, reminded in ((GuardConfig(), 1), (GuardConfig(progress="result"), 0)):
        score = score_file([relabelled], agent_calls(read_back(recorded(name), config)))
        assert score.mismatches == []
        assert score.other == 0  # no reminder on a call the label does not name
        assert (score.labels["progress"], score.reminded["progress"]) == (1, reminded)


LOOPS = [
    "codex/loops.jsonl",
    "claude-code/loops.jsonl",
    "claude-code/loop_passing_tests.jsonl",
    "copilot-cli/loops.jsonl",
    "qwen-code/loops.jsonl",
]


@pytest.mark.parametrize("name", LOOPS)
def test_recorded_loops_read_back_as_the_corpus_copy_and_score_as_labelled(
    recorded: Recorder, name: str
) -> None:
    fresh, kept = calls(recorded(name)), calls(CORPUS / name)
    labels, errors = parse_labels((CORPUS / "labels.txt").read_text(encoding="utf-8"))
    assert errors == []
    own = [label for label in labels if label.file == name]
    assert own
    assert {label.kind for label in own} == {"loop"}
    # the scripted calls are the same, and each answers as in the corpus's copy: failed or not
    assert [(e.tool, canonical_arguments(e.arguments), e.failed) for _, e in fresh] == [
        (e.tool, canonical_arguments(e.arguments), e.failed) for _, e in kept
    ]
    # the labels' calls, on this recording's lines (a host may write a record more up front)
    relabelled = [
        replace(label, lines=(fresh[label.calls[0] - 1][0], fresh[label.calls[-1] - 1][0]))
        for label in own
    ]
    # reminded at the defaults, and under progress = "result" (whose fingerprint leaves out
    # what changes between these identical calls: line numbers, ids, durations)
    for config in (GuardConfig(), GuardConfig(progress="result")):
        score = score_file(relabelled, agent_calls(read_back(recorded(name), config)))
        assert score.mismatches == []
        assert score.reminded["loop"] == score.labels["loop"] == len(own)
        assert score.other == 0
