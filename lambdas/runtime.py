"""What every handler needs from its container: settings, resource names, AWS clients, metrics.

Clients are created lazily, once per container, on the first invocation: importing a handler
module never touches AWS, so tests and local mode can import it with the environment set
(AWS_ENDPOINT_URL pointing at an emulator is honoured by boto3 itself).

Metrics (room/emf.py) are written only inside Lambda, which sets AWS_LAMBDA_FUNCTION_NAME in
every function's environment; anywhere else (local mode, tests) they are discarded, so a
terminal never fills with metric lines.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from beekeeper.core import names, push
from beekeeper.core.settings import RoomSettings
from beekeeper.lambdas import log_context
from beekeeper.room.assembly import Effects, Part, Room, assemble
from beekeeper.room.emf import DISCARD, MetricSink, MinuteMetrics
from beekeeper.room.push import NO_PUBLISHER, AppSyncPublisher, Publisher
from beekeeper.room.tickets import secret_reader
from beekeeper.room.wiring import RoomWiring

# Lambda sets it in every function's environment (a reserved variable).
IN_LAMBDA_VARIABLE = "AWS_LAMBDA_FUNCTION_NAME"


@cache
def settings() -> RoomSettings:
    room = RoomSettings.from_lambda_environment(os.environ)
    log_context.install(room.name)
    return room


@cache
def metrics() -> MetricSink:
    """This container's metrics: EMF lines on stdout in Lambda, discarded elsewhere."""
    if not os.environ.get(IN_LAMBDA_VARIABLE):
        return DISCARD
    return MinuteMetrics(settings().name, clock=time.time)


def env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise RuntimeError(f"environment variable {name} is not set; the stack must set it")
    return value


@cache
def client(service: str) -> Any:
    import boto3  # imported here so that a cold import of a handler stays cheap

    return boto3.client(service)


def wiring(part: Part = "producer") -> RoomWiring:
    """The room's settings, table, queue and clients, as the stack set them for this function.
    The governor is given no queue (it never touches it)."""
    return RoomWiring(
        settings=settings(),
        table=env(names.TABLE_NAME_VARIABLE),
        queue_url="" if part == "governor" else env(names.QUEUE_URL_VARIABLE),
        dynamodb=client("dynamodb"),
        sqs=client("sqs"),
    )


@cache
def room() -> Room:
    """The room, assembled once per container (room/assembly.py). What only some functions
    have in their environment (the consumer function to start, the secrets) is read when a
    part first needs it, so each function's environment holds only what it uses."""
    return assemble(
        wiring,
        Effects(
            clock=time.time,
            sleep=time.sleep,
            invoke_consumer=lambda payload: consumer_invoker()(payload),
            read_join_secret=lambda: _secret(names.JOIN_SECRET_VARIABLE),
            read_ticket_keys=_ticket_keys_reader(),
            producer_metrics=metrics(),
            room_origin=os.environ.get(names.ROOM_ORIGIN_VARIABLE, ""),
            publisher=publisher(),
        ),
    )


@cache
def publisher() -> Publisher:
    """The room's push channel, for the functions that write its state (the stack gives them
    its HTTP host and the publish on its namespace); none for the others."""
    domain = os.environ.get(names.CHANNEL_HTTP_DOMAIN_VARIABLE, "")
    if not domain:
        return NO_PUBLISHER
    return AppSyncPublisher(
        url=f"https://{domain}{push.HTTP_PATH}",
        region=env("AWS_REGION"),
        credentials=_credentials,
    )


def _credentials() -> Any:
    """The function's role's credentials, as boto3 finds them (refreshed when they expire)."""
    return _session().get_credentials()


@cache
def _session() -> Any:
    import boto3

    return boto3.Session()


def _secret(variable: str) -> str:
    return secret_reader(client("secretsmanager"), env(variable))()


def _ticket_keys_reader() -> Callable[[], str] | None:
    """The ticket keys' secret, for the function that signs (the consumer); elsewhere none."""
    if not os.environ.get(names.TICKET_KEYS_SECRET_VARIABLE):
        return None
    return lambda: _secret(names.TICKET_KEYS_SECRET_VARIABLE)


@cache
def consumer_invoker() -> Callable[[dict[str, Any]], None]:
    """How the producer and the trigger start a consumer: Lambda's asynchronous invoke."""
    return lambda_invoker(client("lambda"), env(names.CONSUMER_FUNCTION_VARIABLE))


def lambda_invoker(lambda_client: Any, function_name: str) -> Callable[[dict[str, Any]], None]:
    """An asynchronous invoke of `function_name` (how consumers are started)."""

    def invoke(payload: Mapping[str, Any]) -> None:
        lambda_client.invoke(
            FunctionName=function_name,
            InvocationType="Event",
            Payload=json.dumps(payload).encode(),
        )

    return invoke


def reset_for_tests() -> None:
    """Forget cached settings and clients (tests change the environment between cases)."""
    settings.cache_clear()
    client.cache_clear()
    metrics.cache_clear()
    room.cache_clear()
    consumer_invoker.cache_clear()
    publisher.cache_clear()
    _session.cache_clear()
