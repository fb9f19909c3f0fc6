"""Small helpers for the room's DynamoDB table through the low-level client.

Items come back as plain Python values: numbers as int, so nothing downstream handles Decimal.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from beekeeper.cli.errors import AwsError
from beekeeper.core.retry import Pauses
from beekeeper.room import room_state
from beekeeper.room.room_state import key

# Calls for an operator can wait longer on a throttled table than a Lambda's can.
MAX_ROUNDS = 8

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def to_attribute(value: Any) -> dict[str, Any]:
    return _serializer.serialize(value)


def from_item(item: dict[str, Any]) -> dict[str, Any]:
    plain = {name: _deserializer.deserialize(value) for name, value in item.items()}
    return {name: _plain_number(value) for name, value in plain.items()}


def _plain_number(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def get_item(dynamodb: Any, table: str, pk: str) -> dict[str, Any] | None:
    response = dynamodb.get_item(TableName=table, Key=key(pk), ConsistentRead=True)
    return from_item(response["Item"]) if "Item" in response else None


def batch_get(
    dynamodb: Any, table: str, pks: Iterable[str], pauses: Pauses
) -> dict[str, dict[str, Any]]:
    """Items by pk, as DynamoDB returns them (missing items are absent): the room's own read
    (room/room_state.py), with more retries, and a sentence if DynamoDB keeps some keys
    unprocessed."""
    try:
        found = room_state.batch_get(dynamodb, table, pks, pauses=pauses, attempts=MAX_ROUNDS)
    except room_state.Unprocessed as error:
        raise AwsError(
            "DynamoDB kept returning unprocessed keys (the table is throttled); "
            "wait a moment and run again."
        ) from error
    return {pk: dict(item) for pk, item in found.items()}
