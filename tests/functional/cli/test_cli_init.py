"""`beekeeper init`: the settings' questions or their flags, validated with the model's
sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from beekeeper.core.join_work import DEFAULT_JOIN_WORK_MS
from beekeeper.core.settings import RoomSettings
from tests.support.cli_testkit import Invoke, room_settings, write_room


def load(config_dir: Path, name: str) -> RoomSettings:
    return RoomSettings.from_toml((config_dir / "rooms" / f"{name}.toml").read_text())


def test_questions_are_asked_again_until_the_answer_is_allowed(
    invoke: Invoke, config_dir: Path
) -> None:
    answers = [
        "Bad_Name",  # rejected
        "spring-sale",
        "",  # display name: take the suggestion
        "eu-west-1",
        "http://shop.example",  # rejected: plain http off loopback
        "https://shop.example/sale",
        "0",  # rejected
        "1,500",
        "y",
    ]
    result = invoke("init", input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "name: 'Bad_Name' is not allowed; use 1 to 32 characters" in result.output
    assert "origin: 'http://shop.example' is not allowed; use an https:// URL" in result.output
    assert "rate: 0 is not allowed; use a whole number from 1 to 300,000" in result.output
    settings = load(config_dir, "spring-sale")
    assert settings == RoomSettings(
        name="spring-sale",
        display_name="Spring sale",
        region="eu-west-1",
        origin="https://shop.example/sale",
        rate=1500,
        dynamic_rate_throttling=True,
    )
    assert "beekeeper deploy spring-sale" in result.output


def test_the_region_question_gives_an_example_and_an_empty_answer_a_sentence(
    invoke: Invoke, config_dir: Path, no_credentials: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("AWS_REGION", "AWS_DEFAULT_REGION"):  # no region to suggest
        monkeypatch.delenv(variable, raising=False)
    answers = ["spring-sale", "", "", "eu-west-1", "https://shop.example/sale", "60", "yes"]
    result = invoke("init", input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    # The question is the setting's own sentence, its example in it.
    assert result.output.count("AWS region the room is deployed to, e.g. us-east-1: ") == 2
    assert (
        "This question needs an answer (AWS region the room is deployed to, e.g. us-east-1)."
    ) in result.output
    assert load(config_dir, "spring-sale").region == "eu-west-1"


def test_a_typo_at_a_yes_or_no_question_gets_a_sentence(invoke: Invoke, config_dir: Path) -> None:
    answers = ["spring-sale", "", "eu-west-1", "https://shop.example/sale", "60", "yse", "n"]
    result = invoke("init", input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "Please answer y (yes) or n (no); Enter means no." in result.output
    assert "invalid input" not in result.output
    assert load(config_dir, "spring-sale").dynamic_rate_throttling is False


def test_every_question_is_a_flag_for_scripts(invoke: Invoke, config_dir: Path) -> None:
    result = invoke(
        "init", "--yes", "--name", "sale", "--display-name", "Big Sale", "--region",
        "ap-southeast-2", "--origin", "https://shop.example", "--rate", "300000", "--no-drt",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    settings = load(config_dir, "sale")
    assert (settings.display_name, settings.region, settings.rate) == (
        "Big Sale",
        "ap-southeast-2",
        300_000,
    )
    assert settings.dynamic_rate_throttling is False
    assert settings.admission_validity_minutes == 60  # the rest are defaults


def test_slow_ms_is_a_flag_only_and_checked_like_every_setting(
    invoke: Invoke, config_dir: Path
) -> None:
    flags = ("--yes", "--name", "sale", "--region", "eu-west-1", "--origin", "https://s.example")
    result = invoke("init", *flags, "--rate", "60", "--drt", "--slow-ms", "1,200")
    assert result.exit_code == 0, result.output
    settings = load(config_dir, "sale")
    assert (settings.slow_ms, settings.dynamic_rate_throttling) == (1200, True)
    assert "slow_ms = 1200\n" in (config_dir / "rooms" / "sale.toml").read_text()
    result = invoke("init", *flags, "--rate", "60", "--slow-ms", "5000", "--force")
    assert result.exit_code == 2
    assert "slow_ms: 5000 is not allowed; use a whole number from 1 to 4,000 milliseconds" in (
        result.output
    )
    assert load(config_dir, "sale").slow_ms == 1200  # nothing written


def test_join_work_is_a_flag_with_the_deployed_default(invoke: Invoke, config_dir: Path) -> None:
    flags = ("--yes", "--name", "sale", "--region", "eu-west-1", "--origin", "https://s.example")
    assert invoke("init", *flags, "--rate", "60").exit_code == 0
    assert load(config_dir, "sale").join_work == DEFAULT_JOIN_WORK_MS == 1_000
    assert "join_work = 1000\n" in (config_dir / "rooms" / "sale.toml").read_text()
    result = invoke("init", *flags, "--rate", "60", "--join-work", "0", "--force")
    assert result.exit_code == 0, result.output
    assert load(config_dir, "sale").join_work == 0  # no work: today's marketing link
    result = invoke("init", *flags, "--rate", "60", "--join-work", "10001", "--force")
    assert result.exit_code == 2
    assert (
        "join_work: 10001 is not allowed; use a whole number from 1 to 10,000 milliseconds, "
        "or 0 for no work"
    ) in result.output


def test_yes_fills_display_name_and_region_from_defaults(
    invoke: Invoke, config_dir: Path, environ: dict[str, str]
) -> None:
    environ["AWS_REGION"] = "us-west-2"
    result = invoke(
        "init", "--yes", "--name", "summer-drop", "--origin", "https://s.example", "--rate", "5"
    )
    assert result.exit_code == 0, result.output
    settings = load(config_dir, "summer-drop")
    assert (settings.display_name, settings.region) == ("Summer drop", "us-west-2")


def test_yes_names_every_missing_required_flag(invoke: Invoke, config_dir: Path) -> None:
    result = invoke("init", "--yes", "--name", "sale", "--region", "eu-west-1")
    assert result.exit_code == 2
    assert "--yes needs --origin URL, --rate N; give them as flags or drop --yes" in result.output
    assert not (config_dir / "rooms").exists()


def test_yes_without_a_name_is_a_usage_error(invoke: Invoke) -> None:
    result = invoke("init", "--yes", "--origin", "https://s.example", "--rate", "5")
    assert result.exit_code == 2
    assert "--yes needs --name" in result.output


def test_bad_flag_values_are_usage_errors_with_the_models_sentence(invoke: Invoke) -> None:
    cases = {
        ("--rate", "300001"): "rate: 300001 is not allowed; use a whole number from 1 to 300,000",
        ("--rate", "many"): "rate: 'many' is not allowed; use a whole number",
        ("--name", "Sale!"): "name: 'Sale!' is not allowed",
        ("--region", "Europe"): "region: 'Europe' is not allowed; use an AWS region code",
        ("--origin", "ftp://x.example"): "origin: 'ftp://x.example' is not allowed",
        ("--display-name", " "): "display_name: '' is not allowed",
    }
    for (flag, value), sentence in cases.items():
        result = invoke("init", "--yes", flag, value)
        assert result.exit_code == 2, (flag, value)
        assert sentence in result.output, result.output
        assert "Traceback" not in result.output


def test_an_existing_room_is_not_overwritten_without_force(
    invoke: Invoke, config_dir: Path
) -> None:
    path = write_room(config_dir, room_settings("sale", rate=600))
    before = path.read_text()
    result = invoke(
        "init", "--yes", "--name", "sale", "--origin", "https://o.example", "--rate", "9"
    )
    assert result.exit_code == 1
    assert "A room named 'sale' already exists" in result.output
    assert "--force" in result.output
    assert path.read_text() == before


def test_force_keeps_the_room_files_values_where_no_flag_is_given(
    invoke: Invoke, config_dir: Path
) -> None:
    write_room(config_dir, room_settings("sale", rate=600, accent_colour="#aa0000"))
    result = invoke("init", "--yes", "--force", "--name", "sale", "--rate", "900", "--drt")
    assert result.exit_code == 0, result.output
    settings = load(config_dir, "sale")
    assert settings.rate == 900  # the flag wins
    assert settings.dynamic_rate_throttling is True
    assert settings.origin == "https://shop.example/sale"  # then the room file
    assert settings.accent_colour == "#aa0000"  # unasked settings survive
    assert settings.arrival_shards == 4


def test_interactive_init_asks_again_for_a_name_already_taken(
    invoke: Invoke, config_dir: Path
) -> None:
    write_room(config_dir, room_settings("sale"))
    answers = ["sale", "sale-two", "", "eu-west-1", "https://o.example", "10", "n"]
    result = invoke("init", input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "A room named 'sale' already exists" in result.output
    assert load(config_dir, "sale-two").rate == 10
    assert load(config_dir, "sale").rate == 600


def test_several_rooms_live_side_by_side(invoke: Invoke, config_dir: Path) -> None:
    for name in ("alpha", "beta"):
        result = invoke(
            "init", "--yes", "--name", name, "--region", "eu-west-1",
            "--origin", f"https://{name}.example", "--rate", "10",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    assert load(config_dir, "alpha").origin == "https://alpha.example"
    assert load(config_dir, "beta").origin == "https://beta.example"


def test_alert_email_is_a_flag_and_kept_by_force(invoke: Invoke, config_dir: Path) -> None:
    result = invoke(
        "init", "--yes", "--name", "sale", "--region", "eu-west-1", "--origin",
        "https://shop.example", "--rate", "600", "--alert-email", "ops@shop.example",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert load(config_dir, "sale").alert_email == "ops@shop.example"
    text = (config_dir / "rooms" / "sale.toml").read_text()
    assert 'alert_email = "ops@shop.example"' in text
    assert "# Email address every alarm notifies" in text

    # --force without the flag keeps it; with the flag replaces it.
    assert invoke("init", "--yes", "--force", "--name", "sale", "--rate", "700").exit_code == 0
    assert load(config_dir, "sale").alert_email == "ops@shop.example"
    again = invoke("init", "--yes", "--force", "--name", "sale", "--alert-email", "b@c.example")
    assert again.exit_code == 0, again.output
    assert load(config_dir, "sale").alert_email == "b@c.example"


def test_a_bad_alert_email_is_a_usage_error(invoke: Invoke, config_dir: Path) -> None:
    result = invoke(
        "init", "--yes", "--name", "sale", "--region", "eu-west-1", "--origin",
        "https://shop.example", "--rate", "600", "--alert-email", "ops at shop",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "alert_email: 'ops at shop' is not allowed; use one email address" in result.output
    assert not (config_dir / "rooms" / "sale.toml").exists()


def test_a_domain_and_its_certificate_are_flags_checked_like_every_setting(
    invoke: Invoke, config_dir: Path
) -> None:
    flags = ("--yes", "--name", "sale", "--region", "eu-west-1", "--origin", "https://s.example")
    arn = "arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
    result = invoke(
        "init", *flags, "--rate", "60", "--domain", "Queue.Shop.Example", "--certificate-arn", arn
    )
    assert result.exit_code == 0, result.output
    settings = load(config_dir, "sale")
    assert (settings.domain, settings.certificate_arn) == ("queue.shop.example", arn)
    elsewhere = arn.replace("us-east-1", "eu-west-1")
    result = invoke(
        "init", *flags, "--rate", "60", "--domain", "q.s.example", "--certificate-arn", elsewhere,
        "--force",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "CloudFront takes certificates from us-east-1 only" in result.output
    assert load(config_dir, "sale").domain == "queue.shop.example"  # nothing written
