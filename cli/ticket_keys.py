"""The room's ticket keys, as `beekeeper keys` and `beekeeper deploy` handle them.

The rules (when a key is published, signs and retires) and the two stores belong to
`beekeeper.room.ticket_keys`; this module finds a room's stores from its deployment record
and turns the rules' refusals into sentences.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beekeeper.cli.errors import UserError
from beekeeper.cli.rooms import Deployment
from beekeeper.core.routes import MARKETING_LINK
from beekeeper.core.settings import RoomSettings
from beekeeper.core.tickets import issuer_of
from beekeeper.room import ticket_keys
from beekeeper.room.ticket_keys import Change, KeysChangedError, KeyTimingError, TicketKeyStore
from beekeeper.room.tickets import KeyRingError

ClientFor = Callable[[str], Any]  # service name -> a boto3 client for the room


def key_store(
    settings: RoomSettings, deployment: Deployment, client: ClientFor, clock: Callable[[], float]
) -> TicketKeyStore:
    secret = deployment.ticket_keys_secret
    if not secret:
        raise UserError(
            f"Room {settings.name!r} was deployed before admission tickets existed; run "
            f"`beekeeper deploy {settings.name}` to give it ticket keys."
        )
    return TicketKeyStore(
        secretsmanager=client("secretsmanager"),
        secret_id=secret,
        dynamodb=client("dynamodb"),
        table=deployment.table_name,
        clock=clock,
    )


def issuer(settings: RoomSettings, deployment: Deployment) -> str:
    try:
        return issuer_of(deployment.marketing_url or "")
    except ValueError as error:
        raise UserError(
            f"The deployment record of {settings.name!r} names no marketing URL ending in "
            f"{MARKETING_LINK.path}; run `beekeeper deploy {settings.name}` to write it again."
        ) from error


def change_keys(
    store: TicketKeyStore, settings: RoomSettings, plan: Callable[[ticket_keys.RoomKeys], Change]
) -> Change:
    """Read the room's keys, plan the change, write it; a refusal becomes one sentence."""
    try:
        before = store.read()
        change = plan(before)
        store.apply(before, change.keys)
    except KeyTimingError as error:
        raise UserError(f"Nothing changed: {error}.") from error
    except KeysChangedError as error:
        raise UserError(f"Nothing changed: {error}.") from error
    except KeyRingError as error:
        raise UserError(
            f"The ticket key secret of {settings.name!r} can not be read ({error}); it is "
            "written only by `beekeeper`: restore its last version in Secrets Manager, or "
            f"run `beekeeper destroy {settings.name}` and deploy it again."
        ) from error
    return change
