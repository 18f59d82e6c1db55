"""What hosts' shell tools write into a result's text (``repeat_guard.shell_output``)."""

from __future__ import annotations

import pytest

from repeat_guard.shell_output import (
    copilot_shell_exit,
    exit_failed,
    output_failed,
    qwen_responses_without_process_ids,
    qwen_without_process_ids,
    responses_without_process_ids,
    without_process_ids,
)


@pytest.mark.parametrize(
    ("text", "read"),
    [
        # As Copilot CLI 1.0.102 ends its bash tool's result (shell ids count up from 0).
        (
            "pre-commit: ruff failed\n<shellId: 4 completed with exit code 1>",
            ("pre-commit: ruff failed\n<completed with exit code 1>", 1),
        ),
        (
            "a.txt\n<shellId: 0 completed with exit code 0>",
            ("a.txt\n<completed with exit code 0>", 0),
        ),
        ("x<shellId: 12 completed with exit code -2>\n", ("x<completed with exit code -2>", -2)),
        # The ending mid-text is the command's own output; other texts are not Copilot's shell.
        ("<shellId: 1 completed with exit code 1> then more", None),
        ("no shell", None),
        ("<shellId: x completed with exit code 1>", None),
    ],
)
def test_copilot_shell_endings(text: str, read: tuple[str, int] | None) -> None:
    assert copilot_shell_exit(text) == read


def test_two_runs_of_the_same_failing_command_read_the_same() -> None:
    first = copilot_shell_exit("boom\n<shellId: 1 completed with exit code 3>")
    second = copilot_shell_exit("boom\n<shellId: 7 completed with exit code 3>")
    assert first == second == ("boom\n<completed with exit code 3>", 3)


# As Gemini CLI 0.61.0 ends a run_shell_command output (the ids are new on every run).
GEMINI_RUN = "Output: step 3\nExit Code: 2\nBackground PIDs: 3841, 3850\nProcess Group PGID: 3839\n"


def test_gemini_process_ids_are_left_out_and_the_rest_stays() -> None:
    again = GEMINI_RUN.replace("3841", "4100").replace("3839", "4098")
    assert without_process_ids(GEMINI_RUN) == "Output: step 3\nExit Code: 2\n"
    assert without_process_ids(GEMINI_RUN) == without_process_ids(again)
    moved = "Command moved to background (PID: 3841)."
    assert without_process_ids(moved) == "Command moved to background (PID: <n>)."
    # A changed output is still a change.
    assert without_process_ids(GEMINI_RUN) != without_process_ids(
        GEMINI_RUN.replace("3\n", "4\n", 1)
    )


def test_a_response_has_each_of_its_strings_read_and_other_shapes_kept() -> None:
    response = {"output": GEMINI_RUN, "count": 3}
    assert responses_without_process_ids(response) == {
        "output": "Output: step 3\nExit Code: 2\n",
        "count": 3,
    }
    assert responses_without_process_ids([GEMINI_RUN]) == [GEMINI_RUN]


@pytest.mark.parametrize(
    ("code", "failed"),
    [(1, True), (-2, True), (127, True), (0, False), (-1, False), (True, False), ("1", False)],
)
def test_which_exit_statuses_are_failures(code: object, failed: bool) -> None:
    assert exit_failed(code) is failed


@pytest.mark.parametrize(
    ("text", "failed"),
    [
        (GEMINI_RUN, True),
        ("Output: ok\nExit Code: 0\n", False),
        ("Output: ok\n", False),
        # Only a line of its own: text that mentions an exit code is not one.
        ("Output: said Exit Code: 3 once\n", False),
    ],
)
def test_a_shell_output_says_it_failed_by_an_exit_code_line(text: str, failed: bool) -> None:
    assert output_failed(text) is failed


# As Qwen Code 0.24.4 answers a run_shell_command sent to the background (id, pid and file are
# new on every call), and ends a run with Gemini CLI's PGID line.
QWEN_BACKGROUND = (
    "Background shell started.\nid: bg_0a1b2c3d\npid: 52114\n"
    "output file: /tmp/qwen/shell-bg_0a1b2c3d.output\nProcess Group PGID: 52110\n"
)


def test_qwen_background_ids_are_left_out_and_the_rest_stays() -> None:
    again = QWEN_BACKGROUND.replace("0a1b2c3d", "ffee0011").replace("5211", "6022")
    kept = "Background shell started.\nid: bg_<id>\noutput file: /tmp/qwen/shell-bg_<id>.output\n"
    assert qwen_without_process_ids(QWEN_BACKGROUND) == kept
    assert qwen_without_process_ids(again) == kept
    # Gemini's rules alone keep them; a word holding the id, or another count of digits, stays.
    assert "pid: 52114" in without_process_ids(QWEN_BACKGROUND)
    assert qwen_without_process_ids("xbg_0a1b2c3d bg_0a1b2c3 pid: 7 left") == (
        "xbg_0a1b2c3d bg_0a1b2c3 pid: 7 left"
    )


def test_a_qwen_response_has_each_of_its_strings_read_and_other_shapes_kept() -> None:
    response = {"output": QWEN_BACKGROUND, "exit": 0}
    assert qwen_responses_without_process_ids(response) == {
        "output": qwen_without_process_ids(QWEN_BACKGROUND),
        "exit": 0,
    }
    assert qwen_responses_without_process_ids(QWEN_BACKGROUND) == QWEN_BACKGROUND
