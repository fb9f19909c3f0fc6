"""`beekeeper destroy NAME`: remove the room's stack, then its files."""

from __future__ import annotations

import click

from beekeeper.cli.factory import factory_of
from beekeeper.cli.options import room_argument


@click.command()
@room_argument
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def destroy(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete the room NAME from AWS, with its queue and table, and forget it.

    It asks first (default no). A room that was never deployed is said to be so (exit 1), and
    nothing is deleted.
    """
    factory = factory_of(ctx)
    settings = factory.store().load(name)
    factory.deployer(assume_yes=yes).destroy(settings)
    click.echo(f"Room {name!r} is destroyed and forgotten.")
