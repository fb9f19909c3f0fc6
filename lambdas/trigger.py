"""Every minute: claim the minute, plan the fewest consumers, hand each an exact quota.

The plan admits min(rate, backlog) visitors in the minute, where backlog is the queue's
visible message count when the minute is claimed. Visitors who arrive later in the minute are
admitted from the next minute on: a minute never admits more than it planned, so what a minute
admits is known the moment it starts (and the status page can say so).

The claim is a conditional PutItem of `minute#<m>`: a duplicate or late scheduler delivery
finds it and admits nothing.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core import telemetry
from beekeeper.core.datamodel import BOOKKEEPING_TTL_SECONDS, minute_key
from beekeeper.core.settings import RoomSettings
from beekeeper.lambdas import runtime
from beekeeper.lambdas.emf import DISCARD, MetricSink
from beekeeper.lambdas.room_state import (
    error_code,
    key,
    number,
    publish_status,
    read_config,
    read_snapshot,
)

log = logging.getLogger("beekeeper.trigger")

DEFAULT_MINUTE_SECONDS = 60


def plan_quotas(visitors: int, capacity: int) -> list[int]:
    """The fewest consumers that admit `visitors`, with exact quotas as even as possible."""
    if visitors <= 0:
        return []
    consumers = math.ceil(visitors / capacity)
    base, extra = divmod(visitors, consumers)
    return [base + 1 if i < extra else base for i in range(consumers)]


def minute_window(minute: int, minute_seconds: float) -> tuple[float, float]:
    """When consumers of `minute` start pacing and when they must stop.

    They stop a little before the minute ends (1/30 of it: 2 s of 60) so the last admissions
    and any write retries still fall inside the minute.
    """
    start = minute * minute_seconds
    return start, start + minute_seconds - minute_seconds / 30


@dataclass(frozen=True)
class TriggerOutcome:
    minute: int
    claimed: bool
    rate: int = 0
    backlog: int = 0
    quotas: tuple[int, ...] = ()


def queue_backlog(sqs: Any, queue_url: str) -> int:
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def run_trigger(
    *,
    settings: RoomSettings,
    table: str,
    queue_url: str,
    dynamodb: Any,
    sqs: Any,
    invoke_consumer: Callable[[dict[str, Any]], None],
    clock: Callable[[], float],
    minute_seconds: float = DEFAULT_MINUTE_SECONDS,
    metrics: MetricSink = DISCARD,
) -> TriggerOutcome:
    now = clock()
    minute = int(now // minute_seconds)
    config = read_config(dynamodb, table, settings)
    backlog = queue_backlog(sqs, queue_url)
    planned = min(config.rate, backlog) if config.enabled else 0
    quotas = plan_quotas(planned, settings.consumer_capacity)
    snapshot = read_snapshot(dynamodb, table, settings)
    try:
        dynamodb.put_item(
            TableName=table,
            Item={
                **key(minute_key(minute)),
                "rate": number(config.rate),
                "consumers": number(len(quotas)),
                "quota": number(planned),
                "arrivals_total": number(snapshot.arrivals_total),
                "admitted": number(0),
                "claimed_at": number(now),
                "ttl": number(now + BOOKKEEPING_TTL_SECONDS),
            },
            ConditionExpression="attribute_not_exists(pk)",
        )
    except ClientError as error:
        if error_code(error) != "ConditionalCheckFailedException":
            raise
        log.info("minute %s was already claimed: this delivery admits nobody", minute)
        return TriggerOutcome(minute=minute, claimed=False)
    metrics.level(telemetry.RATE, config.rate if config.enabled else 0)
    metrics.level(telemetry.OPERATOR_RATE, config.operator_rate)
    metrics.level(telemetry.BACKLOG, backlog)
    metrics.level(telemetry.PLANNED, planned)
    start, deadline = minute_window(minute, minute_seconds)
    for index, quota in enumerate(quotas):
        payload = {
            "minute": minute,
            "index": index,
            "quota": quota,
            "consumers": len(quotas),
            "start": max(start, now),
            "deadline": deadline,
            "minute_seconds": minute_seconds,
        }
        try:
            invoke_consumer(payload)
        except Exception:
            # The minute admits less; nobody is lost: the visitors stay in the queue.
            log.exception("could not start consumer %s of minute %s", index, minute)
    publish_status(dynamodb, table, snapshot, now=now)
    log.info(
        "minute %s: rate %s, backlog %s, consumers %s, quota %s",
        minute,
        config.rate,
        backlog,
        len(quotas),
        planned,
    )
    return TriggerOutcome(
        minute=minute, claimed=True, rate=config.rate, backlog=backlog, quotas=tuple(quotas)
    )


def lambda_invoker(lambda_client: Any, function_name: str) -> Callable[[dict[str, Any]], None]:
    def invoke(payload: Mapping[str, Any]) -> None:
        lambda_client.invoke(
            FunctionName=function_name,
            InvocationType="Event",
            Payload=json.dumps(payload).encode(),
        )

    return invoke


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    outcome = run_trigger(
        settings=runtime.settings(),
        table=runtime.env("TABLE_NAME"),
        queue_url=runtime.env("QUEUE_URL"),
        dynamodb=runtime.client("dynamodb"),
        sqs=runtime.client("sqs"),
        invoke_consumer=lambda_invoker(
            runtime.client("lambda"), runtime.env("CONSUMER_FUNCTION_NAME")
        ),
        clock=time.time,
        metrics=runtime.metrics(),
    )
    runtime.metrics().flush()
    return {"minute": outcome.minute, "claimed": outcome.claimed, "quotas": list(outcome.quotas)}
