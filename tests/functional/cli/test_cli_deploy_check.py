"""The end of `beekeeper deploy`: the check offered, run with --check, skipped with --no-check,
and never run by --yes alone. The CDK CLI is the recorded double, AWS is moto; the deployed
room's address is a closed port on this machine, so a check that runs fails at its first
request to it, at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from beekeeper.cli.errors import EXIT_CHECK_FAILED
from beekeeper.cli.factory import CliFactory
from beekeeper.core.edge import WAF_REGION
from tests.support.cli_testkit import (
    REGION,
    Invoke,
    RecordedCdkRunner,
    aws_client,
    create_room_resources,
    room_settings,
    write_room,
)

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens


@pytest.fixture
def room(aws: None, config_dir: Path, cdk: RecordedCdkRunner) -> Path:
    outputs = create_room_resources(REGION, "sale")
    for key, path in (
        ("MarketingUrl", "beekeeper"),
        ("PageUrl", "room"),
        ("ClientCheckUrl", "client"),
    ):
        outputs[key] = f"{CLOSED}/{path}"
    cdk.outputs = {"beekeeper-sale": outputs}
    for region in (REGION, WAF_REGION):
        aws_client("ssm", region).put_parameter(
            Name="/cdk-bootstrap/hnb659fds/version", Value="27", Type="String"
        )
    return write_room(config_dir, room_settings("sale"))


def test_yes_alone_names_the_check_and_runs_none(invoke: Invoke, room: Path) -> None:
    result = invoke("deploy", "sale", "--yes")
    assert result.exit_code == 0, result.output
    assert "prove the room works end to end: `beekeeper check sale`" in result.stderr
    assert "Checking room" not in result.stdout


def test_no_check_skips_it_without_a_word(invoke: Invoke, room: Path) -> None:
    result = invoke("deploy", "sale", "--yes", "--no-check")
    assert result.exit_code == 0, result.output
    assert "beekeeper check" not in result.output


def test_check_runs_it_and_deploy_exits_as_the_check_does(invoke: Invoke, room: Path) -> None:
    result = invoke("deploy", "sale", "--yes", "--check")
    assert result.exit_code == EXIT_CHECK_FAILED, result.output
    assert "Room 'sale' is deployed." in result.stdout
    assert "Checking room 'sale' at http://127.0.0.1:9/ with 2 test visitors:" in result.stdout
    assert f"The check failed at 'marketing link': No answer from {CLOSED}/beekeeper" in (
        result.stdout
    )


def test_at_a_terminal_deploy_asks_and_a_no_runs_nothing(
    invoke: Invoke, room: Path, factory: CliFactory
) -> None:
    factory.stdin_is_terminal = lambda: True
    declined = invoke("deploy", "sale", input="n\n")
    assert declined.exit_code == 0, declined.output
    assert "Check room 'sale' now, with two test visitors? [Y/n]" in declined.stderr
    assert "Checking room" not in declined.stdout
    accepted = invoke("deploy", "sale", input="\n")  # the default: yes
    assert accepted.exit_code == EXIT_CHECK_FAILED, accepted.output
    assert "Checking room 'sale'" in accepted.stdout
