"""Capacity mode's visitor requests: arriving or renewing a session, and leaving.

Each is one UpdateItem of the visitor's own `v#` item, so a /client check or a /leave costs one
write whatever the number of visitors inside, and never touches a shared item:

- **session** (GET /client and GET /enter): an admitted visitor arrives, or a visitor inside
  is active. The place's deadline moves to now + `session_minutes`; the state becomes inside.
  Refused (ConditionalCheckFailed) unless the visitor holds a place whose deadline has not
  passed, so the answer is {"allow": true} exactly while the session is live. With
  `redeem=1` (/client only) it also sets `redeemed_at`, on condition that it is not set yet
  (core/client_check.py): the first redeem answers allow, every later one "redeemed". The
  answer carries the item (ReturnValues ALL_NEW: /enter puts its ticket in the redirect) and a
  refusal the item as it was (ALL_OLD: "redeemed" is told from it); neither costs more.
- **leave** (POST /leave): the state becomes left. A waiting visitor has no item yet: the leave
  creates it, the consumers find it when the line reaches the visitor and pass over them. A
  visitor holding a place gets the LEAVING_ATTRIBUTE, which puts them in the sparse index the
  warden reads to release the place (room/places.py). Refused for a second leave and for a
  visitor whose place is gone (expired, ended).

The room keeps no record of who waits (a waiting visitor's token is only on the queue), so the
leave is sent only for a token whose id carries the room's mark (room/leaving.py, the
producer's route): a token the room never issued writes nothing.

The session's mapping template (vtl/_session-request.vtl) can not import Python: it receives
the expressions below as synth-time placeholders and fills in the values, and
tests/unit/test_capacity_templates.py holds its requests equal to these functions. The leave is
sent by room/leaving.py itself.
"""

from __future__ import annotations

from typing import Any

from beekeeper.core.client_check import NOT_REDEEMED, ON_CONDITION_FAILURE, REDEEM_ASSIGNMENT
from beekeeper.core.datamodel import (
    LEAVING_ATTRIBUTE,
    LEAVING_VALUE,
    PARTITION_KEY,
    STATE_ADMITTED,
    STATE_INSIDE,
    STATE_LEFT,
    TTL_ATTRIBUTE,
    VISITOR_TTL_GRACE_SECONDS,
    visitor_key,
)
from beekeeper.core.schedule import PLACE_TTL_SECONDS

# `state` and `ttl` are DynamoDB reserved words: the expressions name them through these.
ATTRIBUTE_NAMES = {"#state": "state", "#ttl": TTL_ATTRIBUTE}
HOLDS_A_PLACE = "#state IN (:admitted, :inside) AND expires_at > :now"

SESSION_UPDATE = (
    "SET expires_at = :until, #state = :inside, arrived_at = if_not_exists(arrived_at, :now), "
    "#ttl = :ttl"
)
SESSION_CONDITION = HOLDS_A_PLACE
SESSION_REDEEM_UPDATE = f"{SESSION_UPDATE}, {REDEEM_ASSIGNMENT}"
SESSION_REDEEM_CONDITION = f"{SESSION_CONDITION} AND {NOT_REDEEMED}"
# The renewed item comes back: /enter reads the ticket from it.
SESSION_RETURNS = "ALL_NEW"

LEAVE_UPDATE = (
    f"SET #state = :left, left_at = :now, {LEAVING_ATTRIBUTE} = :leaving, "
    "#ttl = if_not_exists(#ttl, :ttl)"
)
LEAVE_CONDITION = f"attribute_not_exists({PARTITION_KEY}) OR ({HOLDS_A_PLACE})"


def _n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def session_request(
    table: str, token_id: str, *, now: int, session_seconds: int, redeem: bool = False
) -> dict[str, Any]:
    """The UpdateItem that renews (or starts) a visitor's session at `now` (epoch seconds);
    `redeem`: and redeems the admission, once."""
    until = now + session_seconds
    return {
        "TableName": table,
        "Key": {PARTITION_KEY: {"S": visitor_key(token_id)}},
        "UpdateExpression": SESSION_REDEEM_UPDATE if redeem else SESSION_UPDATE,
        "ConditionExpression": SESSION_REDEEM_CONDITION if redeem else SESSION_CONDITION,
        "ExpressionAttributeNames": dict(ATTRIBUTE_NAMES),
        "ExpressionAttributeValues": {
            ":until": _n(until),
            ":inside": {"S": STATE_INSIDE},
            ":admitted": {"S": STATE_ADMITTED},
            ":now": _n(now),
            ":ttl": _n(until + VISITOR_TTL_GRACE_SECONDS),
        },
        "ReturnValues": SESSION_RETURNS,
        "ReturnValuesOnConditionCheckFailure": ON_CONDITION_FAILURE,
    }


def leave_request(table: str, token_id: str, *, now: int) -> dict[str, Any]:
    """The UpdateItem of a visitor leaving at `now` (epoch seconds).

    A waiting visitor's new item must outlive their place in line, a message on the queue or
    a pre-queue place (or the line would admit them after all): its TTL is a pre-queue place's.
    A holder's item keeps its TTL.
    """
    return {
        "TableName": table,
        "Key": {PARTITION_KEY: {"S": visitor_key(token_id)}},
        "UpdateExpression": LEAVE_UPDATE,
        "ConditionExpression": LEAVE_CONDITION,
        "ExpressionAttributeNames": dict(ATTRIBUTE_NAMES),
        "ExpressionAttributeValues": {
            ":left": {"S": STATE_LEFT},
            ":now": _n(now),
            ":leaving": {"S": LEAVING_VALUE},
            ":ttl": _n(now + PLACE_TTL_SECONDS),
            ":admitted": {"S": STATE_ADMITTED},
            ":inside": {"S": STATE_INSIDE},
        },
    }


def template_values() -> dict[str, str]:
    """The placeholders the capacity templates take from here (see vtl.template_values)."""
    return {
        "SESSION_UPDATE": SESSION_UPDATE,
        "SESSION_CONDITION": SESSION_CONDITION,
        "SESSION_REDEEM_UPDATE": SESSION_REDEEM_UPDATE,
        "SESSION_REDEEM_CONDITION": SESSION_REDEEM_CONDITION,
        "SESSION_RETURNS": SESSION_RETURNS,
        "STATE_ADMITTED": STATE_ADMITTED,
        "STATE_INSIDE": STATE_INSIDE,
        "STATE_LEFT": STATE_LEFT,
        "VISITOR_TTL_GRACE": str(VISITOR_TTL_GRACE_SECONDS),
    }
