"""Registers the CLI test fixtures (defined in tests/support/cli_testkit.py) for this folder."""

from tests.support.cli_testkit import (  # noqa: F401 - fixtures are found by name
    aws,
    cdk,
    clock,
    config_dir,
    deployed_room,
    environ,
    factory,
    invoke,
    no_credentials,
    sleep,
)
