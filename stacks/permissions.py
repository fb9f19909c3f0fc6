"""Every IAM action the room's functions and its API use, in one place.

Each list names only what the code calls (docs/pipeline.md documents the calls); a resource is
attached where the stack grants it (the table, the queue, the consumer function). No
wildcard actions: a test fails on any.
"""

from __future__ import annotations

from beekeeper.core.datamodel import LEAVING_INDEX
from beekeeper.core.routes import templated
from beekeeper.core.settings import Mode

TABLE_ACTIONS: dict[str, tuple[str, ...]] = {
    # UpdateItem: count an arrival on a shard (ADD, or a conditional SET for an exact place)
    # and wake a consumer (conditional update of the minute); BatchGetItem: config and shard
    # counts together; GetItem: a returning visitor's admission (room/returning.py) and
    # pre-queue place; PutItem: a pre-queue place before a scheduled start (room/prequeue.py).
    "producer": (
        "dynamodb:UpdateItem",
        "dynamodb:BatchGetItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
    ),
    # Claim the minute (conditional PutItem), read the config (GetItem) and the counters
    # (BatchGetItem), publish the ten status copies (BatchWriteItem), wake a consumer for a
    # visitor who joined during the claim (UpdateItem). A scheduled event: commit and draw
    # (PutItem, UpdateItem), read the pre-queue once at the start (Scan, the only one), write
    # the drawn chunks and ranks (BatchWriteItem).
    "trigger": (
        "dynamodb:PutItem",
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:UpdateItem",
        "dynamodb:Scan",
    ),
    # Write admitted visitors, each on condition that they have no item yet (TransactWriteItems
    # of Puts, which IAM authorises as PutItem) and the status copies (BatchWriteItem); check
    # duplicates and read the counters (BatchGetItem); count admissions (UpdateItem ADD);
    # follow the live config (GetItem).
    "consumer": (
        "dynamodb:PutItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:BatchGetItem",
        "dynamodb:UpdateItem",
        "dynamodb:GetItem",
    ),
    # Read and write its baseline and decisions, adjust the config item's rate.
    # Its state and log (GetItem, PutItem), the rate (conditional UpdateItem), and after a
    # change the status copies, read and written as the CLI does (BatchGetItem,
    # BatchWriteItem), so that waiting pages learn the new rate within seconds.
    "governor": (
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:BatchGetItem",
        "dynamodb:BatchWriteItem",
    ),
}

# Capacity mode adds what the places take (room/places.py), to the
# consumer and the trigger (both run the warden): admissions and releases are transactions of
# PutItem (granted in both modes) and UpdateItem, the warden deletes the deadline buckets it
# has read (DeleteItem) and finds leavers in the `leaving` index (Query, on the index only).
CAPACITY_TABLE_ACTIONS: dict[str, tuple[str, ...]] = {
    "consumer": ("dynamodb:DeleteItem",),
    "trigger": ("dynamodb:DeleteItem",),
}
CAPACITY_INDEX_ACTIONS: dict[str, tuple[str, ...]] = {
    "consumer": ("dynamodb:Query",),
    "trigger": ("dynamodb:Query",),
}
# The only index a function may query, as a suffix of the table's ARN.
INDEX_ARN_SUFFIX = f"/index/{LEAVING_INDEX}"


def table_actions(role: str, mode: Mode) -> tuple[str, ...]:
    """The table actions `role` needs in a room of `mode`."""
    extra = CAPACITY_TABLE_ACTIONS.get(role, ()) if mode is Mode.CAPACITY else ()
    return tuple(sorted(set(TABLE_ACTIONS[role]) | set(extra)))


def index_actions(role: str, mode: Mode) -> tuple[str, ...]:
    return CAPACITY_INDEX_ACTIONS.get(role, ()) if mode is Mode.CAPACITY else ()


QUEUE_ACTIONS: dict[str, tuple[str, ...]] = {
    "producer": ("sqs:SendMessage",),
    # Queue depth for planning the minute.
    "trigger": ("sqs:GetQueueAttributes",),
    # DeleteMessageBatch and ChangeMessageVisibilityBatch are authorised by the single actions.
    "consumer": ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"),
    "governor": (),
}

# The trigger starts the minute's consumers, and the producer wakes one for a visitor who joins
# a minute without any, asynchronously.
STARTS_CONSUMERS = ("lambda:InvokeFunction",)

# The consumer reads the room's ticket keys (room/tickets.py), once a minute per container.
READS_TICKET_KEYS = ("secretsmanager:GetSecretValue",)

# The producer reads the room's join secret (core/join_work.py), once per container.
READS_JOIN_SECRET = ("secretsmanager:GetSecretValue",)

# The functions that write the room's state (trigger, consumer, governor) publish its changes to
# the waiting pages' channel (room/push.py), on the room's channel namespace only
# (stacks/channel.py): "appsync:EventPublish" authorises a publish to a namespace's channels
# (Create a wscat clone ... IAM auth, AWS AppSync Events developer guide).
PUBLISHES_ROOM_STATE = ("appsync:EventPublish",)
PUBLISHERS = ("trigger", "consumer", "governor")

# What a function needs to write its own log group (created by the stack, with a retention).
LOG_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")


def api_table_actions(mode: Mode) -> tuple[str, ...]:
    """The API's DynamoDB integration role: exactly the actions the request templates target
    (the route table, beekeeper.core.routes), on the room's table only."""
    targets = templated(mode).values()
    return tuple(sorted({f"dynamodb:{route.templates().action}" for route in targets}))
