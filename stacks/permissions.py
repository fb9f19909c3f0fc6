"""Every IAM action the room's functions and its API use, in one place.

Each list names only what the code calls (docs/pipeline.md documents the calls); a resource is
attached where the stack grants it (the table, the queue, the consumer function). No
wildcard actions: a test fails on any.
"""

from __future__ import annotations

from beekeeper.vtl import ROUTES

TABLE_ACTIONS: dict[str, tuple[str, ...]] = {
    # UpdateItem: count an arrival on a shard (ADD, or a conditional SET for an exact place)
    # and wake a consumer (conditional update of the minute); BatchGetItem: config and shard
    # counts together; GetItem: a returning visitor's admission (lambdas/returning.py).
    "producer": ("dynamodb:UpdateItem", "dynamodb:BatchGetItem", "dynamodb:GetItem"),
    # Claim the minute (conditional PutItem), read the config (GetItem) and the counters
    # (BatchGetItem), publish the ten status copies (BatchWriteItem), wake a consumer for a
    # visitor who joined during the claim (UpdateItem).
    "trigger": (
        "dynamodb:PutItem",
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:UpdateItem",
    ),
    # Write admitted visitors and the status copies (BatchWriteItem); check duplicates and
    # read the counters (BatchGetItem); count admissions (UpdateItem ADD); follow the live
    # config (GetItem).
    "consumer": (
        "dynamodb:BatchWriteItem",
        "dynamodb:BatchGetItem",
        "dynamodb:UpdateItem",
        "dynamodb:GetItem",
    ),
    # Read and write its baseline and decisions, adjust the config item's rate.
    "governor": ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"),
}

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

# The consumer reads the room's ticket keys (lambdas/tickets.py), once a minute per container.
READS_TICKET_KEYS = ("secretsmanager:GetSecretValue",)

# What a function needs to write its own log group (created by the stack, with a retention).
LOG_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")

# The API's DynamoDB integration role: exactly the actions the /polling and /client request
# templates target (beekeeper.vtl.ROUTES), on the room's table only.
API_TABLE_ACTIONS: tuple[str, ...] = tuple(
    sorted({f"dynamodb:{action}" for _request, _response, action in ROUTES.values()})
)

FUNCTION_ROLES = tuple(TABLE_ACTIONS)
