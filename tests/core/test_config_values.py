"""Config errors carry the offending value; direct construction validates every field."""

from __future__ import annotations

import pytest
from returns.pipeline import is_successful
from returns.result import Result

from repeat_guard import ConfigError, GuardConfig, parse_config


def error_of(result: Result[GuardConfig, ConfigError]) -> ConfigError:
    assert not is_successful(result)
    return result.failure()


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ({"thresholds": [3, 3]}, [3, 3]),
        ({"include": "grep"}, "grep"),
        ({"argumentsPreviewChars": 0}, 0),
        ({"threshold": [3]}, [3]),
        ({"argumentsPreviewChars": 5, "arguments_preview_chars": 6}, 6),
    ],
)
def test_the_error_holds_the_value_found_at_the_key(raw: dict[str, object], value: object) -> None:
    assert error_of(parse_config(raw)).value == value


def test_a_non_mapping_error_holds_the_whole_input() -> None:
    raw = [("thresholds", [3])]
    assert error_of(parse_config(raw)).value is raw  # type: ignore[arg-type]  # bad on purpose


class _PretendKey:
    """Hashes and compares like ``"thresholds"`` but is not a string."""

    def __hash__(self) -> int:
        return hash("thresholds")

    def __eq__(self, other: object) -> bool:
        return True


def test_a_key_that_only_pretends_to_be_a_string_is_unknown() -> None:
    error = error_of(parse_config({_PretendKey(): [3]}))  # type: ignore[dict-item]  # on purpose
    assert error.message.startswith("unknown config key")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"include": "grep"}, "include must be a list of tool-name patterns, got 'grep'"),
        ({"exclude": ("ok", 3)}, "exclude entries must be strings, got 3 in ['ok', 3]"),
    ],
)
def test_patterns_are_validated_when_the_config_is_built_directly(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("[", r"\[").replace("]", r"\]")):
        GuardConfig(**fields)  # type: ignore[arg-type]  # bad values on purpose


def test_a_star_spans_newlines_in_tool_names() -> None:
    config = GuardConfig(exclude=("mcp*",))
    assert not config.tracks("mcp\nfs")
    assert GuardConfig(include=("*fs",)).tracks("mcp\nfs")
