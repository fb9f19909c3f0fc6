"""Test visitors (`beekeeper check`): the room's side of the mark, from the pass to the item.

The operator's check writes a pass item `check#<pass>` with its own AWS credentials (the
producer's role can spend one, never make one) and sends its visitors to the marketing link
with `?check=<pass>` beside their solved work. The producer spends one use of the pass per
join with one conditional write and gives the visitor place 0 (core/datamodel.py's
TEST_ORDINAL); the consumer flags the visitor's item and puts the `test` claim in their ticket.
Why nobody else can make a test visitor, and why being one gains nothing: docs/data-model.md,
"Test visitors".
"""

from __future__ import annotations

import enum
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core.datamodel import TEST_ATTRIBUTE, TEST_PASS_PATTERN, Token, check_pass_key
from beekeeper.room.room_state import error_code, key, number


class Pass(enum.Enum):
    NONE = "none"  # the request carries no pass: a visitor like any other
    TAKEN = "taken"  # a use of a valid pass was spent: a test visitor
    REFUSED = "refused"  # malformed, unknown, used up or expired: no place is given


def take_pass(dynamodb: Any, table: str, text: str | None, *, now: float) -> Pass:
    """Spend one use of the pass `text` (the marketing link's `check` parameter), if it is
    valid now: one UpdateItem whose condition is the whole check, so two joins can never
    spend one use. A failure of DynamoDB itself raises (the producer's 503)."""
    if text is None:
        return Pass.NONE
    if not TEST_PASS_PATTERN.fullmatch(text):
        return Pass.REFUSED
    try:
        dynamodb.update_item(
            TableName=table,
            Key=key(check_pass_key(text)),
            UpdateExpression="ADD joined :one",
            ConditionExpression="joined < visitors AND expires_at > :now",
            ExpressionAttributeValues={":one": number(1), ":now": number(int(now))},
        )
    except ClientError as error:
        if error_code(error) == "ConditionalCheckFailedException":
            return Pass.REFUSED
        raise
    return Pass.TAKEN


def mark_of(token: Token) -> dict[str, Any]:
    """The flag on an admitted test visitor's `v#` item; nothing for anyone else."""
    return {TEST_ATTRIBUTE: {"BOOL": True}} if token.is_test else {}
