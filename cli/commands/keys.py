"""`beekeeper keys rotate|retire NAME`: the keys that sign a room's admission tickets."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from beekeeper.cli.factory import factory_of
from beekeeper.cli.options import room_argument, where_option

if TYPE_CHECKING:  # the keys' code (cryptography, botocore) is imported when it runs
    from beekeeper.cli.rooms import Deployment
    from beekeeper.core.settings import RoomSettings
    from beekeeper.room.ticket_keys import TicketKeyStore


@click.group()
def keys() -> None:
    """The keys that sign a room's admission tickets (docs/shop-integration.md).

    Shops verify tickets with the public keys at the room's /jwks.json, which they may cache
    for 5 minutes; the timing below keeps every ticket verifiable through a rotation.
    """


@keys.command(short_help="Publish a new key; it signs 5 minutes later.")
@room_argument
@where_option
@click.pass_context
def rotate(ctx: click.Context, name: str, local: bool | None) -> None:
    """Make a new key for room NAME and publish it at once. It starts signing tickets 5
    minutes later (the JWKS cache lifetime), and the key it replaces stays published until the
    last ticket it signed has expired; then it retires by itself.
    """
    from beekeeper.cli.ticket_keys import change_keys, issuer
    from beekeeper.room import ticket_keys

    factory = factory_of(ctx)
    store_, settings, deployment = _open(ctx, name, local)
    change = change_keys(
        store_,
        settings,
        lambda before: ticket_keys.rotate(
            before,
            issuer=issuer(settings, deployment),
            now=int(factory.clock()),
            ticket_lifetime_seconds=settings.admission_validity_seconds,
        ),
    )
    click.echo(f"Room {name!r}: {change.summary}.")


@keys.command(short_help="Remove keys whose tickets have all expired.")
@room_argument
@click.option(
    "--force",
    is_flag=True,
    help="Also retire a replaced key whose tickets have not expired yet (a leaked key): shops "
    "then refuse those tickets.",
)
@where_option
@click.pass_context
def retire(ctx: click.Context, name: str, force: bool, local: bool | None) -> None:
    """Delete the replaced keys of room NAME whose tickets have all expired, private and public
    halves. Such keys already stopped being published by themselves; this removes them.
    """
    from beekeeper.cli.ticket_keys import change_keys
    from beekeeper.room import ticket_keys

    factory = factory_of(ctx)
    store_, settings, _deployment = _open(ctx, name, local)
    change = change_keys(
        store_,
        settings,
        lambda before: ticket_keys.retire(before, now=int(factory.clock()), force=force),
    )
    click.echo(f"Room {name!r}: {change.summary}.")


def _open(
    ctx: click.Context, name: str, local: bool | None
) -> tuple[TicketKeyStore, RoomSettings, Deployment]:
    """The room's keys: the deployed room's, or those of the room running on this machine
    (`beekeeper local`), reached through its endpoint as `off|on|rate|status` reach it."""
    from beekeeper.cli.ticket_keys import key_store

    factory = factory_of(ctx)
    settings, deployment = factory.store().operated(name, local)

    def client(service: str) -> object:
        return factory.client(service, settings, deployment)

    return key_store(settings, deployment, client, factory.clock), settings, deployment
