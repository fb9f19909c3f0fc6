"""The room's real code, bound for a local room: the one place local mode names the modules.

Local mode runs exactly what AWS runs: the producer, trigger, consumer and governor of
`beekeeper.lambdas`, the templated routes through API Gateway's emulation
(`beekeeper.apigateway.runtime`), and the waiting room page of `beekeeper.waiting_room_site`.
`RoomCode` is the interface the gateway and the scheduler use; `load_room_code` fills it with
those modules' plain functions, bound to the room's settings and to clients of the emulator by
injection, as the simulator binds them. (In AWS the handlers bind the same functions to their
environment, which the stack sets.) Nothing travels through the process environment, so rooms
in one process stay apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from beekeeper.apigateway.dynamodb import DynamoDbTarget
from beekeeper.apigateway.http import HttpRequest, HttpResponse
from beekeeper.apigateway.model import Method, RestApi
from beekeeper.core.settings import MIN_CONSUMER_CAPACITY, RoomSettings
from beekeeper.lambdas.pacing import MINUTE_SECONDS
from beekeeper.local.emulator import RoomResources

Payload = Mapping[str, Any]
InvokeConsumer = Callable[[Payload], None]
# service name ("dynamodb", "sqs") -> a boto3 client of the room's emulator
ClientFactory = Callable[[str], Any]


class IntegrationRunner(Protocol):
    """`beekeeper.apigateway.runtime.invoke`'s shape."""

    def __call__(
        self,
        api: RestApi,
        method: Method,
        request: HttpRequest,
        *,
        request_time_ms: int,
        dynamodb: DynamoDbTarget | None = None,
        request_id: str = "local",
    ) -> HttpResponse: ...


@dataclass(frozen=True)
class RoomCode:
    # The producer Lambda's handler, called with a REST proxy event.
    producer: Callable[[dict[str, Any], Any], Mapping[str, Any]]
    # One scheduled delivery of the trigger; consumers are started through invoke_consumer.
    trigger: Callable[[InvokeConsumer], Any]
    # One consumer invocation with the payload the trigger planned.
    consumer: Callable[[Payload], Any]
    # One scheduled run of the governor (only used with dynamic rate throttling).
    governor: Callable[[], Any]
    # One request to a method of the room's API (an AWS or MOCK integration), answered as API
    # Gateway answers it (beekeeper.apigateway.runtime.invoke).
    integration: IntegrationRunner
    page: Callable[[RoomSettings], str]
    # Hands the producer the scheduler's way of starting a consumer (Lambda's async invoke in
    # AWS), so a visitor who joins a quiet minute wakes one; until then nobody is woken.
    connect_consumers: Callable[[InvokeConsumer], None] = lambda _invoke: None


class _ConsumerStarter:
    """The producer's `invoke_consumer`, connected once the scheduler exists."""

    def __init__(self) -> None:
        self.invoke: InvokeConsumer | None = None

    def __call__(self, payload: Payload) -> None:
        if self.invoke is None:
            raise RuntimeError("the local room's scheduler has not started yet")
        self.invoke(dict(payload))

    def connect(self, invoke: InvokeConsumer) -> None:
        self.invoke = invoke


def load_room_code(
    settings: RoomSettings,
    resources: RoomResources,
    client: ClientFactory,
    *,
    minute_seconds: float,
) -> RoomCode:
    """The real modules' functions, bound to this room's settings, resources and clients."""
    # Imported here: the room code (and the Velocity engine) load when a room starts.
    from beekeeper.apigateway.runtime import invoke
    from beekeeper.lambdas.consumer import run_consumer
    from beekeeper.lambdas.governor import fetch_once, run_governor
    from beekeeper.lambdas.producer import Producer
    from beekeeper.lambdas.tickets import NO_TICKETS, TicketHook, TicketIssuer, secret_reader
    from beekeeper.lambdas.trigger import run_trigger
    from beekeeper.waiting_room_site import render_page

    # One client per service, shared by the room's threads, as one per container in AWS.
    dynamodb, sqs = client("dynamodb"), client("sqs")
    table, queue_url = resources.table_name, resources.queue_url
    starter = _ConsumerStarter()
    # One issuer for the room's consumers, as one per container in AWS: the key ring is read
    # once a minute, not once per consumer run.
    tickets: TicketHook = NO_TICKETS
    if resources.ticket_keys_secret:
        tickets = TicketIssuer(
            read_ring=secret_reader(client("secretsmanager"), resources.ticket_keys_secret),
            settings=settings,
            clock=time.time,
        )
    producer = Producer(
        settings=settings,
        table=table,
        queue_url=queue_url,
        dynamodb=dynamodb,
        sqs=sqs,
        invoke_consumer=starter,
        minute_seconds=minute_seconds,
    )

    # A shortened minute asks each consumer for its minute's work in less time: the trigger
    # plans consumers for the same real-time pace per consumer as a minute in AWS does.
    planning = settings.replace(
        consumer_capacity=max(
            MIN_CONSUMER_CAPACITY,
            round(settings.consumer_capacity * minute_seconds / MINUTE_SECONDS),
        )
    )

    def run_trigger_once(invoke_consumer: InvokeConsumer) -> Any:
        return run_trigger(
            settings=planning,
            table=table,
            queue_url=queue_url,
            dynamodb=dynamodb,
            sqs=sqs,
            invoke_consumer=lambda payload: invoke_consumer(dict(payload)),
            clock=time.time,
            minute_seconds=minute_seconds,
        )

    def run_consumer_once(payload: Payload) -> Any:
        # The payload is JSON in AWS's async invoke: the consumer gets a copy, as it would.
        return run_consumer(
            dict(payload),
            settings=settings,
            table=table,
            queue_url=queue_url,
            dynamodb=dynamodb,
            sqs=sqs,
            clock=time.time,
            sleep=time.sleep,
            tickets=tickets,
        )

    # The governor's minute is shortened with the scheduler's, as the trigger's is.
    def run_governor_once() -> Any:
        if not settings.dynamic_rate_throttling:
            return "disabled"
        return run_governor(
            settings=settings,
            table=table,
            dynamodb=dynamodb,
            fetch=fetch_once,
            clock=time.time,
            sleep=time.sleep,
            minute_seconds=minute_seconds,
        )

    return RoomCode(
        producer=lambda event, _context: producer.handle(event),
        trigger=run_trigger_once,
        consumer=run_consumer_once,
        governor=run_governor_once,
        integration=invoke,
        # The page extrapolates the line on the room's (perhaps shortened) minute.
        page=lambda settings: render_page(settings, minute_seconds=minute_seconds),
        connect_consumers=starter.connect,
    )
