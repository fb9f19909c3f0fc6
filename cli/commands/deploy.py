"""`beekeeper deploy NAME`: deploy (or update) the room's stack with the AWS CDK CLI."""

from __future__ import annotations

import click

from beekeeper.cli.factory import factory_of
from beekeeper.cli.options import room_argument


@click.command(short_help="Deploy (or update) a room in AWS.")
@room_argument
@click.pass_context
def deploy(ctx: click.Context, name: str) -> None:
    """Deploy the room NAME to AWS (again after a failure: it picks up where it left off)."""
    factory = factory_of(ctx)
    settings = factory.store().load(name)
    deployment = factory.deployer().deploy(settings)
    click.echo(f"Room {name!r} is deployed.")
    click.echo(f"Marketing URL (link visitors here): {deployment.marketing_url}")
    click.echo(f"Client check URL (your shop asks it): {deployment.client_check_url}")
