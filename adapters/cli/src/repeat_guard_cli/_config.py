"""Loading the guard's configuration from a file and command-line flags.

Everything goes through the one loader of a configuration file, ``load_config_file`` (the
hooks' safe reader, then the core's parser): this module only turns the flags into override
keys and words the answer, and leaves the syntax, the layering and every judgement to the
core, so the command, the hooks and the library reject exactly the same configurations with
exactly the same messages.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from repeat_guard import ConfigError, GuardConfig
from repeat_guard_hookcall.config_file import load_config_file

from ._errors import UsageError

__all__ = ["CONFIG_HELP", "add_override_arguments", "build_config"]

_DEFAULTS = GuardConfig()
_THRESHOLDS = ",".join(map(str, _DEFAULTS.thresholds))
_CYCLE_THRESHOLDS = ",".join(map(str, _DEFAULTS.cycle_thresholds))
_RETRY_THRESHOLDS = ",".join(map(str, _DEFAULTS.retry_thresholds))
_PREVIEW = _DEFAULTS.arguments_preview_chars

CONFIG_HELP = f"""\
configuration keys (a JSON object or a TOML table at the top level of the file):
  thresholds             consecutive identical calls that produce a reminder (default
                         {_THRESHOLDS}); integers of 2 or more, no repeats; the first one
                         gets the gentle form
  include                tool-name patterns to track; empty tracks every tool (default [])
  exclude                tool-name patterns transparent to the chain (default [])
  argumentsPreviewChars  characters of arguments the detailed reminder quotes (default {_PREVIEW})
opt-in, each off by default:
  cyclePeriod            the longest cycle of distinct calls to notice (A B A B ...): 2 to 8,
                         or 0 for off (default)
  cycleThresholds        repetitions of a cycle that remind (default {_CYCLE_THRESHOLDS})
  cycleDenyAt            refuse the call that would complete the Nth repetition of a cycle
                         (and the calls going on round it), where a harness asks before each
                         call; needs cyclePeriod
  progress               "result": an identical call whose result differs from the previous
                         one's starts its chain over (and its cycle), for polling tools (the
                         hooks need install --results); "off" (default). Results are compared
                         less line numbers in errors, times, ids, temp paths and colours, and a
                         failure is no progress over a failure of the same call
  errorsAreProgress      true: a failure whose text changed is progress too (default false)
  budgets                calls allowed per tool-name pattern since the last prompt (TOML:
                         budgets = {{"Bash" = 20}}): a reminder at the limit; a harness that asks
                         before each call (the hooks, serve's admit) refuses the calls past it
  budgetScope            "prompt" (default): budgets count since the last prompt; "session":
                         over the agent's whole session (a prompt still resets the chains)
  tools                  per tool-name pattern, settings for the matching tools: progress,
                         thresholds, denyAt (TOML: [tools] write_stdin = {{progress =
                         "result"}}); the first matching pattern decides
  preset                 a host's polling tools get progress = "result": claude-code, codex,
                         copilot, gemini, ...; "seed": none (the default, but a hook uses
                         its host's preset unless the file says otherwise)
  denyAt                 refuse the call that would be the Nth identical call in a row (an
                         integer of 2 or more), where a harness asks before each call
  retryWindow            how many of the agent's last tracked calls (2 to 64) to search for the
                         same call failing the same way, other calls between; 0 for off
                         (default); a failure reported after its call counts (hooks:
                         install --results)
  retryThresholds        such failures in the window that remind (default {_RETRY_THRESHOLDS})
patterns match the whole tool name; "*" matches any run of characters.
flags override the file's keys: --thresholds, --include and --exclude (each repeatable),
--preview-chars.
"""


def add_override_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags that override configuration keys to ``parser``."""
    group = parser.add_argument_group("configuration overrides")
    group.add_argument(
        "--thresholds", metavar="N,N,...", help="comma-separated thresholds, e.g. 3,5,8"
    )
    group.add_argument(
        "--include",
        action="append",
        metavar="PATTERN",
        help="track only tools matching PATTERN (repeatable; replaces the file's list)",
    )
    group.add_argument(
        "--exclude",
        action="append",
        metavar="PATTERN",
        help="make tools matching PATTERN transparent (repeatable; replaces the file's list)",
    )
    group.add_argument(
        "--preview-chars", metavar="N", help="characters of arguments quoted in reminders"
    )


def build_config(path: str | None, args: argparse.Namespace) -> GuardConfig:
    """Return the configuration the file at ``path`` (if any) and the override flags describe.

    The file and the flags go to the one loader, ``load_config_file``.
    Raises ``UsageError`` when the file cannot be read, or with the loader's message (which
    names the file and the key) when the configuration is invalid.
    """
    config = load_config_file(path, _overrides(args))
    if isinstance(config, str):
        raise UsageError(config)
    if isinstance(config, ConfigError):
        raise UsageError(f"invalid configuration: {config}")
    return config


def _overrides(args: argparse.Namespace) -> Mapping[str, object]:
    overrides: dict[str, object] = {}
    if args.thresholds is not None:
        items = [item.strip() for item in args.thresholds.split(",")]
        # An empty item among others (3,,5 or ,3) is a mistake parse_config names; only a
        # list of nothing but separators is the empty list.
        overrides["thresholds"] = [_integer_or_text(item) for item in items] if any(items) else []
    if args.include is not None:
        overrides["include"] = list(args.include)
    if args.exclude is not None:
        overrides["exclude"] = list(args.exclude)
    if args.preview_chars is not None:
        overrides["argumentsPreviewChars"] = _integer_or_text(args.preview_chars)
    return overrides


def _integer_or_text(text: str) -> object:
    # Leave anything that is not an integer written in ASCII digits (int() also takes 3_0 and
    # other scripts' digits) as text, so that parse_config names it in its message.
    digits = text.removeprefix("-")
    if not (digits.isascii() and digits.isdigit()):
        return text
    try:
        return int(text)
    except ValueError:  # beyond Python's limit on integer digits
        return text
