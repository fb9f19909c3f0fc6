"""What `off`, `on` and `rate` share: the room's live controls, from its deployment record."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from beekeeper.cli.factory import CliFactory
from beekeeper.core.datamodel import CONFIG_IN_EFFECT_SECONDS

if TYPE_CHECKING:  # the room's items are imported when a switch runs, not for --help
    from beekeeper.cli.room_control import RoomControl
    from beekeeper.room.room_state import RoomConfig


def room_control(factory: CliFactory, name: str, local: bool | None = None) -> RoomControl:
    from beekeeper.cli.channel import command_push
    from beekeeper.cli.room_control import RoomControl

    settings, deployment = factory.store().operated(name, local)
    return RoomControl(
        factory.client("dynamodb", settings, deployment),
        deployment.table_name,
        settings,
        clock=factory.clock,
        pauses=factory.pauses,
        minute_seconds=deployment.minute_seconds,
        # Waiting pages are told of the change on the room's channel (cli/channel.py).
        push=command_push(settings, factory.publisher(settings, deployment), factory.sleep),
    )


def switch(factory: CliFactory, name: str, enabled: bool, local: bool | None = None) -> RoomConfig:
    config = room_control(factory, name, local).set_enabled(enabled)
    if enabled:
        click.echo(f"Room {name!r} is ON: new visitors queue at {config.rate:,} per minute.")
    else:
        click.echo(
            f"Room {name!r} is OFF: it lets everyone in line and every new visitor into the "
            f"shop, each with a ticket (within about {CONFIG_IN_EFFECT_SECONDS:g} seconds). "
            "`beekeeper on` brings the line back."
        )
    return config
