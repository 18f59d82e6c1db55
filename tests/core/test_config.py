"""parse_config: every way a configuration can be wrong fails loud, naming key and value."""

from __future__ import annotations

import pytest
from returns.pipeline import is_successful
from returns.result import Result

from repeat_guard import (
    ConfigError,
    GuardConfig,
    GuardConfigError,
    load_config,
    parse_config,
    resolve_config,
)
from repeat_guard._config import _PUBLIC, config_format


def error_of(result: Result[GuardConfig, ConfigError]) -> ConfigError:
    assert not is_successful(result)
    return result.failure()


def test_an_empty_mapping_is_the_default_config() -> None:
    assert parse_config({}).unwrap() == GuardConfig()


def test_the_design_note_keys_and_the_snake_case_key() -> None:
    config = parse_config(
        {
            "thresholds": [8, 3, 5],
            "include": ["pro*"],
            "exclude": ["todo_write"],
            "argumentsPreviewChars": 24,
        }
    ).unwrap()
    assert config == GuardConfig((3, 5, 8), ("pro*",), ("todo_write",), 24)
    assert (
        parse_config({"arguments_preview_chars": 7})
        .map(lambda c: c.arguments_preview_chars)
        .value_or(0)
        == 7
    )
    assert config.to_mapping() == {
        "thresholds": [3, 5, 8],
        "include": ["pro*"],
        "exclude": ["todo_write"],
        "argumentsPreviewChars": 24,
    }


def test_thresholds_come_back_sorted() -> None:
    assert parse_config({"thresholds": [4, 2]}).unwrap().thresholds == (2, 4)
    assert GuardConfig(thresholds=(9, 3)).thresholds == (3, 9)


@pytest.mark.parametrize(
    ("raw", "key", "message"),
    [
        ({"thresholds": []}, "thresholds", "thresholds must not be empty"),
        (
            {"thresholds": [3, 2.5]},
            "thresholds",
            "thresholds must be integers, got 2.5 in [3, 2.5]",
        ),
        ({"thresholds": ["3"]}, "thresholds", "thresholds must be integers, got '3' in ['3']"),
        (
            {"thresholds": [True, 3]},
            "thresholds",
            "thresholds must be integers, got True in [True, 3]",
        ),
        ({"thresholds": [1, 3]}, "thresholds", "thresholds must be 2 or more, got 1 in [1, 3]"),
        (
            {"thresholds": [3, 5, 3]},
            "thresholds",
            "thresholds must not repeat, got 3 twice in [3, 5, 3]",
        ),
        ({"thresholds": 3}, "thresholds", "thresholds must be a list of integers, got 3"),
        (
            {"argumentsPreviewChars": "10"},
            "argumentsPreviewChars",
            "argumentsPreviewChars must be an integer, got '10'",
        ),
        (
            {"argumentsPreviewChars": False},
            "argumentsPreviewChars",
            "argumentsPreviewChars must be an integer, got False",
        ),
        (
            {"arguments_preview_chars": 0},
            "argumentsPreviewChars",
            "argumentsPreviewChars must be 1 or more, got 0",
        ),
        (
            {"include": "grep"},
            "include",
            "include must be a list of tool-name patterns, got 'grep'",
        ),
        ({"exclude": ["ok", 3]}, "exclude", "exclude entries must be strings, got 3 in ['ok', 3]"),
        (
            {"threshold": [3]},
            "threshold",
            f"unknown config key 'threshold' (known: {', '.join(_PUBLIC)})",
        ),
        (
            {"argumentsPreviewChars": 5, "arguments_preview_chars": 6},
            "arguments_preview_chars",
            "config key 'arguments_preview_chars' given twice",
        ),
    ],
)
def test_invalid_configs_fail_naming_key_and_value(
    raw: dict[str, object], key: str, message: str
) -> None:
    error = error_of(parse_config(raw))
    assert error.key == key
    assert error.message == message
    assert str(error) == message
    assert parse_config(raw).alt(str).failure() == message


def test_the_unknown_key_message_names_every_key_the_parser_takes() -> None:
    # The list comes from the core's own table: each key it names is one the parser knows
    # (a value of no type any key takes fails on its value, never as an unknown key).
    message = error_of(parse_config({"threshold": [3]})).message
    known = message.removeprefix("unknown config key 'threshold' (known: ").removesuffix(")")
    names = known.split(", ")
    assert names[:4] == ["thresholds", "include", "exclude", "argumentsPreviewChars"]
    for name in names:
        error = error_of(parse_config({name: object()}))
        assert (error.key, error.message.startswith("unknown")) == (name, False)


def test_a_non_string_key_and_a_non_mapping_fail() -> None:
    assert error_of(parse_config({3: 1})).key == "3"  # type: ignore[dict-item]  # bad input on purpose
    error = error_of(parse_config([("thresholds", [3])]))  # type: ignore[arg-type]  # bad input on purpose
    assert error.key == "<config>"
    assert error.message.startswith("config must be a mapping")


def test_constructing_an_invalid_config_directly_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="thresholds must be 2 or more"):
        GuardConfig(thresholds=(1,))
    with pytest.raises(ValueError, match="argumentsPreviewChars must be 1 or more"):
        GuardConfig(arguments_preview_chars=0)


def test_configs_are_values() -> None:
    assert GuardConfig(include=("a",)) == GuardConfig(include=("a",))
    assert hash(GuardConfig(include=("a",))) == hash(GuardConfig(include=("a",)))
    assert GuardConfig(include=("a",)) != GuardConfig(include=("b",))
    assert "thresholds=(3, 5, 8)" in repr(GuardConfig())


# load_config: the one loader for configuration text.


def test_load_config_reads_toml_and_json_by_suffix_or_by_sniffing() -> None:
    assert load_config("thresholds = [2, 4]", source="g.toml").unwrap().thresholds == (2, 4)
    assert load_config(b'{"thresholds": [6]}', source="g.json").unwrap().thresholds == (6,)
    assert load_config(' {"include": ["a"]}', source="g.conf").unwrap().include == ("a",)
    assert load_config('exclude = ["b"]').unwrap().exclude == ("b",)
    assert load_config("{}", fmt="json", source="x.toml").unwrap() == GuardConfig()


@pytest.mark.parametrize("source", ["g.json", "g.toml", None])
@pytest.mark.parametrize("encode", [True, False])
def test_a_byte_order_mark_before_the_document_is_not_part_of_it(
    source: str | None, encode: bool
) -> None:
    text = "\ufeff" + ("thresholds = [6, 7]" if source == "g.toml" else '{"thresholds": [6, 7]}')
    data = text.encode("utf-8") if encode else text
    assert load_config(data, source=source).unwrap().thresholds == (6, 7)
    # Only one, and only first.
    assert load_config("\ufeff" + text, source=source).failure().key == "<config>"


def test_overrides_replace_keys_and_their_aliases() -> None:
    text = '{"thresholds": [3], "arguments_preview_chars": 9, "include": ["a"]}'
    overrides = {"argumentsPreviewChars": 12, "thresholds": [4, 2]}
    config = load_config(text, overrides=overrides).unwrap()
    assert (config.thresholds, config.arguments_preview_chars) == ((2, 4), 12)
    assert config.include == ("a",)


_TOO_LONG = "config is not valid %s: a number has more than 4300 digits"
_TWICE = "config is not valid JSON: key 'b' given twice"


@pytest.mark.parametrize(
    ("data", "source", "key", "message"),
    [
        (b"{}\xff", "g.json", "<config>", "config is not UTF-8 text (at byte offset 2)"),
        ("thresholds = [" + "9" * 5000 + "]", "g.toml", "<config>", _TOO_LONG % "TOML"),
        ('{"thresholds": [' + "9" * 5000 + "]}", "g.json", "<config>", _TOO_LONG % "JSON"),
        ('{"a": {"b": 1, "b": 2}}', "g.json", "<config>", _TWICE),
        ("thresholds = [", "g.toml", "<config>", "config is not valid TOML"),
        ('{"a": ', "g.json", "<config>", "config is not valid JSON"),
        ("[1, 2]", "g.json", "<config>", "config must be a mapping, got [1, 2]"),
        ("[" * 100_000, "g.json", "<config>", "config is nested too deeply"),
        ("thresholds = [1]", "g.toml", "thresholds", "thresholds must be 2 or more"),
        ("colour = 1", None, "colour", "unknown config key 'colour'"),
    ],
)
def test_load_config_names_the_source_and_the_key(
    data: str | bytes, source: str | None, key: str, message: str
) -> None:
    error = load_config(data, source=source).failure()
    assert error.key == key
    assert error.source == source
    assert error.message.startswith(message)
    assert "sys." not in error.message
    assert str(error) == (error.message if source is None else f"{source}: {error.message}")


def test_a_suffix_decides_the_syntax_before_the_text_does() -> None:
    error = load_config("{}", source="g.toml").failure()
    assert error.message.startswith("config is not valid TOML")
    assert load_config("{}", source="g.json").unwrap() == GuardConfig()
    assert load_config("[1]", source="g.json").failure() == ConfigError(
        "<config>", [1], "config must be a mapping, got [1]", "g.json"
    )


def test_an_override_replaces_the_files_key_under_its_other_spelling() -> None:
    text = '{"argumentsPreviewChars": 9, "denyAt": 4}'
    overrides = {"arguments_preview_chars": 12, "deny_at": 6}
    config = load_config(text, overrides=overrides).unwrap()
    assert (config.arguments_preview_chars, config.deny_at) == (12, 6)


@pytest.mark.parametrize(
    ("source", "text", "syntax"),
    [
        ("g.toml", "{}", "toml"),
        ("g.json", "x = 1", "json"),
        ("g.conf", ' \n {"a": 1}', "json"),
        (None, "{}", "json"),
        (None, "a = 1", "toml"),
        ("g.json.bak", "", "toml"),
    ],
)
def test_config_format_names_the_syntax(source: str | None, text: str, syntax: str) -> None:
    assert config_format(source, text) == syntax


def test_overrides_are_read_after_the_files_keys() -> None:
    # An override of a key the file holds too moves it after the file's keys: of two unknown
    # keys, the one only the file names is the first reported, whatever the file's order.
    text = '{"colour": 1, "size": 2}'
    for override in ("colour", "size"):
        other = "size" if override == "colour" else "colour"
        error = load_config(text, source="g.json", overrides={override: 3}).failure()
        assert (error.key, error.value) == (other, {"colour": 1, "size": 2}[other])


def test_an_override_is_judged_like_the_file() -> None:
    error = load_config("{}", source="g.json", overrides={"thresholds": ["x"]}).failure()
    assert (error.key, error.value, error.source) == ("thresholds", ["x"], "g.json")


def test_resolve_config_takes_nothing_a_config_or_a_mapping() -> None:
    given = GuardConfig(thresholds=(4,))
    assert resolve_config(None) == GuardConfig()
    assert resolve_config(given) is given
    assert resolve_config({"thresholds": [4]}) == given


def test_resolve_config_raises_the_parse_error_naming_the_key() -> None:
    with pytest.raises(GuardConfigError, match="must not be empty") as raised:
        resolve_config({"thresholds": []})
    assert (raised.value.key, raised.value.value) == ("thresholds", [])
    assert raised.value.error == parse_config({"thresholds": []}).failure()
    assert isinstance(raised.value, ValueError)
