"""Guard configuration: the frozen value, the parser for mappings and the loader for text.

Misconfiguration fails loud. ``parse_config`` returns a ``Failure`` naming the key and the
value for input a user wrote (a YAML, TOML or JSON mapping); ``load_config`` does the same for
the text of a TOML or JSON file, naming the file, and is the one loader every adapter uses
(``load_config_or_error`` is the same without the ``Result``, for a hook process: see
``_codec``). Constructing ``GuardConfig`` directly with bad values is a programming error and
raises ``ValueError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple, TypeVar

from ._presets import HOST_PRESETS, NO_PRESET, PRESETS
from ._reminders import PLUGIN_NAME

if TYPE_CHECKING:
    from returns.result import Result

__all__ = [
    "ConfigError",
    "ConfigFormat",
    "GuardConfig",
    "GuardConfigError",
    "Policy",
    "ToolPolicy",
    "load_config",
    "parse_config",
    "parse_error_reason",
    "resolve_config",
]

ConfigFormat = Literal["json", "toml"]
Progress = Literal["off", "result"]
BudgetScope = Literal["prompt", "session"]

DEFAULT_THRESHOLDS = (3, 5, 8)
DEFAULT_PREVIEW_CHARS = 500
DEFAULT_CYCLE_THRESHOLDS = (3, 5)
DEFAULT_RETRY_THRESHOLDS = (3, 5)
MAX_RETRY_WINDOW = 64  # each tracked call scans the window: keep it small
MAX_CYCLE_PERIOD = 8  # each tracked call checks every period up to this: keep it small


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
class ToolPolicy:
    """What ``tools`` says for the tools matching one pattern: each ``None`` keeps the
    configuration's own setting."""

    thresholds: tuple[int, ...] | None = None
    progress: Progress | None = None
    deny_at: int | None = None

    def to_mapping(self) -> dict[str, object]:
        """The settings given, in the configuration's keys."""
        mapping: dict[str, object] = {}
        if self.thresholds is not None:
            mapping["thresholds"] = list(self.thresholds)
        if self.progress is not None:
            mapping["progress"] = self.progress
        if self.deny_at is not None:
            mapping["denyAt"] = self.deny_at
        return mapping


class Policy(NamedTuple):
    """The settings one tool's calls follow: the first ``tools`` pattern (then the preset's)
    matching it, over the configuration's own."""

    thresholds: tuple[int, ...]
    progress: Progress
    deny_at: int | None


_POLICY_CACHE_LIMIT = 4096  # tool names a config remembers its answer for


@dataclass(frozen=True, slots=True)
class GuardConfig:
    """What the guard tracks and when it speaks.

    ``thresholds``: consecutive counts that produce a reminder, kept sorted ascending.
    ``include``: tool-name patterns to track (empty tracks every tool). ``exclude``: patterns
    whose calls are transparent to the chain. In a pattern ``*`` matches any run of characters
    and every other character is literal. ``arguments_preview_chars``: how many characters of
    the canonical arguments the detailed reminder quotes.

    The opt-in policies, all off by default: ``cycle_period`` (0, or the longest cycle of
    distinct calls to notice, 2 to 8) with ``cycle_thresholds`` (how many repetitions of the
    cycle produce a reminder); ``progress`` (``"result"``: an identical call whose result
    differs starts its chain over); ``budgets`` (pairs of tool-name pattern and the number of
    calls allowed since the last prompt); ``deny_at`` (``admit`` refuses the call that would be
    the ``deny_at``-th identical call in a row). Under ``progress = "result"`` a failed result
    (``failed=True`` on the event) is never progress over an earlier failure of the same call;
    ``errors_are_progress`` has failures compared by their text like any other result.
    ``cycle_deny_at``: ``admit`` refuses the call that would complete a cycle's
    ``cycle_deny_at``-th repetition, or go on past it (needs ``cycle_period``).
    ``budget_scope``: ``"prompt"`` (budgets count since the agent's last prompt) or
    ``"session"`` (they count over the agent's whole life; a prompt still resets the chains).
    ``retry_window``: 0, or how many of the agent's last tracked calls (2 to 64) are searched
    for the same call failing the same way, with ``retry_thresholds`` (how many such failures
    in the window produce a ``retry`` reminder).
    """

    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    arguments_preview_chars: int = DEFAULT_PREVIEW_CHARS
    cycle_period: int = 0
    cycle_thresholds: tuple[int, ...] = DEFAULT_CYCLE_THRESHOLDS
    progress: Progress = "off"
    budgets: tuple[tuple[str, int], ...] = ()
    deny_at: int | None = None
    errors_are_progress: bool = False
    cycle_deny_at: int | None = None
    budget_scope: BudgetScope = "prompt"
    tools: tuple[tuple[str, ToolPolicy], ...] = ()
    preset: str = NO_PRESET
    retry_window: int = 0
    retry_thresholds: tuple[int, ...] = DEFAULT_RETRY_THRESHOLDS
    _include_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _exclude_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _budget_res: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    _policies: bool = field(init=False, repr=False, compare=False)
    _tool_res: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    _tool_cache: dict[str, Policy] = field(init=False, repr=False, compare=False)
    _reads: bool = field(init=False, repr=False, compare=False)
    # Every tool tracked and no policy on: reduce() reads this on every call, past the property.
    _plain: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        budgets: object = self.budgets
        if isinstance(budgets, Mapping):
            budgets = tuple(budgets.items())
        tools: object = self.tools
        if isinstance(tools, Mapping):
            tools = tuple(tools.items())
        error = _first_error(
            {
                "thresholds": self.thresholds,
                "include": self.include,
                "exclude": self.exclude,
                "arguments_preview_chars": self.arguments_preview_chars,
                "cycle_period": self.cycle_period,
                "cycle_thresholds": self.cycle_thresholds,
                "progress": self.progress,
                "budgets": budgets,
                "deny_at": self.deny_at,
                "errors_are_progress": self.errors_are_progress,
                "cycle_deny_at": self.cycle_deny_at,
                "budget_scope": self.budget_scope,
                "tools": tools,
                "preset": self.preset,
                "retry_window": self.retry_window,
                "retry_thresholds": self.retry_thresholds,
            }
        )
        if error is not None:
            raise ValueError(error.message)
        pairs = tuple((pattern, limit) for pattern, limit in budgets)  # type: ignore[attr-defined]  # checked
        set_ = object.__setattr__
        set_(self, "thresholds", tuple(sorted(self.thresholds)))
        set_(self, "cycle_thresholds", tuple(sorted(self.cycle_thresholds)))
        set_(self, "retry_thresholds", tuple(sorted(self.retry_thresholds)))
        set_(self, "include", tuple(self.include))
        set_(self, "exclude", tuple(self.exclude))
        set_(self, "budgets", pairs)
        set_(self, "_include_re", compile_patterns(self.include))
        set_(self, "_exclude_re", compile_patterns(self.exclude))
        set_(self, "_budget_res", tuple(_compile_one(pattern) for pattern, _ in pairs))
        set_(self, "tools", tuple((p, _tool_policy(o)) for p, o in tools))  # type: ignore[attr-defined]  # checked
        entries = self.tool_policies
        set_(self, "_tool_res", tuple(_compile_one(pattern) for pattern, _ in entries))
        set_(self, "_tool_cache", {})
        reads = self.progress == "result" or any(o.progress == "result" for _, o in entries)
        set_(self, "_reads", reads)
        policies = (
            self.cycle_period > 0
            or self.progress != "off"
            or bool(pairs)
            or bool(entries)
            or self.retry_window > 0
        )
        set_(self, "_policies", policies)
        set_(self, "_plain", not policies and not self.include and not self.exclude)

    @property
    def policies(self) -> bool:
        """Whether any opt-in policy that remembers calls (cycles, progress, budgets) is on."""
        return self._policies

    @property
    def reads_results(self) -> bool:
        """Whether a call's result is compared (``progress = "result"``, for every tool or
        some)."""
        return self._reads

    @property
    def needs_results(self) -> bool:
        """Whether a call's result can change anything (``reads_results``, or a retry window,
        which tells a success from a call whose result is not known): when not, a
        ``ToolCallReturned`` leaves every state as it is, and a harness need not report it."""
        return self._reads or self.retry_window > 0

    @property
    def tool_policies(self) -> tuple[tuple[str, ToolPolicy], ...]:
        """``tools``, then the preset's polling tools with ``progress = "result"``: the order
        in which ``policy`` looks for the first pattern matching a tool."""
        polls = ToolPolicy(progress="result")
        return (*self.tools, *((pattern, polls) for pattern in HOST_PRESETS.get(self.preset, ())))

    def policy(self, tool: str) -> Policy:
        """The thresholds, progress and ``deny_at`` that calls to ``tool`` follow."""
        known = self._tool_cache.get(tool)
        if known is not None:
            return known
        policy = Policy(self.thresholds, self.progress, self.deny_at)
        for (_pattern, given), compiled in zip(self.tool_policies, self._tool_res, strict=True):
            if compiled.fullmatch(tool) is not None:
                policy = Policy(
                    given.thresholds or self.thresholds,
                    given.progress or self.progress,
                    self.deny_at if given.deny_at is None else given.deny_at,
                )
                break
        if len(self._tool_cache) < _POLICY_CACHE_LIMIT:
            self._tool_cache[tool] = policy
        return policy

    def budget_matches(self, index: int, tool: str) -> bool:
        """Return whether budget ``index``'s pattern matches ``tool``."""
        return self._budget_res[index].fullmatch(tool) is not None

    def tracks(self, tool: str) -> bool:
        """Return whether calls to ``tool`` count toward (or reset) a chain."""
        if self._include_re is not None and self._include_re.fullmatch(tool) is None:
            return False
        return self._exclude_re is None or self._exclude_re.fullmatch(tool) is None

    def to_mapping(self) -> dict[str, object]:
        """Return the configuration in the design note's keys, ready for JSON or TOML.

        The opt-in policies' keys appear only when set away from their defaults.
        """
        mapping: dict[str, object] = {
            "thresholds": list(self.thresholds),
            "include": list(self.include),
            "exclude": list(self.exclude),
            "argumentsPreviewChars": self.arguments_preview_chars,
        }
        for name in _OPT_IN:
            value = getattr(self, name)
            if value != _DEFAULT_OF[name]:
                mapping[_PUBLIC_OF[name]] = _plain(value)
        return mapping


# The opt-in policies' fields, in the order ``to_mapping`` writes them, and their defaults.
_OPT_IN = (
    "cycle_period",
    "cycle_thresholds",
    "progress",
    "budgets",
    "deny_at",
    "errors_are_progress",
    "cycle_deny_at",
    "budget_scope",
    "tools",
    "preset",
    "retry_window",
    "retry_thresholds",
)
_DEFAULT_OF = {name: GuardConfig.__dataclass_fields__[name].default for name in _OPT_IN}


def _plain(value: object) -> object:
    """A field's value as JSON or TOML writes it: budgets as a mapping, a tuple as a list."""
    if isinstance(value, tuple):
        is_pairs = bool(value) and isinstance(value[0], tuple)
        return {k: _plain(v) for k, v in value} if is_pairs else list(value)
    if isinstance(value, ToolPolicy):
        return value.to_mapping()
    return value


def compile_patterns(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """Return one regular expression matching any of ``patterns``, or ``None`` for none."""
    if not patterns:
        return None
    alternatives = ("".join(".*" if c == "*" else re.escape(c) for c in p) for p in patterns)
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.DOTALL)


def _compile_one(pattern: str) -> re.Pattern[str]:
    compiled = compile_patterns((pattern,))
    assert compiled is not None  # one pattern gives one expression
    return compiled


# Public (design-note) key -> field name; the snake-case field names are accepted too.
_PUBLIC = {
    "thresholds": "thresholds",
    "include": "include",
    "exclude": "exclude",
    "argumentsPreviewChars": "arguments_preview_chars",
    "cyclePeriod": "cycle_period",
    "cycleThresholds": "cycle_thresholds",
    "progress": "progress",
    "budgets": "budgets",
    "denyAt": "deny_at",
    "errorsAreProgress": "errors_are_progress",
    "cycleDenyAt": "cycle_deny_at",
    "budgetScope": "budget_scope",
    "tools": "tools",
    "preset": "preset",
    "retryWindow": "retry_window",
    "retryThresholds": "retry_thresholds",
}
_KEYS = {**_PUBLIC, **{name: name for name in _PUBLIC.values()}}
_PUBLIC_OF = {name: key for key, name in _PUBLIC.items()}


def parse_config(raw: Mapping[str, object]) -> Result[GuardConfig, ConfigError]:
    """Return the ``GuardConfig`` that ``raw`` describes, or the first reason it is invalid.

    Accepts the keys ``thresholds``, ``include``, ``exclude`` and ``argumentsPreviewChars``
    and the opt-in ``cyclePeriod``, ``cycleThresholds``, ``progress``, ``budgets`` (a mapping
    of tool-name pattern to limit), ``budgetScope``, ``denyAt``, ``errorsAreProgress``,
    ``cycleDenyAt``, ``tools`` (a mapping of tool-name pattern to ``progress``,
    ``thresholds`` and ``denyAt`` for the matching tools), ``preset`` (a host's polling
    tools, or ``"seed"``), ``retryWindow`` and ``retryThresholds`` (or each one's snake-case
    field name);
    missing keys take their defaults, unknown keys fail.
    """
    return _as_result(_config_or_error(raw))


def _config_or_error(raw: Mapping[str, object]) -> GuardConfig | ConfigError:
    candidate: object = raw  # callers pass whatever a YAML or TOML loader gave them
    if not isinstance(candidate, Mapping):
        message = f"config must be a mapping, got {candidate!r}"
        return ConfigError("<config>", candidate, message)
    fields: dict[str, object] = {}
    for key, value in raw.items():
        name = _KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            known = ", ".join(_PUBLIC)
            return ConfigError(str(key), value, f"unknown config key {key!r} (known: {known})")
        if name in fields:
            return ConfigError(str(key), value, f"config key {key!r} given twice")
        fields[name] = value
    error = _first_error(fields)
    if error is not None:
        return error
    return GuardConfig(**fields)  # type: ignore[arg-type]  # each value checked above


class GuardConfigError(ValueError):
    """A configuration handed to an embedding API is invalid; the message names the key.

    The exception form of ``ConfigError``, for constructors that cannot return a ``Result``
    (a plugin, a middleware, a capability): ``error`` is the ``ConfigError``, and ``key`` and
    ``value`` are its offending key and the value found there.
    """

    def __init__(self, error: ConfigError) -> None:
        super().__init__(f"invalid {PLUGIN_NAME} config: {error.message}")
        self.error = error
        self.key = error.key
        self.value = error.value


def resolve_config(config: GuardConfig | Mapping[str, object] | None) -> GuardConfig:
    """Return the ``GuardConfig`` that ``config`` describes: the defaults for ``None``.

    A mapping goes through ``parse_config``; raises ``GuardConfigError`` naming the key when
    it is invalid. The one place every adapter's ``config=`` argument is read.
    """
    if config is None:
        return GuardConfig()
    if isinstance(config, GuardConfig):
        return config
    parsed = _config_or_error(config)
    if isinstance(parsed, ConfigError):
        raise GuardConfigError(parsed)
    return parsed


def load_config(
    data: str | bytes,
    *,
    source: str | None = None,
    fmt: ConfigFormat | None = None,
    overrides: Mapping[str, object] | None = None,
    defaults: Mapping[str, object] | None = None,
) -> Result[GuardConfig, ConfigError]:
    """Return the ``GuardConfig`` in the TOML or JSON text ``data`` (``bytes`` are UTF-8; a byte
    order mark first is ignored), or why it is invalid.

    ``fmt`` names the syntax; when it is omitted, a ``source`` ending in ``.toml`` or ``.json``
    decides, and otherwise the text is JSON when its first non-blank character is ``{`` and
    TOML if not. ``overrides`` (keys as in ``parse_config``) replace the document's keys,
    aliases included; ``defaults`` (the same keys) stand for keys the document does not give (a
    hook's host preset). Every ``ConfigError`` carries ``source``. Never raises.
    """
    loaded = load_config_or_error(
        data, source=source, fmt=fmt, overrides=overrides, defaults=defaults
    )
    return _as_result(loaded)


def load_config_or_error(
    data: str | bytes,
    *,
    source: str | None = None,
    fmt: ConfigFormat | None = None,
    overrides: Mapping[str, object] | None = None,
    defaults: Mapping[str, object] | None = None,
) -> GuardConfig | ConfigError:
    """Return the ``GuardConfig`` in ``data``, or the ``ConfigError``: ``load_config`` unwrapped."""
    document = _document(data, source, fmt)
    if isinstance(document, ConfigError):
        config: GuardConfig | ConfigError = document
    else:
        layered = _overlaid(_overlaid(defaults or {}, document), overrides or {})
        config = _config_or_error(layered)
    if isinstance(config, ConfigError):
        return ConfigError(config.key, config.value, config.message, source)
    return config


_Value = TypeVar("_Value")


def _as_result(value: _Value | ConfigError) -> Result[_Value, ConfigError]:
    # returns is imported when a Result is first built: see _codec's docstring.
    from returns.result import Failure, Success  # noqa: PLC0415

    if isinstance(value, ConfigError):
        return Failure(value)
    return Success(value)


def config_format(source: str | None, text: str) -> ConfigFormat:
    """Return the syntax of ``text``: by ``source``'s suffix, else ``{`` means JSON."""
    if source is not None and source.endswith((".toml", ".json")):
        return "toml" if source.endswith(".toml") else "json"
    return "json" if text.lstrip().startswith("{") else "toml"


def _parse_toml(text: str) -> object:
    # tomllib is imported only when a TOML document is read: a hook process with no
    # configuration file (a new process for every tool call) does not pay for it.
    import tomllib  # noqa: PLC0415

    return tomllib.loads(text)


def _document(
    data: str | bytes, source: str | None, fmt: ConfigFormat | None
) -> Mapping[str, object] | ConfigError:
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            message = f"config is not UTF-8 text (at byte offset {error.start})"
            return ConfigError("<config>", None, message)
    # A byte order mark, which some editors write first, is not part of the document.
    data = data.removeprefix("\ufeff")
    syntax = fmt or config_format(source, data)
    try:
        loaded: object = (
            _parse_toml(data)
            if syntax == "toml"
            else json.loads(data, object_pairs_hook=_object_without_duplicates)
        )
    except ValueError as error:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        name = "TOML" if syntax == "toml" else "JSON"
        return ConfigError(
            "<config>", None, f"config is not valid {name}: {parse_error_reason(error)}"
        )
    except RecursionError:
        return ConfigError("<config>", None, "config is nested too deeply")
    if not isinstance(loaded, dict):
        return ConfigError("<config>", loaded, f"config must be a mapping, got {loaded!r}")
    return loaded


def _object_without_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object, refused when a key comes twice (TOML refuses it too): which one was meant?"""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"key {key!r} given twice")
        seen.add(key)
    return dict(pairs)


# Python's own message for an integer past its digit limit, which goes on with advice to call
# sys.set_int_max_str_digits(): meaningless to the person whose file it is.
_DIGITS_LIMIT = re.compile(r"Exceeds the limit \((\d+) digits\)")


def parse_error_reason(error: ValueError) -> str:
    """What a JSON or TOML parser's ``ValueError`` says, in the document's terms."""
    text = str(error)
    too_long = _DIGITS_LIMIT.search(text)
    return f"a number has more than {too_long[1]} digits" if too_long else text


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
        ("cycle_period", _cycle_period_error),
        ("cycle_thresholds", _thresholds_error),
        ("progress", _progress_error),
        ("budgets", _budgets_error),
        ("deny_at", _deny_at_error),
        ("errors_are_progress", _flag_error),
        ("cycle_deny_at", _deny_at_error),
        ("budget_scope", _budget_scope_error),
        ("tools", _tools_error),
        ("preset", _preset_error),
        ("retry_window", _retry_window_error),
        ("retry_thresholds", _thresholds_error),
    )
    for name, check in checks:
        if name in fields:
            key = _PUBLIC_OF[name]
            message = check(key, fields[name])
            if message is not None:
                return ConfigError(key, fields[name], message)
    return _cycle_deny_error(fields)


def _cycle_deny_error(fields: Mapping[str, object]) -> ConfigError | None:
    # A limit on cycles that are not looked for would never refuse anything: say so.
    value = fields.get("cycle_deny_at")
    if value is not None and not fields.get("cycle_period"):
        message = f"cycleDenyAt needs cyclePeriod (2 to {MAX_CYCLE_PERIOD}), got {value!r} alone"
        return ConfigError("cycleDenyAt", value, message)
    return None


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _thresholds_error(name: str, value: object) -> str | None:
    if not isinstance(value, list | tuple):
        return f"{name} must be a list of integers, got {value!r}"
    if not value:
        return f"{name} must not be empty"
    for item in value:
        if not _is_integer(item):
            return f"{name} must be integers, got {item!r} in {list(value)!r}"
        if item < 2:
            return f"{name} must be 2 or more, got {item!r} in {list(value)!r}"
    duplicates = sorted({item for item in value if value.count(item) > 1})
    if duplicates:
        return f"{name} must not repeat, got {duplicates[0]!r} twice in {list(value)!r}"
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


def _cycle_period_error(name: str, value: object) -> str | None:
    if not _is_integer(value) or (value != 0 and not 2 <= value <= MAX_CYCLE_PERIOD):  # type: ignore[operator]  # an int
        return f"{name} must be 0 (off) or an integer from 2 to {MAX_CYCLE_PERIOD}, got {value!r}"
    return None


def _progress_error(name: str, value: object) -> str | None:
    if value not in ("off", "result"):
        return f"{name} must be 'off' or 'result', got {value!r}"
    return None


def _budgets_error(name: str, value: object) -> str | None:
    # A mapping, or pairs in a list or tuple: an iterator would be spent by this check.
    pairs = value.items() if isinstance(value, Mapping) else value
    if not isinstance(pairs, Iterable) or not isinstance(value, Mapping | list | tuple):
        return f"{name} must map tool-name patterns to limits, got {value!r}"
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2 or not isinstance(pair[0], str):
            return f"{name} must map tool-name patterns to limits, got {value!r}"
        pattern, limit = pair
        if not _is_integer(limit) or limit < 1:
            return f"{name} limits must be integers of 1 or more, got {limit!r} for {pattern!r}"
    return None


def _deny_at_error(name: str, value: object) -> str | None:
    if value is not None and (not _is_integer(value) or value < 2):  # type: ignore[operator]  # an int
        return f"{name} must be an integer of 2 or more (or absent), got {value!r}"
    return None


def _budget_scope_error(name: str, value: object) -> str | None:
    if value not in ("prompt", "session"):
        return f"{name} must be 'prompt' or 'session', got {value!r}"
    return None


def _preset_error(name: str, value: object) -> str | None:
    if value not in PRESETS:
        return f"{name} must be one of {', '.join(map(repr, PRESETS))}, got {value!r}"
    return None


_TOOL_KEYS = {"thresholds": "thresholds", "progress": "progress", "denyAt": "deny_at"}
_TOOL_KEYS_ANY = {**_TOOL_KEYS, "deny_at": "deny_at"}
_TOOL_CHECKS = {"thresholds": _thresholds_error, "progress": _progress_error}


def _tools_error(name: str, value: object) -> str | None:
    if not isinstance(value, Mapping | list | tuple):
        return f"{name} must map tool-name patterns to settings, got {value!r}"
    pairs: Iterable[object] = value.items() if isinstance(value, Mapping) else value
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2 or not isinstance(pair[0], str):
            return f"{name} must map tool-name patterns to settings, got {value!r}"
        error = _tool_settings_error(f"{name}[{pair[0]!r}]", pair[1])
        if error is not None:
            return error
    return None


def _tool_settings_error(where: str, settings: object) -> str | None:
    if isinstance(settings, ToolPolicy):
        settings = settings.to_mapping()
    if not isinstance(settings, Mapping):
        return f"{where} must be a table of settings, got {settings!r}"
    for key, value in settings.items():
        field_name = _TOOL_KEYS_ANY.get(key) if isinstance(key, str) else None
        if field_name is None:
            known = ", ".join(_TOOL_KEYS)
            return f"{where} has an unknown key {key!r} (known: {known})"
        check = _TOOL_CHECKS.get(field_name, _deny_at_error)
        message = check(f"{where}.{key}", value)
        if message is not None:
            return message
    return None


def _tool_policy(settings: object) -> ToolPolicy:
    """``settings`` (checked) as a ``ToolPolicy``, its thresholds sorted."""
    if isinstance(settings, ToolPolicy):  # thresholds given in any order come back sorted
        settings = settings.to_mapping()
    fields = {_TOOL_KEYS_ANY[key]: value for key, value in settings.items()}  # type: ignore[attr-defined]  # a mapping, checked
    if "thresholds" in fields:
        fields["thresholds"] = tuple(sorted(fields["thresholds"]))
    return ToolPolicy(**fields)


def _flag_error(name: str, value: object) -> str | None:
    if not isinstance(value, bool):
        return f"{name} must be true or false, got {value!r}"
    return None


def _retry_window_error(name: str, value: object) -> str | None:
    if not _is_integer(value) or (value != 0 and not 2 <= value <= MAX_RETRY_WINDOW):  # type: ignore[operator]  # an int
        return f"{name} must be 0 (off) or an integer from 2 to {MAX_RETRY_WINDOW}, got {value!r}"
    return None
