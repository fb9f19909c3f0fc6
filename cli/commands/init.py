"""`beekeeper init`: create a room file from its questions or flags (cli/init_wizard.py)."""

from __future__ import annotations

from typing import Any

import click

from beekeeper.cli.commands.schedule import starts_at_epoch
from beekeeper.cli.factory import factory_of
from beekeeper.cli.init_wizard import QUESTIONS, RoomWizard
from beekeeper.cli.options import options_in_order, setting_option
from beekeeper.core.settings import SETTINGS, default_for

# Every other setting is a flag too, taken as it is.
NOT_ASKED = tuple(name for name in SETTINGS if name not in {q.name for q in QUESTIONS})


def _shown(default: Any) -> str:
    return f"{default:g}" if isinstance(default, float) else str(default) or "empty"


_SETTING_OPTIONS = options_in_order(
    *(setting_option(q.name, note="Asked when left out.") for q in QUESTIONS),
    *(
        setting_option(name, note=f"Not asked; default: {_shown(default_for(name))}.")
        for name in NOT_ASKED
    ),
)


@click.command()
@_SETTING_OPTIONS
@click.option("--yes", "-y", is_flag=True, help="Ask nothing; take flags and defaults.")
@click.option("--force", is_flag=True, help="Overwrite an existing room of the same name.")
@click.pass_context
def init(ctx: click.Context, yes: bool, force: bool, **flags: Any) -> None:
    """Create a room: answer its questions (or give them as flags with --yes).

    Writes the room file under the config directory; `beekeeper deploy NAME` deploys it.
    --alert-email is not asked: without it the room's alarms notify nobody. Nor are the
    capacity settings: without --max-inside the room admits by rate alone.
    """
    factory = factory_of(ctx)
    if flags.get("starts_at"):
        starts_at_epoch(flags["starts_at"], factory.clock())  # ahead, at most a year
    wizard = RoomWizard(factory.store(), default_region=_region_or_none(factory))
    path = wizard.create(flags, interactive=not yes, force=force)
    name = path.name.removesuffix(".toml")
    click.echo(f"Saved room {name!r} to {path}.")
    click.echo(f"Next: `beekeeper deploy {name}` (or rehearse it first: `beekeeper local {name}`).")


def _region_or_none(factory: Any) -> str | None:
    try:
        return factory.default_region()
    except Exception:  # a broken AWS profile only costs the suggestion
        return None
