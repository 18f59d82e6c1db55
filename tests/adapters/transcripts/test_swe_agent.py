"""The SWE-agent reader on a real trajectory and hand-made documents.

Expected counts were made by hand from the file (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json

import pytest

from repeat_guard import ToolCallFinished
from repeat_guard_transcripts import MAX_DOCUMENT_BYTES, READERS, LineFault, Located
from repeat_guard_transcripts._swe_agent import split_action

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

EPS = FIXTURES / "swe-agent" / "ctf_crypto_eps.traj"


def test_the_same_wrong_flag_submitted_four_times_in_a_row() -> None:
    outcomes = run_file("swe-agent", EPS)
    # steps 10-13 submit the same flag (their actions on lines 68, 75, 82, 89)
    assert fired(outcomes) == [(82, "submit", 3, "gentle")]
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run) == (14, 3, 4)
    (session,) = summary(outcomes).sessions
    assert (session.session, session.agents) == ("ctf_crypto_eps", 1)
    assert diagnostics(outcomes) == []


def test_split_action() -> None:
    assert split_action("submit flag{x}\n") == ("submit", "flag{x}")
    assert split_action("edit 1:1\nimport os\nend_of_edit\n") == (
        "edit",
        "1:1\nimport os\nend_of_edit",
    )
    assert split_action("pwd\n") == ("pwd", "")
    assert split_action("python\nprint(1) x\n") == ("python", "print(1) x")


def document(steps: list[object], **extra: object) -> list[bytes]:
    text = json.dumps({"environment": "e", **extra, "trajectory": steps}, indent=2)
    return text.encode().splitlines(keepends=True)


def test_steps_without_an_observation_never_finished_and_odd_steps_are_diagnosed() -> None:
    steps: list[object] = [
        {"action": "ls\n", "observation": ""},
        3,
        {"thought": "no action"},
        {"action": "sleep 9\n"},
    ]
    outcomes = run_reader("swe-agent", document(steps, info={"a": [1, {"b": 2}]}))
    assert diagnostics(outcomes) == [
        (16, "a trajectory step that is not an object"),
        (17, "a trajectory step without an action"),
    ]
    assert unfinished(outcomes) == [(21, "sleep")]
    assert summary(outcomes).tally.calls == 1


def test_one_line_documents_place_every_step_on_line_one() -> None:
    steps = [{"action": "ls", "observation": ""}] * 3
    lines = [json.dumps({"trajectory": steps}).encode()]
    items = list(READERS["swe-agent"].read(lines, "t.traj"))
    calls = [i for i in items if isinstance(i, Located)]
    assert [c.where.line for c in calls] == [1, 1, 1]
    assert calls[0].event == ToolCallFinished("t", "ls", "", result="")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            b'{\n  "trajectory": [\n    {"action": "ls", "observation": ""},\n    {"act',
            4,
            "invalid JSON",
        ),
        (
            b'{\n  "trajectory": [\n    {"action": "ls", "observation": ""}\n    3]}',
            4,
            "expected ',' or ']'",
        ),
        (b'{"trajectory": 3}', 1, "no 'trajectory' array in the document"),
        (b'{"a": 1, "trajectory": []}', 0, ""),
        (b'{"a": [1,}', 1, "invalid JSON"),
        (b'{"a" 1}', 1, "expected ':'"),
        (b"{3: 1}", 1, "no 'trajectory' array in the document"),
        (b"[1]", 1, "expected an object"),
        # Damage after the steps: the steps are read, and the damage gets its diagnostic.
        (b'{"trajectory": [],\n "history": [{"a": 1,}]}', 2, "invalid JSON"),
        (b'{"trajectory": [],\n "info": {"x": 1}\n}\ntrailing', 4, "text after the end"),
        (b'{"trajectory": [],\n "info": 1,\n}', 3, "invalid JSON"),
        (b'{"trajectory": [] "info": 1}', 1, "expected ',' or '}'"),
        (b'{"trajectory": [{"action": "ls"} 2]}', 1, "expected ',' or ']'"),
        (b'{"trajectory": [], "trajectory": 1}\n', 0, ""),
        (b"{}", 1, "no 'trajectory' array in the document"),
        (b"\n\n\xff", 3, "not UTF-8"),
        (b'{"trajectory": [' + b"[" * 100_000 + b"]}", 1, "JSON nested too deeply to parse"),
        (b'{"trajectory": [1' + b"0" * 5000 + b"]}", 1, "a number has more than 4300 digits"),
    ],
)
def test_broken_documents_give_a_diagnostic_where_they_break(
    text: bytes, where: int, message: str
) -> None:
    outcomes = run_reader("swe-agent", text.splitlines(keepends=True))
    found = diagnostics(outcomes)
    if not message:
        assert found == []
        return
    assert len(found) == 1
    assert found[0][0] == where
    assert message in found[0][1]


def test_a_line_that_could_not_be_read_stops_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    import repeat_guard_transcripts._document as document_module

    outcomes = run_reader("swe-agent", [b"{\n", LineFault("read failed: EIO")])
    assert diagnostics(outcomes) == [(2, "read failed: EIO")]
    monkeypatch.setattr(document_module, "MAX_DOCUMENT_BYTES", 10)
    outcomes = run_reader("swe-agent", [b'{"trajectory":\n', b"[]}\n"])
    assert diagnostics(outcomes) == [(1, "a JSON value longer than the limit of 10 bytes")]
    assert MAX_DOCUMENT_BYTES > 10


def test_sniffing() -> None:
    reader = READERS["swe-agent"]
    assert reader.sniff(EPS.read_bytes()[:4096])
    assert not reader.sniff(b'[{"action": "run"}]')
    assert not reader.sniff(b'{"trajectory": []}')


def test_the_steps_before_a_byte_that_is_not_utf8_are_kept() -> None:
    # As invalid JSON on that line would: the steps before it count, a diagnostic names it.
    steps = [
        b'{"trajectory": [\n',
        b'  {"action": "ls", "observation": "a"},\n',
        b'  {"action": "ls", "observation": "a"},\n',
        b'  {"action": "ls", "observation": "\xff"},\n',
        b'  {"action": "ls", "observation": "a"}\n',
        b"]}\n",
    ]
    outcomes = run_reader("swe-agent", steps)
    assert summary(outcomes).tally.calls == 2
    assert diagnostics(outcomes) == [(4, "not UTF-8 (invalid start byte at byte 132)")]
    # After the steps (in ``info``): every step counts.
    tail = [*steps[:3], b'  {"action": "ls", "observation": "a"}\n', b'], "info": "\xc3"}\n']
    outcomes = run_reader("swe-agent", tail)
    assert summary(outcomes).tally.calls == 3
    assert [line for line, _ in diagnostics(outcomes)] == [5]
    # Broken JSON before the byte is said first, then the byte.
    broken = [steps[0], b"  {bad},\n", steps[3]]
    assert [line for line, _ in diagnostics(run_reader("swe-agent", broken))] == [2, 3]


@pytest.mark.parametrize("chunk", [1, 7, 300])
def test_a_document_read_in_chunks_of_any_size_reads_the_same(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    # The text walked past is dropped as more is read: a value cut between two chunks is
    # scanned again with more text, and nothing else changes.
    import repeat_guard_transcripts._document as document_module

    broken = b'{"trajectory": [\n  {"action": "ls",\n   "observation": 12\n  },\n  {"act\n'
    samples = [
        EPS.read_bytes(),
        broken,
        b'{"trajectory": [{"action": "ls", "observation": 1}]}',
        b'{"trajectory": [\n{bad},\n{"action": "ls"}\n]}\n',  # broken in the middle
        b'{"trajectory": [12',  # a number at the end of the text read: is it whole?
    ]
    whole = [run_reader("swe-agent", sample.splitlines(keepends=True)) for sample in samples]
    monkeypatch.setattr(document_module, "_CHUNK", chunk)
    for sample, expected in zip(samples, whole, strict=True):
        assert run_reader("swe-agent", sample.splitlines(keepends=True)) == expected


def test_a_step_whose_action_is_empty_is_a_note_not_a_diagnostic() -> None:
    # SWE-agent records "action": "" when the model's reply did not parse: nothing ran.
    steps: list[object] = [
        {"action": "ls\n", "observation": "a"},
        {"action": "", "observation": "Your output was not formatted correctly."},
        {"action": " \n", "observation": "again"},
        {"action": "ls\n", "observation": "a"},
    ]
    outcomes = run_reader("swe-agent", document(steps))
    assert diagnostics(outcomes) == []
    message = "a step with an empty action (the model's reply did not parse): no call"
    assert diagnostics(outcomes, "note") == [(9, message), (13, message)]
    # By hand: two calls, the same ls twice in a row (the notes make no call and end no run).
    assert (summary(outcomes).tally.calls, summary(outcomes).tally.wasted) == (2, 1)
