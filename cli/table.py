"""Small helpers for the room's DynamoDB table through the low-level client.

Items come back as plain Python values: numbers as int, so nothing downstream handles Decimal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from beekeeper.cli.errors import AwsError
from beekeeper.core.datamodel import PARTITION_KEY

BATCH_GET_LIMIT = 100
_MAX_ROUNDS = 8

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def to_attribute(value: Any) -> dict[str, Any]:
    return _serializer.serialize(value)


def key(pk: str) -> dict[str, Any]:
    return {PARTITION_KEY: {"S": pk}}


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
    dynamodb: Any, table: str, pks: Iterable[str], sleep: Callable[[float], None]
) -> dict[str, dict[str, Any]]:
    """Items by pk, as DynamoDB returns them (missing items are absent); unprocessed keys are
    retried with backoff, and any number of keys is read in chunks of 100."""
    wanted = list(dict.fromkeys(pks))
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(wanted), BATCH_GET_LIMIT):
        request: dict[str, Any] = {
            table: {"Keys": [key(pk) for pk in wanted[start : start + BATCH_GET_LIMIT]]}
        }
        for attempt in range(_MAX_ROUNDS):
            response = dynamodb.batch_get_item(RequestItems=request)
            for item in response.get("Responses", {}).get(table, []):
                found[item[PARTITION_KEY]["S"]] = item
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
            sleep(min(2.0, 0.05 * 2**attempt))
        else:
            raise AwsError(
                "DynamoDB kept returning unprocessed keys (the table is throttled); "
                "wait a moment and run again."
            )
    return found
