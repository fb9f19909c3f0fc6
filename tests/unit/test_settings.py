"""The room settings model: every field valid and invalid, and the file round trip."""

from __future__ import annotations

import dataclasses
import json

import pytest

from beekeeper.core.settings import (
    DEFAULT_WAF_LIMIT,
    ENVIRONMENT_VARIABLE,
    MAX_RATE,
    SETTINGS,
    RoomSettings,
    SettingsError,
    default_for,
)

REQUIRED = {
    "name": "spring-sale",
    "display_name": "Spring Sale",
    "region": "eu-west-1",
    "origin": "https://shop.example.com/sale",
    "rate": 600,
}


def room(**changes: object) -> RoomSettings:
    return RoomSettings.from_mapping({**REQUIRED, **changes})


def test_defaults_fill_the_optional_settings() -> None:
    settings = room()
    assert settings.dynamic_rate_throttling is False
    assert settings.admission_validity_minutes == 60
    assert settings.admission_validity_seconds == 3600
    assert settings.fail_open is False
    assert settings.stack_name == "beekeeper-spring-sale"
    assert settings.sampled_url == "https://shop.example.com/sale"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "a"),
        ("name", "spring-sale-2026"),
        ("name", "x" * 32),
        ("display_name", "Spring Sale — 50% off, ünïcödé"),
        ("region", "us-east-1"),
        ("region", "ap-southeast-2"),
        ("region", "us-gov-west-1"),
        ("origin", "https://shop.example.com"),
        ("origin", "https://shop.example.com:8443/a/b?c=d"),
        ("origin", "http://localhost:8000/shop"),
        ("origin", "http://127.0.0.1:9000"),
        ("rate", 1),
        ("rate", MAX_RATE),
        ("rate", 25),
        ("dynamic_rate_throttling", True),
        ("admission_validity_minutes", 1),
        ("admission_validity_minutes", 10080),
        ("fail_open", True),
        ("consumer_capacity", 100),
        ("consumer_capacity", 30000),
        ("arrival_shards", 1),
        ("arrival_shards", 64),
        ("waf_requests_per_5_minutes", 0),
        ("waf_requests_per_5_minutes", 10),
        ("health_check_url", "https://shop.example.com/health"),
        ("health_check_url", ""),
        ("slow_ms", 0),
        ("slow_ms", 1),
        ("slow_ms", 4000),
        ("presence_grace_seconds", 0),
        ("presence_grace_seconds", 5),
        ("presence_grace_seconds", 600),
        ("presence_idle_minutes", 0.5),
        ("accent_colour", "#A0b1C2"),
        ("logo_url", "https://cdn.example.com/logo.svg"),
        ("custom_template", "/home/me/page.html"),
        ("log_retention_days", 7),
        ("alert_email", ""),
        ("alert_email", "ops@shop.example"),
        ("alert_email", "first.last+alerts@mail.shop-example.co.uk"),
    ],
)
def test_valid_values_are_kept(field: str, value: object) -> None:
    assert getattr(room(**{field: value}), field) == value


@pytest.mark.parametrize(
    ("field", "value", "hint"),
    [
        ("name", "", "lower-case letters"),
        ("name", "Spring", "lower-case letters"),
        ("name", "1sale", "starting with a letter"),
        ("name", "sale-", "not ending with a hyphen"),
        ("name", "sale--2", "single hyphens"),
        ("name", "x" * 33, "1 to 32 characters"),
        ("name", "sale_2", "lower-case letters"),
        ("name", 5, "lower-case letters"),
        ("display_name", "", "event's name"),
        ("display_name", "   ", "event's name"),
        ("display_name", "two\nlines", "printable"),
        ("display_name", "x" * 81, "at most 80"),
        ("region", "Europe", "AWS region code"),
        ("region", "us-east", "AWS region code"),
        # A trailing newline passes a pattern's `$` with `match`; every text check is full.
        ("name", "sale\n", "lower-case letters"),
        ("region", "eu-west-1\n", "AWS region code"),
        ("accent_colour", "#1f5fbf\n", "#1f5fbf"),
        ("origin", "ftp://shop.example.com", "https://"),
        ("origin", "http://shop.example.com", "https://"),
        ("origin", "shop.example.com", "https://"),
        ("origin", "https://", "https://"),
        ("origin", "https://user:pw@shop.example.com", "credentials"),
        ("origin", "https://shop.example.com/#top", "fragment"),
        ("origin", "https://shop.example.com/a b", "without spaces"),
        ("origin", 'https://shop.example.com/"x', "quotes"),
        ("origin", "https://shop.example.com:99999", "https://"),
        ("rate", 0, "1 to 300,000"),
        ("rate", MAX_RATE + 1, "1 to 300,000"),
        ("rate", 1.5, "whole number"),
        ("rate", True, "whole number"),
        ("rate", "600", "whole number"),
        ("dynamic_rate_throttling", "yes", "true or false"),
        ("admission_validity_minutes", 0, "minutes"),
        ("admission_validity_minutes", 10081, "minutes"),
        ("fail_open", 1, "true or false"),
        ("consumer_capacity", 99, "100 to 30,000"),
        ("arrival_shards", 0, "1 to 64"),
        ("arrival_shards", 65, "1 to 64"),
        ("waf_requests_per_5_minutes", 9, "or 0 for no WAF"),
        ("domain", "https://queue.shop.example", "no https://"),
        ("domain", "queue.shop.example/room", "no path"),
        ("domain", "localhost", "host name such as"),
        ("domain", "-queue.shop.example", "host name such as"),
        ("health_check_url", "http://example.com", "https://"),
        ("slow_ms", -1, "1 to 4,000 milliseconds, or 0 for none"),
        ("slow_ms", 4001, "1 to 4,000 milliseconds, or 0 for none"),
        ("slow_ms", False, "whole number"),
        ("slow_ms", 0.5, "whole number"),
        ("presence_grace_seconds", 4, "5 to 600 seconds, or 0 for no presence"),
        ("presence_grace_seconds", 601, "5 to 600 seconds, or 0 for no presence"),
        ("presence_grace_seconds", True, "whole number"),
        ("presence_grace_seconds", 30.5, "whole number"),
        ("presence_idle_minutes", 0, "number of minutes"),
        ("presence_idle_minutes", float("nan"), "number of minutes"),
        ("accent_colour", "blue", "#1f5fbf"),
        ("accent_colour", "#12345", "#1f5fbf"),
        ("logo_url", "javascript:alert(1)", "https://"),
        ("custom_template", 3, "file path"),
        ("log_retention_days", 2, "one of 1, 3, 5"),
        ("alert_email", "ops", "one email address"),
        ("alert_email", "ops@shop", "one email address"),
        ("alert_email", "ops@@shop.example", "one email address"),
        ("alert_email", "ops@shop.example\n", "one email address"),
        ("alert_email", "ops@shop.example, b@c.example", "one email address"),
        ("alert_email", '"o p"@shop.example', "one email address"),
        ("alert_email", "a" * 250 + "@b.example", "one email address"),
        ("alert_email", 5, "one email address"),
        # A boolean is not a number, whatever Python says (True == 1, False == 0).
        ("waf_requests_per_5_minutes", False, "whole number"),
        ("log_retention_days", True, "one of 1, 3, 5"),
        ("max_inside", False, "whole number"),
        ("max_inside", -1, "from 1 to 1,000,000 visitors, or 0 for no cap"),
        ("health_check_url", None, "https://"),
        ("logo_url", None, "https://"),
    ],
)
def test_invalid_values_name_the_field_the_value_and_what_is_allowed(
    field: str, value: object, hint: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        room(**{field: value})
    message = str(raised.value)
    assert message.startswith(f"{field}: {value!r} is not allowed; ")
    assert hint in message
    assert raised.value.field_name == field
    assert "\n" not in message


def test_display_name_is_trimmed() -> None:
    assert room(display_name="  Sale  ").display_name == "Sale"


def test_unknown_and_missing_settings_are_named() -> None:
    with pytest.raises(SettingsError, match=r"^colour: 'red' is not allowed; this is not a room"):
        room(colour="red")
    data = dict(REQUIRED)
    del data["origin"]
    with pytest.raises(SettingsError, match=r"^origin: None is not allowed; this setting is requ"):
        RoomSettings.from_mapping(data)


def test_text_from_a_prompt_is_coerced_with_the_same_checks() -> None:
    settings = RoomSettings.from_mapping(
        {**REQUIRED, "rate": " 1,200 ", "dynamic_rate_throttling": "Yes", "fail_open": "off"},
        coerce_strings=True,
    )
    assert settings.rate == 1200
    assert settings.dynamic_rate_throttling is True
    assert settings.fail_open is False
    with pytest.raises(SettingsError, match=r"^rate: 'lots' is not allowed; use a whole number"):
        RoomSettings.from_mapping({**REQUIRED, "rate": "lots"}, coerce_strings=True)
    with pytest.raises(SettingsError, match=r"^fail_open: 'maybe' is not allowed; use yes or no"):
        RoomSettings.from_mapping({**REQUIRED, "fail_open": "maybe"}, coerce_strings=True)
    with pytest.raises(SettingsError, match=r"1 to 300,000"):
        RoomSettings.from_mapping({**REQUIRED, "rate": "300001"}, coerce_strings=True)


def test_toml_round_trip_keeps_every_field_and_is_commented() -> None:
    original = room(
        display_name='Quotes " and \\ backslashes and ünïcödé',
        dynamic_rate_throttling=True,
        waf_requests_per_5_minutes=500,
        slow_ms=800,
        max_inside=50,
        presence_grace_seconds=30,
        presence_idle_minutes=2.5,
        logo_url="https://cdn.example.com/logo.svg",
    )
    text = original.to_toml()
    assert RoomSettings.from_toml(text) == original
    assert text.count("\n# ") >= len(original.to_mapping())
    assert "rate = 600\n" in text


def test_hand_edited_file_is_validated() -> None:
    text = room().to_toml().replace("rate = 600", "rate = 0")
    with pytest.raises(SettingsError, match=r"^rate: 0 is not allowed"):
        RoomSettings.from_toml(text)
    with pytest.raises(SettingsError, match=r"^room file: .*fix the file's syntax"):
        RoomSettings.from_toml("rate = = 3")


@pytest.mark.parametrize(
    "nested",
    ["a = " + "[" * 5_000 + "]" * 5_000, "a = " + "{b = " * 5_000 + "1" + "}" * 5_000],
)
def test_a_room_file_nested_too_deeply_is_a_sentence_not_a_recursion_error(nested: str) -> None:
    with pytest.raises(SettingsError, match=r"^room file: .*nests values too deeply"):
        RoomSettings.from_toml(nested)


def test_lambda_environment_round_trip() -> None:
    original = room(fail_open=True)
    environment = original.to_lambda_environment()
    assert set(environment) == {ENVIRONMENT_VARIABLE}
    assert json.loads(environment[ENVIRONMENT_VARIABLE])["fail_open"] is True
    assert RoomSettings.from_lambda_environment(environment) == original
    with pytest.raises(SettingsError, match=ENVIRONMENT_VARIABLE):
        RoomSettings.from_lambda_environment({})


def test_replace_validates_again() -> None:
    settings = room()
    assert settings.replace(rate=5).rate == 5
    with pytest.raises(SettingsError):
        settings.replace(rate=-5)


def test_default_for_reports_the_model_defaults() -> None:
    assert default_for("admission_validity_minutes") == 60
    assert default_for("dynamic_rate_throttling") is False


def test_every_setting_is_described_once_by_its_field() -> None:
    fields = dataclasses.fields(RoomSettings)
    assert list(SETTINGS) == [f.name for f in fields]
    for f in fields:
        description = SETTINGS[f.name]
        assert description.help.endswith(".") and "\n" not in description.help
        assert description.flags[0] == "--" + f.name.replace("_", "-")
        if not description.required:
            # The kind is the annotation's; every default is a value of it (and allowed).
            assert type(description.default) is description.kind, f.name
            assert description.parse(description.default) == description.default
    assert [name for name, d in SETTINGS.items() if d.required] == [
        "name", "display_name", "region", "origin", "rate"
    ]  # fmt: skip
    assert SETTINGS["dynamic_rate_throttling"].flags == ("--dynamic-rate-throttling", "--drt")


def test_a_setting_parses_typed_text_with_the_models_own_sentences() -> None:
    assert SETTINGS["rate"].parse(" 1,200 ") == 1200
    assert SETTINGS["session_minutes"].parse("0.25") == 0.25
    assert SETTINGS["dynamic_rate_throttling"].parse("yes") is True
    assert SETTINGS["display_name"].parse("  Sale  ") == "Sale"
    for field_name, text in (("rate", "0"), ("max_inside", "-1"), ("claim_minutes", "61")):
        with pytest.raises(SettingsError) as typed:
            SETTINGS[field_name].parse(text)
        with pytest.raises(SettingsError) as constructed:
            room(**{field_name: int(text)})
        assert str(typed.value) == str(constructed.value)


def test_the_room_file_comments_each_setting_with_its_help() -> None:
    text = room().to_toml()
    for name, description in SETTINGS.items():
        assert f"# {description.help}\n{name} = " in text


CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"


def test_a_room_has_the_edge_s_per_address_rule_unless_it_turns_it_off() -> None:
    room = RoomSettings(**REQUIRED)
    assert room.waf_requests_per_5_minutes == DEFAULT_WAF_LIMIT
    assert room.replace(waf_requests_per_5_minutes=0).waf_requests_per_5_minutes == 0


def test_a_domain_is_kept_lower_case_with_or_without_its_certificate() -> None:
    room = RoomSettings(**REQUIRED, domain="Queue.Shop.Example")
    assert room.domain == "queue.shop.example"
    assert room.replace(certificate_arn=CERTIFICATE).certificate_arn == CERTIFICATE


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {
                "domain": "queue.shop.example",
                "certificate_arn": CERTIFICATE.replace("us-east-1", "eu-west-1"),
            },
            "CloudFront takes certificates from us-east-1 only",
        ),
        (
            {"domain": "queue.shop.example", "certificate_arn": "arn:aws:acm:oops"},
            "ACM certificate ARN",
        ),
        ({"certificate_arn": CERTIFICATE}, "set domain too"),
    ],
)
def test_a_certificate_the_edge_can_not_use_is_one_sentence(
    changes: dict[str, str], expected: str
) -> None:
    with pytest.raises(SettingsError) as refused:
        RoomSettings(**REQUIRED, **changes)
    assert expected in str(refused.value)
    assert refused.value.field_name == "certificate_arn"
