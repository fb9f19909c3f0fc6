"""The room's real code, bound for a local room: the one place local mode names the modules.

Local mode runs exactly what AWS runs: the room of `beekeeper.room`, assembled as the
Lambda handlers assemble it (room/assembly.py), the templated routes through API Gateway's emulation
(`beekeeper.apigateway.runtime`), and the waiting room page of `beekeeper.waiting_room_site`.
`RoomCode` is the interface the gateway and the scheduler use; `load_room_code` fills it with
those modules' plain functions, bound to the room's settings and to clients of the emulator by
injection, as the simulator binds them. (In AWS the handlers bind the same functions to their
environment, which the stack sets.) Nothing travels through the process environment, so rooms
in one process stay apart.

The functions write the room's metrics as in Lambda (room/emf.py), one sink per run and
one for the producer (the room's one producer "container"), in the room's own minutes; each
line goes to the emulator's CloudWatch as CloudWatch Logs would put it there, so
`beekeeper report` reads a local room as it reads a deployed one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from beekeeper.apigateway.dynamodb import DynamoDbTarget
from beekeeper.apigateway.http import HttpRequest, HttpResponse
from beekeeper.apigateway.model import Method, RestApi
from beekeeper.core import push
from beekeeper.core.local_room import LOCAL_REGION
from beekeeper.core.settings import MIN_CONSUMER_CAPACITY, RoomSettings
from beekeeper.local.emulator import RoomResources
from beekeeper.room.emf import MetricSink, MinuteMetrics
from beekeeper.room.pacing import MINUTE_SECONDS
from beekeeper.room.push import NO_PUBLISHER, AppSyncPublisher, Publisher
from beekeeper.room.wiring import RoomWiring

log = logging.getLogger("beekeeper.local")

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


class _Metrics:
    """The room's metric lines into the emulator's CloudWatch, as CloudWatch Logs extracts a
    function's EMF lines; a line that can not be stored is logged, never raised (metrics never
    stop an admission)."""

    def __init__(self, room: str, cloudwatch: Any, minute_seconds: float) -> None:
        self._room = room
        self._cloudwatch = cloudwatch
        self._minute_seconds = minute_seconds

    def write(self, line: str) -> None:
        from beekeeper.store.cloudwatch import metric_data_from_emf

        try:
            for namespace, data in metric_data_from_emf(line):
                self._cloudwatch.put_metric_data(Namespace=namespace, MetricData=data)
        except Exception as error:
            log.warning("a metric line was not stored: %s", error)

    def sink(self) -> MinuteMetrics:
        return MinuteMetrics(
            self._room, clock=time.time, write=self.write, minute_seconds=self._minute_seconds
        )

    @contextmanager
    def run(self) -> Iterator[MinuteMetrics]:
        """One run's sink (the trigger's, a consumer's, the governor's), written as the run
        ends, as the handler does."""
        sink = self.sink()
        try:
            yield sink
        finally:
            sink.flush()


class _Shared:
    """One sink for the room's producer, whose requests come on many threads."""

    def __init__(self, sink: MetricSink) -> None:
        self._sink = sink
        self._lock = threading.Lock()

    def count(self, metric: Any, value: int = 1) -> None:
        with self._lock:
            self._sink.count(metric, value)

    def level(self, metric: Any, value: float) -> None:
        with self._lock:
            self._sink.level(metric, value)

    def sample(self, metric: Any, value: float) -> None:
        with self._lock:
            self._sink.sample(metric, value)

    def flush_ended(self) -> None:
        with self._lock:
            self._sink.flush_ended()

    def flush(self) -> None:
        with self._lock:
            self._sink.flush()


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
    """The room (room/assembly.py), bound to this room's settings, resources and clients."""
    # Imported here: the room code (and the Velocity engine) load when a room starts.
    from beekeeper.apigateway.runtime import invoke
    from beekeeper.room.assembly import Effects, assemble
    from beekeeper.room.tickets import secret_reader
    from beekeeper.waiting_room_site import render_page

    # One client per service, shared by the room's threads, as one per container in AWS.
    wiring = RoomWiring(
        settings=settings,
        table=resources.table_name,
        queue_url=resources.queue_url,
        dynamodb=client("dynamodb"),
        sqs=client("sqs"),
    )
    metrics = _Metrics(settings.name, client("cloudwatch"), minute_seconds)
    starter = _ConsumerStarter()
    secrets = client("secretsmanager")
    room = assemble(
        wiring,
        Effects(
            clock=time.time,
            sleep=time.sleep,
            invoke_consumer=starter,
            read_join_secret=secret_reader(secrets, resources.join_secret),
            # One issuer for the room's consumers, as one per container in AWS.
            read_ticket_keys=(
                secret_reader(secrets, resources.ticket_keys_secret)
                if resources.ticket_keys_secret
                else None
            ),
            producer_metrics=_Shared(metrics.sink()),
            room_origin=resources.room_origin,
            minute_seconds=minute_seconds,
            publisher=_publisher(resources),
        ),
        planning=lambda wired: _shortened(wired, minute_seconds),
    )
    producer = room.producer

    def produce(event: dict[str, Any]) -> Mapping[str, Any]:
        response = producer.handle(event)
        producer.metrics.flush_ended()  # what the handler does after every request
        return response

    def run_trigger_once(invoke_consumer: InvokeConsumer) -> Any:
        with metrics.run() as sink:
            return room.run_trigger(
                metrics=sink, invoke_consumer=lambda payload: invoke_consumer(dict(payload))
            )

    def run_consumer_once(payload: Payload) -> Any:
        with metrics.run() as sink:
            # The payload is JSON in AWS's async invoke: the consumer gets a copy, as it would.
            return room.run_consumer(dict(payload), metrics=sink)

    # The governor's minute is shortened with the scheduler's, as the trigger's is.
    def run_governor_once() -> Any:
        if not settings.dynamic_rate_throttling:
            return "disabled"
        with metrics.run() as sink:
            return room.run_governor(metrics=sink)

    return RoomCode(
        producer=lambda event, _context: produce(event),
        trigger=run_trigger_once,
        consumer=run_consumer_once,
        governor=run_governor_once,
        integration=invoke,
        # The page extrapolates the line on the room's (perhaps shortened) minute, and
        # subscribes to the room's local channel.
        page=lambda settings: render_page(
            settings, minute_seconds=minute_seconds, channel=resources.channel
        ),
        connect_consumers=starter.connect,
    )


def _publisher(resources: RoomResources) -> Publisher:
    """The room's writers publish to its local channel as to AppSync Events in AWS: the same
    signed request (room/push.py), with the local room's credentials (local/channel_publish.py)."""
    if resources.channel is None:
        return NO_PUBLISHER
    from beekeeper.local.channel_publish import LOCAL_CREDENTIALS

    return AppSyncPublisher(
        url=f"http://{resources.channel.host}{push.HTTP_PATH}",
        region=LOCAL_REGION,
        credentials=lambda: LOCAL_CREDENTIALS,
    )


def _shortened(wiring: RoomWiring, minute_seconds: float) -> RoomWiring:
    """A shortened minute asks each consumer for its minute's work in less time: the trigger
    plans consumers for the same real-time pace per consumer as a minute in AWS does."""
    settings = wiring["settings"]
    return {
        **wiring,
        "settings": settings.replace(
            consumer_capacity=max(
                MIN_CONSUMER_CAPACITY,
                round(settings.consumer_capacity * minute_seconds / MINUTE_SECONDS),
            )
        ),
    }
