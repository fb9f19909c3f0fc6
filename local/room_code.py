"""The room's real code, bound for a local room: the one place local mode names the modules.

Local mode runs exactly what AWS runs: the producer, trigger, consumer and governor Lambdas of
`beekeeper.lambdas`, the /polling and /client templates through `beekeeper.vtl.integration`,
and the waiting room page of `beekeeper.waiting_room_site`. `RoomCode` is the interface the
gateway and the scheduler use; `load_room_code` fills it with those modules after pointing
their environment at the emulator, as the stack points it at AWS.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from beekeeper.core.settings import RoomSettings
from beekeeper.local.emulator import FAKE_CREDENTIALS, LOCAL_REGION, RoomResources

Payload = Mapping[str, Any]
InvokeConsumer = Callable[[Payload], None]
# Where the templates' DynamoDB requests go: (action, JSON body) -> (status code, JSON body).
DynamoDbTarget = Callable[[str, str], tuple[int, str]]


class IntegrationRunner(Protocol):
    """`beekeeper.vtl.integration.run_integration`: a route's templates against DynamoDB."""

    def __call__(
        self,
        route: str,
        request: Any,
        *,
        dynamodb: DynamoDbTarget,
        table_name: str,
        origin: str,
        request_time_ms: int,
        request_id: str = "local",
    ) -> Any: ...


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
    integration: IntegrationRunner
    # HttpRequest(method, path, query, headers), the integration's request type.
    http_request: Callable[..., Any]
    # A boto3 DynamoDB client -> the integration's DynamoDB target (Boto3DynamoDb).
    dynamodb_target: Callable[[Any], DynamoDbTarget]
    page: Callable[[RoomSettings], str]


def lambda_environment(
    settings: RoomSettings, resources: RoomResources, endpoint_url: str
) -> dict[str, str]:
    """What the stack gives every Lambda, pointed at the emulator, with fake credentials."""
    return {
        **settings.to_lambda_environment(),
        "TABLE_NAME": resources.table_name,
        "QUEUE_URL": resources.queue_url,
        "CONSUMER_FUNCTION_NAME": f"beekeeper-{settings.name}-consumer",
        "AWS_ENDPOINT_URL": endpoint_url,
        "AWS_REGION": LOCAL_REGION,
        "AWS_DEFAULT_REGION": LOCAL_REGION,
        "AWS_ACCESS_KEY_ID": FAKE_CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": FAKE_CREDENTIALS["aws_secret_access_key"],
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def load_room_code(
    settings: RoomSettings,
    resources: RoomResources,
    endpoint_url: str,
    *,
    minute_seconds: float,
    environ: dict[str, str] | None = None,
) -> RoomCode:
    """The real modules, with their environment pointed at the emulator before import.

    The handlers create their boto3 clients lazily from the environment, as in AWS; this
    process is the local room, so its environment is the room's Lambda environment.
    """
    target = os.environ if environ is None else environ
    target.pop("AWS_PROFILE", None)
    target.pop("AWS_SESSION_TOKEN", None)
    target.update(lambda_environment(settings, resources, endpoint_url))

    # Imported by name, after the environment is set: the modules read it when first used.
    consumer, governor, producer, runtime, trigger = (
        importlib.import_module(f"beekeeper.lambdas.{name}")
        for name in ("consumer", "governor", "producer", "runtime", "trigger")
    )
    integration = importlib.import_module("beekeeper.vtl.integration")
    from beekeeper.waiting_room_site import render_page

    # The clients and settings the handlers use (created lazily, once, as in a container).
    def run_trigger(invoke_consumer: InvokeConsumer) -> Any:
        return trigger.run_trigger(
            settings=runtime.settings(),
            table=runtime.env("TABLE_NAME"),
            queue_url=runtime.env("QUEUE_URL"),
            dynamodb=runtime.client("dynamodb"),
            sqs=runtime.client("sqs"),
            invoke_consumer=lambda payload: invoke_consumer(dict(payload)),
            clock=time.time,
            minute_seconds=minute_seconds,
        )

    # The governor's minute is shortened with the scheduler's, as the trigger's is.
    def run_governor() -> Any:
        return governor.run_governor(
            settings=runtime.settings(),
            table=runtime.env("TABLE_NAME"),
            dynamodb=runtime.client("dynamodb"),
            fetch=governor.fetch_once,
            clock=time.time,
            sleep=time.sleep,
            minute_seconds=minute_seconds,
        )

    return RoomCode(
        producer=producer.handler,
        trigger=run_trigger,
        # The payload is JSON in AWS's async invoke: the consumer gets a copy, as it would.
        consumer=lambda payload: consumer.handler(dict(payload), None),
        governor=run_governor,
        integration=integration.run_integration,
        http_request=integration.HttpRequest,
        dynamodb_target=integration.Boto3DynamoDb,
        page=render_page,
    )
