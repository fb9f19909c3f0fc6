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
    """Delete the room NAME from AWS, with its queue and table, and forget it."""
    factory = factory_of(ctx)
    settings = factory.store().load(name)
    if not yes:
        click.confirm(
            f"Delete room {name!r} ({settings.stack_name} in {settings.region}) and every "
            "visitor waiting in it?",
            default=False,
            abort=True,
        )
    factory.deployer().destroy(settings)
    click.echo(f"Room {name!r} is destroyed and forgotten.")
