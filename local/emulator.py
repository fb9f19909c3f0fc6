"""The AWS services behind a local room: the room's store, in this process.

It holds the room's real queue (with its dead-letter queue), table, ticket keys' and join secrets,
and the CloudWatch metrics its functions write (as EMF lines, extracted as CloudWatch Logs
extracts them), with the settings and under the names the stack deploys (`core/datamodel.py`,
`core/names.py`), in the in-memory store the simulator uses too (store/). The room's own code
reaches it through real boto3 clients answered in process (`StoreTransport`), the templates
through their rendered requests (`TemplateTarget`), and the operator CLI, from another
process, through the loopback endpoint (`OperatorEndpoint`) recorded as the room's
`EndpointUrl`.

Each room has its own store: rooms in one process share nothing.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from beekeeper.core import datamodel
from beekeeper.core.local_room import LOCAL_ACCOUNT, LOCAL_REGION
from beekeeper.core.names import ResourceNames
from beekeeper.core.push import PageChannel
from beekeeper.core.tickets import EMPTY_KEY_RING
from beekeeper.local.http_server import ServerThread
from beekeeper.local.operator_endpoint import OperatorEndpoint
from beekeeper.local.store_transport import StoreTransport
from beekeeper.store.cloudwatch import CloudWatch
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.secretsmanager import SecretsManager
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from beekeeper.store.wire import JsonProtocol, TemplateTarget

# The account id in the room's queue URLs and ARNs (a local room has no AWS account).


@dataclass(frozen=True)
class RoomResources:
    table_name: str
    queue_url: str
    dead_letter_queue_url: str
    ticket_keys_secret: str = ""  # the secret's ARN; "" for a room without ticket keys
    join_secret: str = ""  # the join secret's ARN (core/join_work.py); "" for none
    # The room's public origin, its page's (http://127.0.0.1:PORT): what the stack gives the
    # producer as ROOM_ORIGIN; set once the gateway's port is bound.
    room_origin: str = ""
    # The room's push channel (local/channel.py): where pages subscribe, and the host its
    # writers publish to; set once its ports are bound (None: the room has none).
    channel: PageChannel | None = None


class Emulator:
    """The room's store, its in-process boto3 clients and the operator CLI's endpoint."""

    def __init__(self, port: int = 0) -> None:
        timing = RealTime()
        self.dynamodb = DynamoDb(timing)
        self.sqs = Sqs(timing)
        self.secretsmanager = SecretsManager(timing, region=LOCAL_REGION, account=LOCAL_ACCOUNT)
        self.cloudwatch = CloudWatch(timing)
        self._protocol = JsonProtocol(
            self.dynamodb, self.sqs, self.secretsmanager, cloudwatch=self.cloudwatch
        )
        secret = secrets.token_urlsafe(24)
        self._endpoint = OperatorEndpoint(self._protocol, secret)
        self._server = ServerThread(self._endpoint, port=port, threads=4, what="operator endpoint")
        self._endpoint.port = self._server.port
        self.endpoint_url = f"{self._server.base_url}/{secret}"
        self.transport = StoreTransport(self._protocol, self.endpoint_url)

    def start(self) -> str:
        self._server.start()
        return self.endpoint_url

    def stop(self) -> None:
        self._server.stop()

    def client(self, service: str) -> Any:
        """A boto3 client of the room's store, answered in this process."""
        return self.transport.client(service)

    def template_target(self) -> TemplateTarget:
        """The /polling, /client and /jwks.json templates' DynamoDB."""
        return TemplateTarget(self.dynamodb)

    def create_room_resources(self, room_name: str) -> RoomResources:
        """The room's table, queues and ticket keys' secret, named and set up as the stack
        deploys them."""
        names = ResourceNames(room_name)
        self.dynamodb.create_table_as_defined(datamodel.table_definition(names.table))
        dead_letters = self.sqs.create_queue(
            names.dead_letter_queue,
            self.queue_url(names.dead_letter_queue),
            region=LOCAL_REGION,
        )
        queue = self.sqs.create_queue(
            names.queue,
            self.queue_url(names.queue),
            visibility_timeout=datamodel.QUEUE_VISIBILITY_TIMEOUT_SECONDS,
            max_receives=datamodel.QUEUE_MAX_RECEIVE_COUNT,
            dead_letter=dead_letters,
            region=LOCAL_REGION,
        )
        # The ticket keys' secret starts without keys, as the stack's does (`beekeeper local`
        # gives the room its first, `beekeeper keys` rotates them).
        secret = self.secretsmanager.create(names.local_ticket_keys_secret, EMPTY_KEY_RING)
        # The join secret is generated when the room is created, as Secrets Manager generates
        # the stack's (a saved line restores the one it was signed with).
        join = self.secretsmanager.create(names.local_join_secret, secrets.token_urlsafe(48))
        return RoomResources(names.table, queue.url, dead_letters.url, secret.arn, join.arn)

    def queue_url(self, queue_name: str) -> str:
        return f"{self.endpoint_url}/{LOCAL_ACCOUNT}/{queue_name}"
