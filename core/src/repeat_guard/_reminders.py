"""The reminders the guard produces and their model-facing texts.

Escalation: the first configured threshold gets the gentle form, which quotes nothing; every
later threshold gets the detailed form, which names the tool, the count and the canonical
arguments (cut to ``arguments_preview_chars``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._canonical import is_digest_key

__all__ = [
    "FORMS",
    "SOURCE",
    "Form",
    "Reminder",
    "preview_arguments",
    "render_budget",
    "render_cycle",
    "render_reminder",
    "render_retry",
]

Form = Literal["gentle", "detailed", "cycle", "budget", "retry"]
FORMS: tuple[Form, ...] = ("gentle", "detailed", "cycle", "budget", "retry")

PLUGIN_NAME = "repeat-tool-guard"
SOURCE: dict[str, str] = {"kind": "plugin", "plugin": PLUGIN_NAME}

# Every reminder's text is its body inside this envelope. Hosts that wrap injected context in
# their own <system-reminder> block (Claude Code's hooks do) take ``Reminder.body`` instead.
_OPEN = "<system-reminder>\n"
_CLOSE = "\n</system-reminder>"
# What a reminder quotes (tool names, arguments) must not end its envelope early: a closing tag
# inside them gets a backslash before its slash, which in JSON text still means the same "/".
_CLOSING_TAG = "</system-reminder"
_INERT_TAG = "<\\/system-reminder"


def _inert(quoted: str) -> str:
    """``quoted`` with any closing tag of the envelope made inert (see ``_INERT_TAG``)."""
    return quoted.replace(_CLOSING_TAG, _INERT_TAG)


@dataclass(frozen=True, slots=True)
class Reminder:
    """An advisory message for ``agent``'s next model request.

    ``count`` is the consecutive count that reached a threshold; ``form`` is ``"gentle"`` at
    the first threshold and ``"detailed"`` at later ones; ``arguments`` is the full canonical
    argument text of the repeated call. The opt-in policies add three forms: ``"cycle"``
    (``count`` repetitions of a cycle of calls that ends with this one), ``"budget"`` (``count``
    calls to a budgeted tool since the last prompt) and ``"retry"`` (the same call failing the
    same way ``count`` times, other calls between).
    """

    agent: str
    tool: str
    count: int
    form: Form
    text: str
    arguments: str

    @property
    def summary(self) -> str:
        """``"<tool> × <count>"``: a one-line label for logs and UIs."""
        return f"{self.tool} × {self.count}"

    @property
    def body(self) -> str:
        """The text without its ``<system-reminder>`` envelope, for hosts that add their own."""
        return self.text.removeprefix(_OPEN).removesuffix(_CLOSE)

    @property
    def source(self) -> dict[str, str]:
        """The provenance label adapters stamp on the injected message (a fresh dict)."""
        return dict(SOURCE)


GENTLE_TEXT = (
    f"{_OPEN}"
    "You are repeating the exact same tool call. Stop and analyse the result you already "
    f"have, then try something different.{_CLOSE}"
)


def preview_arguments(arguments: str, limit: int) -> str:
    """Return ``arguments`` cut to ``limit`` characters, marked with what was left out."""
    if len(arguments) <= limit:
        return arguments
    return f"{arguments[:limit]}… (+{len(arguments) - limit} more chars)"


def render_reminder(
    agent: str, tool: str, arguments: str, count: int, form: Form, preview_chars: int
) -> Reminder:
    """Return the reminder for a chain of ``count`` identical calls in the given form."""
    if form == "gentle":
        text = GENTLE_TEXT
    else:
        text = (
            f"{_OPEN}"
            f"You have called the tool `{_inert(tool)}` {count} times in a row with identical "
            f"arguments: {_inert(preview_arguments(arguments, preview_chars))}\n"
            "These repeated calls made no progress. Do not call this tool with these exact "
            "arguments again: change your approach, or, if you have already gathered enough "
            f"evidence, stop calling tools and finish your answer.{_CLOSE}"
        )
    return Reminder(agent, tool, count, form, text, arguments)


def render_cycle(
    agent: str,
    arguments: str,
    count: int,
    block: tuple[tuple[str, str], ...],
    preview_chars: int,
) -> Reminder:
    """Return the ``cycle`` reminder: ``block``'s (tool, argument key) calls, ``count`` times.

    The last call of the block is the one just made, whose full canonical ``arguments`` the
    reminder carries and shows, cut to ``preview_chars``. The others are shown by their
    argument key, which is their canonical text when short; a longer text was kept only as a
    digest, which would mean nothing to the model, so the text says they were long instead.
    """
    steps = _cycle_steps(arguments, block, preview_chars)
    text = (
        f"{_OPEN}"
        f"You have repeated the same cycle of {len(block)} tool calls {count} times: {steps}\n"
        "Going round this cycle again will not give a different result: change your approach, "
        "or, if you have already gathered enough evidence, stop calling tools and finish your "
        f"answer.{_CLOSE}"
    )
    return Reminder(agent, block[-1][0], count, "cycle", text, arguments)


_LONG = "(arguments too long to show, the same each time)"


def _cycle_steps(arguments: str, block: tuple[tuple[str, str], ...], preview_chars: int) -> str:
    """``block``'s calls as the model reads them, the last one with its full ``arguments``."""
    shown = [
        f"`{tool}` {_LONG}"
        if is_digest_key(key)
        else f"`{tool}` {preview_arguments(key, preview_chars)}"
        for tool, key in block[:-1]
    ]
    shown.append(f"`{block[-1][0]}` {preview_arguments(arguments, preview_chars)}")
    return _inert(" → ".join(shown))


# Since when a budget counts, as the model reads it, by ``budget_scope``.
BUDGET_SPANS = {"prompt": "since the user's last message", "session": "in this session"}


def render_retry(
    agent: str, tool: str, arguments: str, count: int, error: str, preview_chars: int
) -> Reminder:
    """Return the ``retry`` reminder: the call ``tool`` ``arguments`` has failed ``count`` times
    with the same error (``error``: the canonical text of this failure's result, cut to
    ``preview_chars``), other calls between."""
    shown = _inert(preview_arguments(arguments, preview_chars))
    failure = _inert(preview_arguments(error, preview_chars))
    text = (
        f"{_OPEN}"
        f"The tool call `{_inert(tool)}` with arguments {shown} has now failed {count} times "
        f"the same way, with other calls between: {failure}\n"
        "What you changed between the attempts did not change this failure. Find its cause "
        "before running it again, or try another way, or finish your answer and say what is "
        f"still failing.{_CLOSE}"
    )
    return Reminder(agent, tool, count, "retry", text, arguments)


def render_budget(
    agent: str, tool: str, arguments: str, count: int, pattern: str, span: str
) -> Reminder:
    """Return the ``budget`` reminder: ``count`` calls to tools matching ``pattern`` ``span``."""
    text = (
        f"{_OPEN}"
        f"You have made {count} calls to tools matching `{_inert(pattern)}` "
        f"(this one to `{_inert(tool)}`) "
        f"{span}, which is the budget for them. Do not call them again "
        f"for this task: finish with what you have.{_CLOSE}"
    )
    return Reminder(agent, tool, count, "budget", text, arguments)


def ordinal(number: int) -> str:
    """``number`` as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st."""
    suffix = "th" if number % 100 in (11, 12, 13) else _SUFFIXES.get(number % 10, "th")
    return f"{number}{suffix}"


_SUFFIXES = {1: "st", 2: "nd", 3: "rd"}


def deny_repeat_reason(tool: str, count: int) -> str:
    """The reason ``admit`` gives for a call that would be the ``count``-th identical one."""
    return (
        f"refused: this would be the {ordinal(count)} identical call to `{tool}` in a row, "
        "and the limit is reached. Change the arguments or the approach, or finish your answer."
    )


def deny_budget_reason(tool: str, pattern: str, limit: int, span: str) -> str:
    """The reason ``admit`` gives for a call past a name budget counted ``span``."""
    return (
        f"refused: the budget of {limit} calls to tools matching `{pattern}` {span} is "
        f"spent, so `{tool}` cannot run now. Finish with what you have."
    )


def deny_cycle_reason(
    arguments: str, calls: int, block: tuple[tuple[str, str], ...], preview_chars: int
) -> str:
    """The reason ``admit`` gives for a call that would make a cycle of ``block`` ``calls``
    calls long (``calls // len(block)`` times round)."""
    steps = _cycle_steps(arguments, block, preview_chars)
    return (
        f"refused: this call would take the same cycle of {len(block)} tool calls ({steps}) "
        f"to {calls} calls in a row, {calls // len(block)} times round, and the limit is "
        "reached. Change the approach, or finish your answer."
    )
