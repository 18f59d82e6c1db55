"""The mini-swe-agent reader on a public trajectory, a 1.1 trajectory with tool calls, and
hand-made documents of each shape the agent writes.

Expected counts were made by hand from the files (see ``fixtures/README.md``).
"""

from __future__ import annotations

import json
import re

import pytest

from repeat_guard import PromptSubmitted, ToolCallFinished
from repeat_guard_transcripts import READERS, Located, sniff_head
from repeat_guard_transcripts._mini_swe_agent import actions_in_text

from ._support import FIXTURES, diagnostics, fired, run_file, run_reader, summary, unfinished

HERE = FIXTURES / "mini-swe-agent"
NO_ACTION = "a reply with no action the agent could run ({}): no call"


def test_a_loop_of_tool_calls_a_format_error_a_rejection_and_the_submission() -> None:
    outcomes = run_file("mini-swe-agent", HERE / "toolcalls.traj.json")
    # The same pytest four times (answered on lines 48, 83, 118, 153): fires at the third.
    assert fired(outcomes) == [(118, "bash", 3, "gentle")]
    total = summary(outcomes).tally
    # By hand: 4 pytest calls, rm -rf (not executed, rejected on line 206: denied), and the
    # submitting echo (no observation; it counts at the exit message, line 237).
    assert (total.calls, total.wasted, total.denied, total.longest_run) == (6, 3, 1, 4)
    assert diagnostics(outcomes) == []
    assert diagnostics(outcomes, "note") == [(164, NO_ACTION.format("FormatError"))]
    assert unfinished(outcomes) == []
    (session,) = summary(outcomes).sessions
    assert (session.session, session.agents) == ("toolcalls", 1)
    lines = (HERE / "toolcalls.traj.json").read_bytes().splitlines(keepends=True)
    items = list(READERS["mini-swe-agent"].read(lines, "t"))
    calls = [i.event for i in items if isinstance(i, Located)][1:]
    # returncode 1 each time: failed; the rejected and the submitting command have no answer.
    assert [(c.failed, c.denied) for c in calls if isinstance(c, ToolCallFinished)] == [
        (True, False),
        (True, False),
        (True, False),
        (True, False),
        (False, True),
        (False, False),
    ]


def test_a_public_text_based_trajectory_as_a_list_of_messages() -> None:
    outcomes = run_file("mini-swe-agent", HERE / "github_issue.traj.json")
    # By hand: ten assistant replies, each with one mswea_bash_command block, each answered
    # by the next user message; `cat tests/missing_colon.py` twice, not in a row.
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run) == (10, 0, 1)
    assert diagnostics(outcomes) == diagnostics(outcomes, "note") == []
    assert [s.session for s in summary(outcomes).sessions] == ["github_issue"]


def document(messages: list[object], version: str = "mini-swe-agent-1.1") -> list[bytes]:
    data = {"info": {"mini_version": "x"}, "messages": messages, "trajectory_format": version}
    return json.dumps(data, indent=1).encode().splitlines(keepends=True)


def message_lines(lines: list[bytes]) -> list[int]:
    """The line each message of ``document(...)`` starts on."""
    return [n for n, line in enumerate(lines, 1) if re.match(rb"  [^ }\]\"]", line)]


def test_format_1_0_replies_hold_their_command_in_a_bash_block() -> None:
    def reply(text: object) -> dict[str, object]:
        return {"role": "assistant", "content": text}

    def observation(text: str) -> dict[str, object]:
        return {"role": "user", "content": text}

    messages: list[object] = [
        {"role": "system", "content": "```bash\nexample\n```"},
        observation("the task"),
        reply("THOUGHT: run it\n```bash\nmake test\n```"),
        observation("<returncode>2</returncode>"),
        reply("```bash\nls\n```\n```bash\npwd\n```"),  # two blocks: a format error, no call
        observation("Please always provide EXACTLY ONE action in triple backticks."),
        reply("no block at all"),
        observation("Please always provide EXACTLY ONE action in triple backticks."),
        reply([{"type": "text", "text": "```bash\nmake test\n```"}]),
        observation("<returncode>2</returncode>"),
        reply("```bash\n  make test  \n```"),
        observation("<returncode>2</returncode>"),
    ]
    lines = document(messages, "mini-swe-agent-1")
    starts = message_lines(lines)
    outcomes = run_reader("mini-swe-agent", lines, file="run.traj.json")
    assert fired(outcomes) == [(starts[11], "bash", 3, "gentle")]
    assert diagnostics(outcomes, "note") == [
        (starts[4], NO_ACTION.format("2 command blocks")),
        (starts[6], NO_ACTION.format("0 command blocks")),
    ]
    assert (summary(outcomes).tally.calls, summary(outcomes).tally.wasted) == (3, 2)
    items = list(READERS["mini-swe-agent"].read(lines, "run.traj.json"))
    calls = [i for i in items if isinstance(i, Located)]
    assert calls[0].event == PromptSubmitted("run")
    assert calls[1].event == ToolCallFinished(
        "run", "bash", {"command": "make test"}, result="<returncode>2</returncode>"
    )


def test_responses_api_replies_and_tool_calls_without_extra() -> None:
    ls = json.dumps({"command": "ls"})
    messages: list[object] = [
        {"role": "user", "content": "task"},
        {
            "object": "response",
            "output": [{"type": "function_call", "call_id": "fc_1", "name": "bash"}],
            "extra": {"actions": [{"command": "ls", "tool_call_id": "fc_1"}]},
        },
        {"type": "function_call_output", "call_id": "fc_1", "output": "a b"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "t2", "function": {"name": "bash", "arguments": ls}},
                {"id": "t3", "function": {"name": "bash", "arguments": "{bad"}},
                {"id": "t4", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "t5", "function": "bash"},
                "t6",
            ],
        },
        {"role": "tool", "tool_call_id": "t2", "content": "a b", "extra": {"exception_info": "x"}},
        {"role": "tool", "tool_call_id": "t2", "content": "a b"},  # repeated: no news
        {"role": "tool", "tool_call_id": "t9", "content": "?"},
        {"role": "tool", "content": "no id"},
    ]
    lines = document(messages)
    starts = message_lines(lines)
    outcomes = run_reader("mini-swe-agent", lines)
    assert (summary(outcomes).tally.calls, summary(outcomes).tally.wasted) == (2, 1)
    assert diagnostics(outcomes, "note") == [
        (starts[6], "a tool result for the call 't9' that is not in this file")
    ]
    assert diagnostics(outcomes) == [(starts[7], "a tool result without its call's id")]
    items = READERS["mini-swe-agent"].read(lines, "t")
    calls = [i.event for i in items if isinstance(i, Located)]
    assert [c.failed for c in calls if isinstance(c, ToolCallFinished)] == [False, True]


def test_calls_left_open_odd_messages_and_prompts() -> None:
    messages: list[object] = [
        3,
        {"role": "user", "content": "task", "extra": "not an object"},
        {"role": "assistant", "extra": {"actions": [{"command": "ls"}, {"cmd": "x"}, 4]}},
        {"role": "user", "content": "ls output"},
        # its second action had no command; a new reply leaves nothing open to drop
        {"role": "assistant", "extra": {"actions": []}},
        {"role": "assistant", "extra": {"actions": [{"command": "ls"}]}},
        {"role": "assistant", "extra": {"actions": [{"command": "ls", "tool_call_id": "k"}]}},
        {"role": "user", "content": "new", "extra": {"interrupt_type": "UserNewTask"}},
        {"role": "assistant", "extra": {"actions": [{"command": "ls"}]}},
        {"role": "user", "content": "ls output", "extra": {"returncode": 0, "exception_info": ""}},
        {"role": "user", "content": "a message nobody asked for"},
        {"role": "user", "content": "odd", "extra": {"interrupt_type": ["not", "a", "name"]}},
        {"role": "assistant", "extra": {"actions": [{"command": "ls"}]}},
        {"role": "user", "content": "ls output"},
        {"role": "assistant", "extra": {"actions": [{"command": "sleep 1"}]}},
        {"role": "exit", "content": "LimitsExceeded"},
        {"role": "assistant", "extra": {"actions": [{"command": "tail -f log"}]}},
        {"role": "mystery"},
    ]
    lines = document(messages)
    starts = message_lines(lines)
    outcomes = run_reader("mini-swe-agent", lines)
    assert diagnostics(outcomes) == [
        (starts[0], "a message that is not an object"),
        (starts[2], "an action without a command"),
        (starts[2], "an action without a command"),
    ]
    assert diagnostics(outcomes, "note") == [(starts[4], NO_ACTION.format("none"))]
    # ls at starts[5] is dropped by the reply after it, the keyed ls by the new task; the
    # last command is open at the end.
    assert unfinished(outcomes) == [(starts[5], "bash"), (starts[6], "bash"), (starts[16], "bash")]
    # ls, (new task) ls, ls, sleep at the exit: the prompt ends the first run.
    total = summary(outcomes).tally
    assert (total.calls, total.wasted, total.longest_run) == (4, 1, 2)


def test_actions_in_text_takes_the_first_pattern_that_finds_any() -> None:
    assert actions_in_text("```mswea_bash_command\nls\n```\n```bash\npwd\n```") == ["ls"]
    assert actions_in_text("<mswea_bash_command> ls -a </mswea_bash_command>") == ["ls -a"]
    assert actions_in_text("```bash\nx\n```") == ["x"]
    assert actions_in_text("```python\nx\n```") == []


def test_sniffing() -> None:
    reader = READERS["mini-swe-agent"]
    for name in ("toolcalls.traj.json", "github_issue.traj.json"):
        head = (HERE / name).read_bytes()[:4096]
        assert reader.sniff(head)
        assert sniff_head(head) == "mini-swe-agent"
    assert reader.sniff(b'{"trajectory_format": "mini-swe-agent-1", "messages": []}')
    assert not reader.sniff(b'{"messages": []}')
    assert not reader.sniff(b'[{"role": "user", "content": "hi"}]')
    assert not reader.sniff(b"mswea_bash_command")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (b'{"info": {}, "messages": 3}', 1, "no 'messages' array in the document"),
        (b'{"messages": [\n{"role": "user"},\n{"role"', 3, "invalid JSON"),
        (b'[{"role": "user"}]\ntrailing', 2, "text after the end of the document"),
        (b"\xff", 1, "not UTF-8"),
        (b"", 0, ""),
    ],
)
def test_broken_documents_give_a_diagnostic_where_they_break(
    text: bytes, where: int, message: str
) -> None:
    outcomes = run_reader("mini-swe-agent", text.splitlines(keepends=True))
    found = diagnostics(outcomes)
    assert [line for line, _ in found] == ([where] if message else [])
    assert all(message in said for _, said in found)


def test_a_file_named_only_for_its_extension_keeps_its_name() -> None:
    outcomes = run_reader("mini-swe-agent", [b"[]"], file=".traj.json")
    assert [s.session for s in summary(outcomes).sessions] == [".traj"]


def _usage(prompt: object, completion: object) -> dict[str, object]:
    # As litellm's ModelResponse.model_dump() gives it (format 1.1 keeps it whole).
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": 0}
    return {"id": "r", "choices": [], "usage": usage}


def test_a_replys_tokens_go_with_its_first_call() -> None:
    ls, keyed = {"command": "ls"}, {"command": "ls", "tool_call_id": "k"}
    messages: list[object] = [
        {"role": "user", "content": "task"},
        # Two actions: the reply's 1200 prompt and 40 completion tokens go with the first.
        {"role": "assistant", "extra": {"actions": [ls, ls], "response": _usage(1200, 40)}},
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "extra": {"actions": [keyed], "response": _usage(1300, "x")}},
        {"role": "tool", "tool_call_id": "k", "content": "three"},
        # A reply whose command is in its tool calls, with the response beside it.
        {
            "role": "assistant",
            "tool_calls": [{"id": "t", "function": {"arguments": '{"command": "ls"}'}}],
            "extra": {"response": _usage(1400, 42)},
        },
        {"role": "tool", "tool_call_id": "t", "content": "four"},
        {"role": "assistant", "extra": {"actions": [ls], "response": {"usage": "none"}}},
        {"role": "user", "content": "five"},
        {"role": "assistant", "extra": {"actions": [ls], "response": "none"}},
        {"role": "user", "content": "six"},
        {"role": "assistant", "extra": {"actions": [ls], "response": _usage(1500, 44)}},
        {"role": "exit", "content": "Submitted"},
    ]
    items = READERS["mini-swe-agent"].read(document(messages), "t")
    located = [i for i in items if isinstance(i, Located)]
    calls = [(i.tokens, i.input_tokens) for i in located if isinstance(i.event, ToolCallFinished)]
    assert calls == [
        (40, 1200),
        (None, None),
        (None, 1300),
        (42, 1400),
        (None, None),
        (None, None),
        (44, 1500),  # counted at the exit
    ]
