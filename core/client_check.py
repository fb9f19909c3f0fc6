"""GET /client in rate mode: one UpdateItem of the visitor's own `v#` item, a check or a redeem.

An API Gateway method has one integration action, and only a conditional write can admit a
token exactly once, so /client is an UpdateItem whatever it is asked:

- **check** (no `redeem`): succeeds while the admission is valid (`expires_at` after the
  request time) and records when it was last checked (`checked_at`): UpdateItem must update
  something, and DynamoDB charges the write whether or not an attribute changes.
- **redeem** (`redeem=1`): the same condition, and the admission not redeemed yet; it sets
  `redeemed_at`. Two redeems at the same moment are serialised by DynamoDB on the item: one
  succeeds, the other's condition fails.

A failed condition returns the item as it was (ReturnValuesOnConditionCheckFailure ALL_OLD,
free of charge), so the refusal template (vtl/client-refused.vtl) tells "redeemed" (the item
has `redeemed_at`) from a token the room does not know or whose admission expired.

Capacity mode's /client renews a session instead (core/sessions.py) and redeems with the same
fragments below. The templates receive these expressions as synth-time placeholders
(vtl.template_values); tests/unit/test_vtl_templates.py holds their requests equal to
`check_request`.
"""

from __future__ import annotations

from typing import Any

from beekeeper.core.datamodel import (
    CHECKED_ATTRIBUTE,
    CLIENT_REDEEM_PARAMETER,
    CLIENT_REDEEM_VALUE,
    PARTITION_KEY,
    REDEEMED_ATTRIBUTE,
    visitor_key,
)

# Redeeming, in any mode: the condition's clause and the update's assignment.
NOT_REDEEMED = f"attribute_not_exists({REDEEMED_ATTRIBUTE})"
REDEEM_ASSIGNMENT = f"{REDEEMED_ATTRIBUTE} = :now"
# What a failed condition returns: the item as it was, which tells a redeemed admission.
ON_CONDITION_FAILURE = "ALL_OLD"

CHECK_CONDITION = f"attribute_exists({PARTITION_KEY}) AND expires_at > :now"
CHECK_UPDATE = f"SET {CHECKED_ATTRIBUTE} = :now"
REDEEM_CONDITION = f"{CHECK_CONDITION} AND {NOT_REDEEMED}"
REDEEM_UPDATE = f"{CHECK_UPDATE}, {REDEEM_ASSIGNMENT}"


def check_request(table: str, token_id: str, *, now: int, redeem: bool) -> dict[str, Any]:
    """The UpdateItem of a rate-mode /client check (or redeem, `redeem`) at `now` (epoch s)."""
    return {
        "TableName": table,
        "Key": {PARTITION_KEY: {"S": visitor_key(token_id)}},
        "UpdateExpression": REDEEM_UPDATE if redeem else CHECK_UPDATE,
        "ConditionExpression": REDEEM_CONDITION if redeem else CHECK_CONDITION,
        "ExpressionAttributeValues": {":now": {"N": str(now)}},
        "ReturnValuesOnConditionCheckFailure": ON_CONDITION_FAILURE,
    }


def template_values() -> dict[str, str]:
    """The placeholders the /client templates take from here (see vtl.template_values)."""
    return {
        "CLIENT_CHECK_UPDATE": CHECK_UPDATE,
        "CLIENT_CHECK_CONDITION": CHECK_CONDITION,
        "CLIENT_REDEEM_UPDATE": REDEEM_UPDATE,
        "CLIENT_REDEEM_CONDITION": REDEEM_CONDITION,
        "ON_CONDITION_FAILURE": ON_CONDITION_FAILURE,
        "REDEEMED_ATTRIBUTE": REDEEMED_ATTRIBUTE,
        "REDEEM_PARAMETER": CLIENT_REDEEM_PARAMETER,
        "REDEEM_VALUE": CLIENT_REDEEM_VALUE,
    }
