"""Loading the guard's configuration from a file and command-line flags.

Everything goes through ``repeat_guard.parse_config``: this module only reads the file (JSON
or TOML), lays the flags over its keys and leaves every judgement to the core, so the command
and the library reject exactly the same configurations with exactly the same messages.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from collections.abc import Mapping

from repeat_guard import GuardConfig, parse_config

from ._errors import UsageError

__all__ = ["CONFIG_HELP", "add_override_arguments", "build_config", "read_config_file"]

CONFIG_HELP = """\
configuration keys (a JSON object or a TOML table at the top level of the file):
  thresholds             consecutive identical calls that produce a reminder (default 3,5,8);
                         integers of 2 or more, no repeats; the first one gets the gentle form
  include                tool-name patterns to track; empty tracks every tool (default [])
  exclude                tool-name patterns transparent to the chain (default [])
  argumentsPreviewChars  characters of arguments the detailed reminder quotes (default 500)
patterns match the whole tool name; "*" matches any run of characters.
flags override the file's keys: --thresholds, --include and --exclude (each repeatable),
--preview-chars.
"""

_PREVIEW_KEYS = ("argumentsPreviewChars", "arguments_preview_chars")


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


def read_config_file(path: str) -> dict[str, object]:
    """Return the mapping in the JSON or TOML file at ``path``.

    A name ending in ``.toml`` is TOML, one ending in ``.json`` is JSON; any other name is JSON
    when its first non-blank character is ``{`` and TOML otherwise. Raises ``UsageError`` when
    the file cannot be read or parsed, or does not hold a mapping.
    """
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError as error:
        raise UsageError(f"cannot read config file {path}: {error.strerror}") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"config file {path} is not UTF-8: {error}") from error
    if _is_toml(path, text):
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise UsageError(f"config file {path} is not valid TOML: {error}") from error
    try:
        loaded: object = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"config file {path} is not valid JSON: {error}") from error
    if not isinstance(loaded, dict):
        raise UsageError(f"config file {path} must hold a JSON object, got {loaded!r}")
    return loaded


def _is_toml(path: str, text: str) -> bool:
    if path.endswith(".toml"):
        return True
    if path.endswith(".json"):
        return False
    return not text.lstrip().startswith("{")


def build_config(path: str | None, args: argparse.Namespace) -> GuardConfig:
    """Return the configuration the file at ``path`` (if any) and the override flags describe.

    Raises ``UsageError`` carrying the file's problem or ``parse_config``'s message.
    """
    raw: dict[str, object] = {} if path is None else read_config_file(path)
    raw.update(_overrides(args))
    if args.preview_chars is not None:
        for key in _PREVIEW_KEYS:
            raw.pop(key, None)
        raw["argumentsPreviewChars"] = _integer_or_text(args.preview_chars)
    result = parse_config(raw)
    config = result.value_or(None)
    if config is None:
        where = "" if path is None else f" ({path})"
        raise UsageError(f"invalid configuration{where}: {result.failure().message}")
    return config


def _overrides(args: argparse.Namespace) -> Mapping[str, object]:
    overrides: dict[str, object] = {}
    if args.thresholds is not None:
        items = [item.strip() for item in args.thresholds.split(",")]
        overrides["thresholds"] = [_integer_or_text(item) for item in items if item]
    if args.include is not None:
        overrides["include"] = list(args.include)
    if args.exclude is not None:
        overrides["exclude"] = list(args.exclude)
    return overrides


def _integer_or_text(text: str) -> object:
    # Leave anything that is not an integer as text so parse_config names it in its message.
    try:
        return int(text)
    except ValueError:
        return text
