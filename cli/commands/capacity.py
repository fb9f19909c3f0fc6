"""`beekeeper capacity NAME N`: change how many visitors may be inside the shop at once, live."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import factory_of
from beekeeper.cli.operate import room_control
from beekeeper.cli.options import SettingCommand, operator_command, setting_argument
from beekeeper.core.settings import Mode, capped
from beekeeper.core.words import count

if TYPE_CHECKING:
    from beekeeper.cli.rooms import RoomStore


@operator_command(setting_argument("max_inside"), cls=SettingCommand)
def capacity(ctx: click.Context, name: str, max_inside: int, local: bool | None) -> None:
    """Let at most N visitors be inside the shop of room NAME at once (0: no cap), within
    seconds.

    Only a room deployed in capacity mode (max_inside in its room file) counts who is inside.
    Lowering N lets nobody new in until enough visitors leave; nobody inside is sent out. The
    room file keeps the cap it was deployed with.
    """
    factory = factory_of(ctx)
    control = room_control(factory, name, local)
    if control.settings.mode is not Mode.CAPACITY:
        suggested = max_inside if capped(max_inside) else 500
        raise UserError(without_a_cap(factory.store(), name, local, suggested))
    config = control.set_capacity(max_inside)
    if capped(config.max_inside):
        most = count(config.max_inside, "visitor")
        click.echo(f"Room {name!r} now lets at most {most} inside at once.")
    else:
        click.echo(f"Room {name!r} now lets visitors in by its rate alone (no cap).")


def without_a_cap(store: RoomStore, name: str, local: bool | None, cap: int) -> str:
    """How to give a room without a cap one: a local room is started again with it, a room in
    AWS is deployed again."""
    if store.operated(name, local)[1].is_local:
        start = store.local_start_command(name)
        return (
            f"Room {name!r} runs on this machine without a cap, so it does not count who is "
            f"inside. Stop it (Ctrl-C) and start it again with --max-inside {cap} added to its "
            f"command: `{start} --max-inside {cap}`."
        )
    return (
        f"Room {name!r} was deployed without a cap, so it does not count who is inside. "
        f"Set max_inside = {cap} in its room file and run `beekeeper deploy {name}` (or "
        f"`beekeeper local {name} --max-inside {cap}` to rehearse)."
    )
