"""One CloudFormation stack per room: deployed at once, destroyed without leftovers."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from aws_cdk import CfnOutput, Environment, Stack, Tags
from constructs import Construct

from beekeeper.core import names
from beekeeper.core.push import key_expiry
from beekeeper.core.routes import CLIENT, JWKS, MARKETING_LINK, ROOM_PAGE
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import nag
from beekeeper.stacks.api import RoomApi
from beekeeper.stacks.channel import RoomChannel
from beekeeper.stacks.edge import RoomEdge, origin_secret
from beekeeper.stacks.edge_waf import EdgeWafStack
from beekeeper.stacks.functions import RoomFunctions
from beekeeper.stacks.monitoring import RoomMonitoring
from beekeeper.stacks.storage import RoomStorage


class RoomStack(Stack):
    def __init__(
        self,
        scope: Construct,
        *,
        settings: RoomSettings,
        api_logging: bool = True,
        edge_waf: EdgeWafStack | None = None,
        certificate_arn: str | None = None,
        channel_key_expires: int,
        **kwargs: Any,
    ) -> None:
        """`edge_waf`: the room's WAF stack in us-east-1 (None: the room has no per-address
        rule); `certificate_arn`: the domain's certificate when the settings name none
        (`beekeeper deploy` finds one); `channel_key_expires`: when the waiting pages' key to
        the push channel expires (epoch s; each deploy sets it a year ahead)."""
        kwargs.setdefault("env", Environment(region=settings.region))
        kwargs.setdefault("description", f"Beekeeper waiting room '{settings.name}'")
        super().__init__(
            scope,
            settings.stack_name,
            cross_region_references=edge_waf is not None,
            **kwargs,
        )
        self.settings = settings
        Tags.of(self).add("beekeeper:room", settings.name)

        storage = RoomStorage(self, "Storage", settings=settings)
        channel = RoomChannel(self, "Channel", settings=settings, key_expires=channel_key_expires)
        functions = RoomFunctions(
            self,
            "Functions",
            settings=settings,
            table=storage.table,
            queue=storage.queue,
            ticket_keys=storage.ticket_keys,
            join_secret=storage.join_secret,
            channel=channel,
        )
        api = RoomApi(
            self,
            "Api",
            settings=settings,
            table=storage.table,
            producer=functions.producer.function,
            logging_enabled=api_logging,
            origin_secret=origin_secret(),
            page_values=channel.page_values(),
        )
        edge = RoomEdge(
            self,
            "Edge",
            settings=settings,
            api=api.api,
            secret=origin_secret(),
            web_acl_arn=edge_waf.web_acl.attr_arn if edge_waf is not None else None,
            certificate_arn=settings.certificate_arn or certificate_arn,
        )
        # The room's public origin, its page's, which the producer checks a cookie's /leave
        # against (room/leaving.py): the room's own domain when it has one. The
        # distribution's cloudfront.net name can not be passed (the distribution is built from
        # the API whose methods invoke the producer: a cycle), so without a domain the
        # browser's Sec-Fetch-Site: same-origin is what tells the room's own page.
        room_origin = f"https://{settings.domain}" if settings.domain else ""
        functions.producer.function.add_environment(names.ROOM_ORIGIN_VARIABLE, room_origin)
        monitoring = RoomMonitoring(
            self,
            "Monitoring",
            settings=settings,
            table=storage.table,
            queue=storage.queue,
            dead_letter_queue=storage.dead_letter_queue,
            producer=functions.producer.function,
            consumer=functions.consumer.function,
            api=api.api,
        )

        acknowledgements = [*nag.PUBLIC_ROUTES, *nag.EDGE]
        if edge_waf is None:
            acknowledgements.append(nag.WAF_OFF)
        if not settings.domain:
            acknowledgements.append(nag.DEFAULT_CERTIFICATE)
        if not api_logging:
            acknowledgements.extend(nag.LOGGING_OFF)
        nag.acknowledge_in_stack(self, tuple(acknowledgements))

        # The keys docs/data-model.md promises the CLI ("Stack outputs").
        outputs = {
            names.MARKETING_URL_OUTPUT: edge.url_for(MARKETING_LINK.path),
            names.CLIENT_CHECK_URL_OUTPUT: edge.url_for(CLIENT.path),
            names.PAGE_URL_OUTPUT: edge.url_for(ROOM_PAGE.path),
            names.PUBLIC_URL_OUTPUT: edge.url_for(""),
            names.EDGE_DOMAIN_OUTPUT: edge.distribution.distribution_domain_name,
            names.DISTRIBUTION_ID_OUTPUT: edge.distribution.distribution_id,
            names.ORIGIN_URL_OUTPUT: api.stage.url_for_path("/"),
            names.TABLE_NAME_OUTPUT: storage.table.table_name,
            names.QUEUE_URL_OUTPUT: storage.queue.queue_url,
            names.DEAD_LETTER_QUEUE_URL_OUTPUT: storage.dead_letter_queue.queue_url,
            **{
                names.function_output(role): functions.by_role[role].function.function_name
                for role in names.FUNCTION_ROLES
            },
            names.DASHBOARD_NAME_OUTPUT: monitoring.dashboard.dashboard_name,
            names.JWKS_URL_OUTPUT: edge.url_for(JWKS.path),
            names.TICKET_KEYS_SECRET_OUTPUT: storage.ticket_keys.secret_arn,
            names.CHANNEL_HTTP_DOMAIN_OUTPUT: channel.http_domain,
            names.CHANNEL_REALTIME_DOMAIN_OUTPUT: channel.realtime_domain,
            names.CHANNEL_API_ARN_OUTPUT: channel.api.attr_api_arn,
            names.CHANNEL_KEY_EXPIRES_OUTPUT: str(channel.key_expires),
        }
        for key, value in outputs.items():
            CfnOutput(self, key, value=value)


@dataclass(frozen=True)
class RoomStacks:
    """A room's stacks: the room itself, and its edge WAF in us-east-1 when it has one."""

    room: RoomStack
    edge_waf: EdgeWafStack | None


def build_room(
    app: Construct,
    settings: RoomSettings,
    *,
    api_logging: bool = True,
    certificate_arn: str | None = None,
    channel_key_expires: int | None = None,
) -> RoomStacks:
    """Every stack of a room, as `beekeeper deploy` deploys them (stacks/app.py) and the stack
    tests synthesize them. `channel_key_expires` defaults to a year from now (core/push.py
    key_expiry): `beekeeper deploy` passes the one it computed."""
    edge_waf = EdgeWafStack(app, settings=settings) if settings.waf_requests_per_5_minutes else None
    room = RoomStack(
        app,
        settings=settings,
        api_logging=api_logging,
        edge_waf=edge_waf,
        certificate_arn=certificate_arn,
        channel_key_expires=(
            channel_key_expires if channel_key_expires is not None else key_expiry(time.time())
        ),
    )
    return RoomStacks(room, edge_waf)
