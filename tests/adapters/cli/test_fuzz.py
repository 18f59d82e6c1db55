"""``repeat-guard serve`` fuzzed: any lines, in any order, each answered by exactly one line of
the documented shape, and the sidecar never stops.

Each case is a stream of lines: events of every type with each field sometimes missing or of
another JSON type, well-formed calls repeated in a drawn order (so reminders and refusals
fire), arbitrary bytes, and valid lines cut short or with a byte flipped, under the default
configuration and one with every opt-in policy. ``make test`` draws 300 streams, ``make fuzz``
a tenth of ``FUZZ_TRANSCRIPTS`` (5,000).
"""

from __future__ import annotations

import io
import json
import os

from hypothesis import event, given
from hypothesis import strategies as st

from repeat_guard import GuardConfig, load_config_or_error
from repeat_guard_cli import serve

from ..transcripts.fuzzing import cut_and_flipped, field, fuzz_settings

EXAMPLES = int(os.environ.get("REPEAT_GUARD_FUZZ", "3000")) // 10

_EVENT = st.fixed_dictionaries(
    {
        "type": field(
            st.sampled_from(["tool_call", "tool_result", "prompt", "dispose", "admit", "attempt"])
        )
    },
    optional={
        "agent": field(st.sampled_from(["a", "b"])),
        "tool": field(st.sampled_from(["grep", "poll"])),
        "arguments": field(st.fixed_dictionaries({"p": st.sampled_from(["x", "y"])})),
        "denied": field(st.booleans()),
        "result": field(st.sampled_from(["same", "other"])),
    },
)
_CALL = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["tool_call", "tool_call", "admit", "attempt", "tool_result"]),
        "agent": st.sampled_from(["a", "b"]),
        "tool": st.sampled_from(["grep", "poll"]),
        "arguments": st.fixed_dictionaries({"p": st.sampled_from(["x", "y"])}),
    },
    optional={"result": st.sampled_from(["same", "other"])},
)


_LINE = st.one_of(
    _CALL.map(json.dumps).map(str.encode),
    _CALL.map(json.dumps).map(str.encode),
    _EVENT.map(json.dumps).map(str.encode),
    cut_and_flipped(_EVENT).map(lambda data: data.replace(b"\n", b" ")),
    st.binary(max_size=40).map(lambda data: data.replace(b"\n", b" ")),
)
# A stream repeats its lines: a few drawn, then sent in a drawn order.
_STREAM = st.lists(_LINE, min_size=1, max_size=3).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), min_size=len(pool), max_size=14)
)
_POLICIES = load_config_or_error(
    'thresholds = [2, 3]\ndenyAt = 3\ncyclePeriod = 2\nbudgets = {"grep" = 4}\n'
    'progress = "result"\n'
)
assert isinstance(_POLICIES, GuardConfig)
_REMINDER_KEYS = {"agent", "tool", "count", "form", "summary", "text"}


@fuzz_settings(EXAMPLES)
@given(st.sampled_from([GuardConfig(), _POLICIES]), _STREAM, st.booleans())
def test_any_stream_gets_exactly_one_answer_of_the_documented_shape_a_line(
    config: GuardConfig, lines: list[bytes], last_line_ended: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if last_line_ended else b"")
    output = io.BytesIO()
    assert serve(config, io.BytesIO(data), output) == 0
    answers = [json.loads(line) for line in output.getvalue().splitlines()]
    # An empty last line with no newline after it is no line at all.
    assert len(answers) == len(lines) - (not last_line_ended and lines[-1] == b"")
    for number, answer in enumerate(answers, 1):
        if "error" in answer:
            assert set(answer) == {"error"}
            assert answer["error"].startswith(f"line {number}: ")
        elif "admit" in answer:
            event("admit answered")
            counted = "reminders" in answer  # an attempt's answer
            assert ("reason" in answer) is (answer["admit"] is False)
            assert set(answer) - {"reason", "reminders"} == {"admit"}
            if counted:
                assert all(set(r) == _REMINDER_KEYS for r in answer["reminders"])
        else:
            assert set(answer) == {"reminders"}
            if answer["reminders"]:
                event("reminded")
            assert all(set(r) == _REMINDER_KEYS for r in answer["reminders"])
