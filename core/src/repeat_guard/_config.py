"""Guard configuration: the frozen value, the parser for mappings and the loader for text.

Misconfiguration fails loud. ``parse_config`` returns a ``Failure`` naming the key and the
value for input a user wrote (a YAML, TOML or JSON mapping); ``load_config`` does the same for
the text of a TOML or JSON file, naming the file, and is the one loader every adapter uses.
Constructing ``GuardConfig`` directly with bad values is a programming error and raises
``ValueError``.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from returns.result import Failure, Result, Success

__all__ = ["ConfigError", "ConfigFormat", "GuardConfig", "load_config", "parse_config"]

ConfigFormat = Literal["json", "toml"]

DEFAULT_THRESHOLDS = (3, 5, 8)
DEFAULT_PREVIEW_CHARS = 500


@dataclass(frozen=True, slots=True)
class ConfigError:
    """Why a configuration was rejected: the offending key, its value, and a message.

    ``source`` names the file (or other origin) the configuration came from, when known;
    ``key`` is ``"<config>"`` for a problem with the whole document (syntax, encoding, shape).
    """

    key: str
    value: object
    message: str
    source: str | None = None

    def __str__(self) -> str:
        return self.message if self.source is None else f"{self.source}: {self.message}"


@dataclass(frozen=True, slots=True)
class GuardConfig:
    """What the guard tracks and when it speaks.

    ``thresholds``: consecutive counts that produce a reminder, kept sorted ascending.
    ``include``: tool-name patterns to track (empty tracks every tool). ``exclude``: patterns
    whose calls are transparent to the chain. In a pattern ``*`` matches any run of characters
    and every other character is literal. ``arguments_preview_chars``: how many characters of
    the canonical arguments the detailed reminder quotes.
    """

    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    arguments_preview_chars: int = DEFAULT_PREVIEW_CHARS
    _include_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _exclude_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        error = _first_error(
            {
                "thresholds": self.thresholds,
                "include": self.include,
                "exclude": self.exclude,
                "arguments_preview_chars": self.arguments_preview_chars,
            }
        )
        if error is not None:
            raise ValueError(error.message)
        object.__setattr__(self, "thresholds", tuple(sorted(self.thresholds)))
        object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "exclude", tuple(self.exclude))
        object.__setattr__(self, "_include_re", compile_patterns(self.include))
        object.__setattr__(self, "_exclude_re", compile_patterns(self.exclude))

    def tracks(self, tool: str) -> bool:
        """Return whether calls to ``tool`` count toward (or reset) a chain."""
        if self._include_re is not None and self._include_re.fullmatch(tool) is None:
            return False
        return self._exclude_re is None or self._exclude_re.fullmatch(tool) is None

    def to_mapping(self) -> dict[str, object]:
        """Return the configuration in the design note's keys, ready for JSON or TOML."""
        return {
            "thresholds": list(self.thresholds),
            "include": list(self.include),
            "exclude": list(self.exclude),
            "argumentsPreviewChars": self.arguments_preview_chars,
        }


def compile_patterns(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """Return one regular expression matching any of ``patterns``, or ``None`` for none."""
    if not patterns:
        return None
    alternatives = ("".join(".*" if c == "*" else re.escape(c) for c in p) for p in patterns)
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.DOTALL)


_KEYS = {
    "thresholds": "thresholds",
    "include": "include",
    "exclude": "exclude",
    "argumentsPreviewChars": "arguments_preview_chars",
    "arguments_preview_chars": "arguments_preview_chars",
}


def parse_config(raw: Mapping[str, object]) -> Result[GuardConfig, ConfigError]:
    """Return the ``GuardConfig`` that ``raw`` describes, or the first reason it is invalid.

    Accepts the keys ``thresholds``, ``include``, ``exclude`` and ``argumentsPreviewChars``
    (or ``arguments_preview_chars``); missing keys take their defaults, unknown keys fail.
    """
    candidate: object = raw  # callers pass whatever a YAML or TOML loader gave them
    if not isinstance(candidate, Mapping):
        message = f"config must be a mapping, got {candidate!r}"
        return Failure(ConfigError("<config>", candidate, message))
    fields: dict[str, object] = {}
    for key, value in raw.items():
        name = _KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            known = ", ".join(k for k in _KEYS if k != "arguments_preview_chars")
            return Failure(
                ConfigError(str(key), value, f"unknown config key {key!r} (known: {known})")
            )
        if name in fields:
            return Failure(ConfigError(str(key), value, f"config key {key!r} given twice"))
        fields[name] = value
    error = _first_error(fields)
    if error is not None:
        return Failure(error)
    return Success(GuardConfig(**fields))  # type: ignore[arg-type]  # each value checked above


def load_config(
    data: str | bytes,
    *,
    source: str | None = None,
    fmt: ConfigFormat | None = None,
    overrides: Mapping[str, object] | None = None,
) -> Result[GuardConfig, ConfigError]:
    """Return the ``GuardConfig`` in the TOML or JSON text ``data``, or why it is invalid.

    ``fmt`` names the syntax; when it is omitted, a ``source`` ending in ``.toml`` or ``.json``
    decides, and otherwise the text is JSON when its first non-blank character is ``{`` and
    TOML if not. ``overrides`` (keys as in ``parse_config``) replace the document's keys,
    aliases included. Every ``ConfigError`` carries ``source``. Never raises.
    """
    return (
        _document(data, source, fmt)
        .bind(lambda document: parse_config(_overlaid(document, overrides or {})))
        .alt(lambda error: ConfigError(error.key, error.value, error.message, source))
    )


def config_format(source: str | None, text: str) -> ConfigFormat:
    """Return the syntax of ``text``: by ``source``'s suffix, else ``{`` means JSON."""
    if source is not None and source.endswith((".toml", ".json")):
        return "toml" if source.endswith(".toml") else "json"
    return "json" if text.lstrip().startswith("{") else "toml"


def _document(
    data: str | bytes, source: str | None, fmt: ConfigFormat | None
) -> Result[Mapping[str, object], ConfigError]:
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            return Failure(ConfigError("<config>", None, f"config is not UTF-8: {error}"))
    syntax = fmt or config_format(source, data)
    try:
        loaded: object = tomllib.loads(data) if syntax == "toml" else json.loads(data)
    except ValueError as error:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        name = "TOML" if syntax == "toml" else "JSON"
        return Failure(ConfigError("<config>", None, f"config is not valid {name}: {error}"))
    except RecursionError:
        return Failure(ConfigError("<config>", None, "config is nested too deeply"))
    if not isinstance(loaded, dict):
        return Failure(ConfigError("<config>", loaded, f"config must be a mapping, got {loaded!r}"))
    return Success(loaded)


def _overlaid(document: Mapping[str, object], overrides: Mapping[str, object]) -> dict[str, object]:
    merged = dict(document)
    for key, value in overrides.items():
        name = _KEYS.get(key, key)
        for alias in [k for k in merged if _KEYS.get(k, k) == name]:
            del merged[alias]
        merged[key] = value
    return merged


def _first_error(fields: Mapping[str, object]) -> ConfigError | None:
    checks = (
        ("thresholds", _thresholds_error),
        ("include", _patterns_error),
        ("exclude", _patterns_error),
        ("arguments_preview_chars", _preview_error),
    )
    for name, check in checks:
        if name in fields:
            message = check(name, fields[name])
            if message is not None:
                return ConfigError(_public_key(name), fields[name], message)
    return None


def _public_key(name: str) -> str:
    return "argumentsPreviewChars" if name == "arguments_preview_chars" else name


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _thresholds_error(name: str, value: object) -> str | None:
    if not isinstance(value, list | tuple):
        return f"thresholds must be a list of integers, got {value!r}"
    if not value:
        return "thresholds must not be empty"
    for item in value:
        if not _is_integer(item):
            return f"thresholds must be integers, got {item!r} in {list(value)!r}"
        if item < 2:
            return f"thresholds must be 2 or more, got {item!r} in {list(value)!r}"
    duplicates = sorted({item for item in value if value.count(item) > 1})
    if duplicates:
        return f"thresholds must not repeat, got {duplicates[0]!r} twice in {list(value)!r}"
    return None


def _patterns_error(name: str, value: object) -> str | None:
    if not isinstance(value, list | tuple):
        return f"{name} must be a list of tool-name patterns, got {value!r}"
    for item in value:
        if not isinstance(item, str):
            return f"{name} entries must be strings, got {item!r} in {list(value)!r}"
    return None


def _preview_error(name: str, value: object) -> str | None:
    if not _is_integer(value):
        return f"argumentsPreviewChars must be an integer, got {value!r}"
    if value < 1:  # type: ignore[operator]  # an int, checked just above
        return f"argumentsPreviewChars must be 1 or more, got {value!r}"
    return None
