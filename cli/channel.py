"""The room's push channel as the operator's commands use it: the publisher they tell waiting
pages with, and how long the pages' API key has left.

The CLI is one of the room's writers (room/push.py): `on`, `off`, `hold`, `resume`, `close`,
`rate`, `capacity` and `schedule` publish the change they make, signed with the operator's own
AWS credentials (which need `appsync:EventPublish` on the room's channel namespace, docs/stack.md)
or, for a local room, with the placeholder credentials its channel checks (local/channel.py).
A publish that fails is one warning line; the command itself has done its work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from beekeeper.cli.rooms import Deployment
from beekeeper.core import push
from beekeeper.core.local_room import PLACEHOLDER_CREDENTIALS
from beekeeper.core.settings import RoomSettings
from beekeeper.room.push import NO_PUBLISHER, AppSyncPublisher, Publisher, StatePush, state_push


def publish_url(deployment: Deployment) -> str | None:
    """Where the room's state is published: its Event API's HTTP endpoint (a local room's
    loopback channel, over plain HTTP); None for a room deployed before it had a channel."""
    domain = deployment.channel_http_domain
    if domain is None:
        return None
    scheme = "http" if deployment.is_local else "https"
    return f"{scheme}://{domain}{push.HTTP_PATH}"


def realtime_source(deployment: Deployment) -> str | None:
    """The push channel's real-time endpoint as a page's Content-Security-Policy names it
    (`wss://<Dns.Realtime>`, a local room's `ws://127.0.0.1:<port>`); None without a channel."""
    domain = deployment.channel_realtime_domain
    if domain is None:
        return None
    return f"{'ws' if deployment.is_local else 'wss'}://{domain}"


def publisher_for(
    settings: RoomSettings, deployment: Deployment, session: Callable[[], Any]
) -> Publisher:
    """The room's publisher, signing with the operator's credentials (`session()`: their boto3
    session), or a local room's placeholder ones."""
    url = publish_url(deployment)
    if url is None:
        return NO_PUBLISHER
    if deployment.is_local:
        from botocore.credentials import Credentials

        local = Credentials(
            PLACEHOLDER_CREDENTIALS["aws_access_key_id"],
            PLACEHOLDER_CREDENTIALS["aws_secret_access_key"],
        )
        return AppSyncPublisher(url=url, region=settings.region, credentials=lambda: local)
    return AppSyncPublisher(
        url=url, region=settings.region, credentials=lambda: session().get_credentials()
    )


def command_push(
    settings: RoomSettings, publisher: Publisher, sleep: Callable[[float], None]
) -> StatePush | None:
    """An operator command's publishing: it waits out the second since the room's last publish
    (core/push.py COALESCE_SECONDS), and says a failure in one line on stderr."""
    return state_push(
        settings,
        publisher,
        sleep=sleep,
        warn=lambda text: click.echo(f"Warning: {text}", err=True),
    )


def key_warning(settings: RoomSettings, deployment: Deployment, now: float) -> str | None:
    """A sentence when the pages' API key expires within core/push.py's KEY_WARN_DAYS (or has):
    after it, pages can not subscribe and follow the shared state alone."""
    text = deployment.channel_key_expires
    if not text or deployment.is_local:
        return None
    try:
        expires = int(text)
    except ValueError:
        return None
    days = push.key_days_left(expires, now)
    if days >= push.KEY_WARN_DAYS:
        return None
    redeploy = f"`beekeeper deploy {settings.name}` sets it a year ahead again"
    if days <= 0:
        return (
            f"The waiting pages' key to the push channel has expired: pages follow the shared "
            f"state alone, a change reaches them in up to 30 s instead of 2 s; {redeploy}."
        )
    return (
        f"The waiting pages' key to the push channel expires in {days:.0f} days; after that "
        "pages follow the shared state alone (a change reaches them in up to 30 s, not 2 s); "
        f"{redeploy}."
    )
