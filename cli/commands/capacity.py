"""`beekeeper capacity NAME N`: change how many visitors may be inside the shop at once, live."""

from __future__ import annotations

import click

from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import factory_of
from beekeeper.cli.operate import room_control
from beekeeper.cli.options import SettingCommand, operator_command, setting_argument
from beekeeper.core.words import count


@operator_command(setting_argument("max_inside"), cls=SettingCommand)
def capacity(ctx: click.Context, name: str, max_inside: int, local: bool | None) -> None:
    """Let at most N visitors be inside the shop of room NAME at once (0: no cap), within
    seconds.

    Only a room deployed in capacity mode (max_inside in its room file) counts who is inside.
    Lowering N lets nobody new in until enough visitors leave; nobody inside is sent out. The
    room file keeps the cap it was deployed with.
    """
    control = room_control(factory_of(ctx), name, local)
    if not control.settings.max_inside:
        raise UserError(
            f"Room {name!r} was deployed without a cap, so it does not count who is inside. "
            f"Set max_inside = {max_inside or 500} in its room file and run "
            f"`beekeeper deploy {name}` (or `beekeeper local --max-inside N` to rehearse)."
        )
    config = control.set_capacity(max_inside)
    if config.max_inside:
        most = count(config.max_inside, "visitor")
        click.echo(f"Room {name!r} now lets at most {most} inside at once.")
    else:
        click.echo(f"Room {name!r} now lets visitors in by its rate alone (no cap).")
