"""Wake a consumer for a minute that has none: how a quiet room lets its next visitor in.

The trigger starts no consumer for a minute nobody is expected in. A visitor who joins such a
minute wakes exactly one: a conditional update of `minute#<m>` (claimed, no consumers, nobody
woken yet) that one producer wins, followed by an asynchronous invoke of a consumer that owns
the whole minute's lattice. The condition also makes a woken consumer and the trigger's own
consumers mutually exclusive within a minute, so the lattice is never shared twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core.datamodel import minute_key
from beekeeper.room.consumer import Assignment
from beekeeper.room.pacing import minute_span
from beekeeper.room.room_state import error_code, key, number

log = logging.getLogger("beekeeper.wake")


def wake_if_idle(
    *,
    dynamodb: Any,
    table: str,
    now: float,
    rate: int,
    minute_seconds: float,
    invoke_consumer: Callable[[dict[str, Any]], None],
) -> bool:
    """Start a consumer for the current minute if it has none; True when this call did."""
    minute = int(now // minute_seconds)
    _start, deadline = minute_span(minute, minute_seconds)
    if now >= deadline:
        return False  # the next minute's trigger plans for this visitor
    try:
        dynamodb.update_item(
            TableName=table,
            Key=key(minute_key(minute)),
            UpdateExpression="SET woken_at = :now",
            ConditionExpression=(
                "attribute_exists(claimed_at) AND consumers = :none "
                "AND attribute_not_exists(woken_at)"
            ),
            ExpressionAttributeValues={":now": number(now), ":none": number(0)},
        )
    except ClientError as error:
        if error_code(error) != "ConditionalCheckFailedException":
            raise
        return False
    assignment = Assignment.lane(minute, 0, 1, rate, minute_seconds, woken=True)
    try:
        invoke_consumer(assignment.to_payload())
    except Exception:
        # Let the next visitor of this minute try again; this one stays in the queue.
        dynamodb.update_item(
            TableName=table, Key=key(minute_key(minute)), UpdateExpression="REMOVE woken_at"
        )
        raise
    log.info("minute %s had no consumer: woke one for a visitor who joined", minute)
    return True
