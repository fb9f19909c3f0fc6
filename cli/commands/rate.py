"""`beekeeper rate NAME N`: change the admission rate live."""

from __future__ import annotations

import click

from beekeeper.cli.factory import factory_of
from beekeeper.cli.operate import room_control
from beekeeper.cli.options import SettingCommand, operator_command, setting_argument
from beekeeper.core.words import count


@operator_command(setting_argument("rate"), cls=SettingCommand)
def rate(ctx: click.Context, name: str, rate: int, local: bool | None) -> None:
    """Let N visitors per minute through room NAME (1 to 300,000), from the next minute.

    The governor starts over from the new rate and waiting visitors' estimates change on their
    next poll. The room file keeps the rate it was deployed with.
    """
    from beekeeper.stacks.capacity import consumer_reserved_concurrency

    factory = factory_of(ctx)
    control = room_control(factory, name, local)
    config = control.set_rate(rate)
    click.echo(f"Room {name!r} now lets {count(config.rate, 'visitor')} per minute through.")
    deployed = control.settings
    # The stack reserved consumer concurrency for the deployed rate; past it Lambda throttles
    # the extra consumers, so fewer are admitted than asked (nobody is lost).
    ceiling = consumer_reserved_concurrency(deployed) * deployed.consumer_capacity
    # A local room has no reserved concurrency: its consumers are threads.
    if rate > ceiling and not factory.store().operated(name, local)[1].is_local:
        click.echo(
            f"Warning: room {name!r} was deployed for {deployed.rate:,} per minute and can admit "
            f"at most about {ceiling:,} per minute until it is redeployed: set rate = {rate} in "
            f"its room file and run `beekeeper deploy {name}`.",
            err=True,
        )
