"""`beekeeper off NAME`: visitors go straight to the origin; no redeploy."""

from __future__ import annotations

import click

from beekeeper.cli.factory import factory_of
from beekeeper.cli.operate import switch
from beekeeper.cli.options import operator_command


@operator_command()
def off(ctx: click.Context, name: str, local: bool | None) -> None:
    """Switch the room NAME off: the marketing link goes straight to the origin."""
    switch(factory_of(ctx), name, enabled=False, local=local)
