"""Every minute: claim the minute, plan its consumers from the demand, start them.

The minute's consumers share the minute's admission lattice at the live rate
(room/pacing.py): they admit visitors as they come, up to the rate, for the whole minute.
How many consumers: the fewest that can admit min(rate, demand), where demand is the queue's
backlog plus the visitors who arrived during the last minute (the arrival counters' growth
since the previous claim). A room nobody is visiting starts no consumer at all; the first
visitor to join such a minute wakes one (room/wake.py), so a quiet room costs one short
trigger run a minute.

The claim is a conditional PutItem of `minute#<m>`: a duplicate or late scheduler delivery
finds it and admits nothing.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core import telemetry
from beekeeper.core.datamodel import BOOKKEEPING_TTL_SECONDS, INSIDE_KEY, minute_key
from beekeeper.core.presence import look_within
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import Mode, RoomSettings, capped
from beekeeper.room.consumer import Assignment
from beekeeper.room.emf import DISCARD, MetricSink
from beekeeper.room.pacing import MINUTE_SECONDS
from beekeeper.room.places import Warden, read_inside
from beekeeper.room.prequeue import Draw
from beekeeper.room.push import StatePush
from beekeeper.room.room_state import (
    RoomConfig,
    batch_get,
    draw_pending,
    error_code,
    key,
    number,
    publish_status,
    read_config,
    read_number,
    read_snapshot,
)
from beekeeper.room.wake import wake_if_idle

log = logging.getLogger("beekeeper.trigger")

# Capacity mode: the turnover (visitors let in per minute) is the mean of this many minutes.
TURNOVER_MINUTES = 5


def consumers_needed(visitors: int, capacity: int) -> int:
    """The fewest consumers that admit `visitors` in a minute (0 for nobody)."""
    return math.ceil(visitors / capacity) if visitors > 0 else 0


@dataclass(frozen=True)
class TriggerOutcome:
    minute: int
    claimed: bool
    rate: int = 0
    backlog: int = 0
    demand: int = 0
    consumers: int = 0
    woken: bool = False  # planned nobody, but a visitor had joined meanwhile: one was woken


def consumers_planned(
    config: RoomConfig,
    *,
    admitting: bool,
    demand: int,
    admissible: int,
    capacity: int,
    capped: bool,
) -> int:
    """The minute's consumers. Admitting: the fewest that admit min(rate, demand), and in a
    capped room at least one while anyone waits (it watches for a place to free). Off: the
    line goes in unpaced, by as many as the rate's own lanes (the deployment reserves twice
    that). Held, closed or awaiting a draw with people in line: one, which admits nobody but
    reads the config every second, so that a resume lets the line move at once."""
    if not config.enabled:
        return min(
            consumers_needed(demand, capacity), max(1, consumers_needed(config.rate, capacity))
        )
    if admitting:
        consumers = consumers_needed(admissible, capacity)
        return max(consumers, 1) if capped and demand else consumers
    return 1 if demand else 0


def queue_backlog(sqs: Any, queue_url: str) -> int:
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def _keep_places(
    dynamodb: Any,
    table: str,
    minute: int,
    max_inside: int,
    clock: Callable[[], float],
    settings: RoomSettings,
    pauses: Pauses,
) -> int | None:
    """Capacity mode, once a minute: free the places due (the warden's round also runs every
    second while a consumer does), measure the turnover, and say how many places are free."""
    try:
        Warden(dynamodb, table, clock, look_within(settings), pauses=pauses).run()
    except Exception:
        log.exception("the warden's round failed; the consumers' rounds carry on")
    claims = batch_get(
        dynamodb,
        table,
        [minute_key(m) for m in range(minute - TURNOVER_MINUTES, minute)],
        pauses=pauses,
    )
    turnover = (
        sum(read_number(item, "admitted") for item in claims.values()) // max(1, len(claims))
        if claims
        else 0
    )
    dynamodb.update_item(
        TableName=table,
        Key=key(INSIDE_KEY),
        UpdateExpression="SET turnover = :turnover",
        ExpressionAttributeValues={":turnover": number(turnover)},
    )
    if not capped(max_inside):
        return None
    return max(0, max_inside - read_inside(dynamodb, table))


def _arrivals_at_previous_claim(
    dynamodb: Any, table: str, minute: int, pauses: Pauses
) -> int | None:
    claim = minute_key(minute - 1)
    previous = batch_get(dynamodb, table, [claim], pauses=pauses).get(claim)
    return read_number(previous, "arrivals_total") if previous else None


def run_trigger(
    *,
    settings: RoomSettings,
    table: str,
    queue_url: str,
    dynamodb: Any,
    sqs: Any,
    invoke_consumer: Callable[[dict[str, Any]], None],
    clock: Callable[[], float],
    pauses: Pauses,
    minute_seconds: float = MINUTE_SECONDS,
    metrics: MetricSink = DISCARD,
    secret_bytes: Callable[[int], bytes] | None = None,
    push: StatePush | None = None,
) -> TriggerOutcome:
    """One minute's claim and plan; `push` is the room's channel (room/push.py): the minute's
    status copies tell waiting pages of a change (the start's draw, say) or a resync due."""
    now = clock()
    minute = int(now // minute_seconds)
    config = read_config(dynamodb, table, settings)
    # A scheduled event: commit to the draw's secret, draw at the start, write ranks (before
    # the claim: a minute's first run draws, and the draw is idempotent for a second one).
    draw = Draw(
        dynamodb,
        table,
        clock,
        **({"secret_bytes": secret_bytes} if secret_bytes else {}),
        pauses=pauses,
    )
    try:
        draw.run(config, minute)
    except Exception:
        # Nobody is admitted while the draw is pending; the next minute's run tries again.
        log.exception("the draw's step failed; the next minute tries again")
    backlog = queue_backlog(sqs, queue_url)
    free: int | None = None  # places free inside the shop (None: no cap)
    if settings.mode is Mode.CAPACITY:
        free = _keep_places(dynamodb, table, minute, config.max_inside, clock, settings, pauses)
    snapshot = read_snapshot(dynamodb, table, settings, pauses=pauses)
    before = _arrivals_at_previous_claim(dynamodb, table, minute, pauses)
    arrived = max(0, snapshot.arrivals_total - before) if before is not None else 0
    pending = draw_pending(config, snapshot.draw)
    if snapshot.draw.drawn:
        # The drawn pre-queue still to admit (they are ahead of the queue's backlog).
        backlog += max(0, snapshot.draw.size - (snapshot.admitted_total - snapshot.draw.base))
    demand = backlog + arrived
    admissible = min(config.rate, demand)
    if free is not None:
        # A full shop admits only as places free: about last minutes' turnover.
        admissible = min(admissible, free + snapshot.turnover)
    admitting = config.admits(now) and not pending
    consumers = consumers_planned(
        config,
        admitting=admitting,
        demand=demand,
        admissible=admissible,
        capacity=settings.consumer_capacity,
        capped=free is not None,
    )
    try:
        dynamodb.put_item(
            TableName=table,
            Item={
                **key(minute_key(minute)),
                "rate": number(config.rate),
                "consumers": number(consumers),
                "demand": number(demand),
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
    # What a healthy minute admits at least: everyone already waiting, up to the rate (those
    # who join during the minute come on top). The behind-schedule alarm compares with it.
    planned = min(config.rate, backlog) if admitting else (backlog if not config.enabled else 0)
    if free is not None:
        planned = min(planned, free)
    metrics.level(telemetry.RATE, config.rate if admitting else 0)
    metrics.level(telemetry.OPERATOR_RATE, config.operator_rate)
    metrics.level(telemetry.BACKLOG, backlog)
    metrics.level(telemetry.PLANNED, planned)
    if settings.mode is Mode.CAPACITY:
        metrics.level(telemetry.INSIDE, snapshot.inside)
        metrics.level(telemetry.MAX_INSIDE, config.max_inside)
    for index in range(consumers):
        assignment = Assignment.lane(minute, index, consumers, config.rate, minute_seconds)
        try:
            invoke_consumer(assignment.to_payload())
        except Exception:
            # The minute admits less; nobody is lost: the visitors stay in the queue.
            log.exception("could not start consumer %s of minute %s", index, minute)
    woken = False
    # A visitor who joined after the counters were read found the minute unclaimed and could
    # not wake a consumer: look again now that the claim is there.
    if (
        consumers == 0
        and (admitting or not config.enabled)
        and read_snapshot(dynamodb, table, settings, pauses=pauses).arrivals_total
        > snapshot.arrivals_total
    ):
        woken = wake_if_idle(
            dynamodb=dynamodb,
            table=table,
            now=clock(),
            rate=config.rate,
            minute_seconds=minute_seconds,
            invoke_consumer=invoke_consumer,
        )
    publish_status(
        dynamodb,
        table,
        snapshot,
        now=now,
        pauses=pauses,
        minute_seconds=minute_seconds,
        push=push,
    )
    log.info(
        "minute %s: rate %s, backlog %s, arrived %s, consumers %s%s",
        minute,
        config.rate,
        backlog,
        arrived,
        consumers,
        " (one woken for a late arrival)" if woken else "",
    )
    return TriggerOutcome(
        minute=minute,
        claimed=True,
        rate=config.rate,
        backlog=backlog,
        demand=demand,
        consumers=consumers,
        woken=woken,
    )
