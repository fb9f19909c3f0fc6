"""`beekeeper on NAME`: the waiting room is back in front of the origin; no redeploy."""

from __future__ import annotations

import click

from beekeeper.cli.factory import factory_of
from beekeeper.cli.operate import switch
from beekeeper.cli.options import operator_command


@operator_command()
def on(ctx: click.Context, name: str, local: bool | None) -> None:
    """Switch the room NAME on: new visitors wait in line again."""
    switch(factory_of(ctx), name, enabled=True, local=local)
