"""`beekeeper rate NAME N`: change the admission rate live."""

from __future__ import annotations

import click

from beekeeper.cli.factory import factory_of
from beekeeper.cli.operate import room_control
from beekeeper.cli.options import SettingType, room_argument


@click.command(short_help="Set visitors let through per minute, live.")
@room_argument
@click.argument("rate", type=SettingType("rate"), metavar="N")
@click.pass_context
def rate(ctx: click.Context, name: str, rate: int) -> None:
    """Let N visitors per minute through room NAME (1 to 300,000), from the next minute.

    The governor starts over from the new rate and waiting visitors' estimates change on their
    next poll. The room file keeps the rate it was deployed with.
    """
    config = room_control(factory_of(ctx), name).set_rate(rate)
    click.echo(f"Room {name!r} now lets {config.rate:,} visitors per minute through.")
