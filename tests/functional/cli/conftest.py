"""Registers the CLI test fixtures (defined in tests/support/cli_testkit.py) for this folder."""

from tests.support.cli_testkit import (  # noqa: F401 - fixtures are found by name
    aws,
    cdk,
    channel,
    channel_account,
    clock,
    config_dir,
    deployed_room,
    dns,
    environ,
    factory,
    invoke,
    lambda_account,
    no_credentials,
    sleep,
    wheels,
)
