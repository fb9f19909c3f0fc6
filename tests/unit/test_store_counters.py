"""A counter's ADD and a repeated request: the store's shortcuts for the room's commonest
writes answer and refuse exactly as the general path does (store/expressions.py's integer ADD,
store/dynamodb_validation.py's bound expressions kept per request shape)."""

from __future__ import annotations

from typing import Any

import pytest

from beekeeper.store.client import StoreClient
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.timing import RealTime
from tests.support.refusals import refusal

TABLE = "t"
NINES = "9" * 38  # the most digits a DynamoDB number holds


def table_client() -> StoreClient:
    database = DynamoDb(RealTime())
    database.create_table(TABLE)
    return StoreClient(database)


def add(client: StoreClient, value: str, *, start: str | None = None) -> Any:
    if start is not None:
        client.put_item(TableName=TABLE, Item={"pk": {"S": "c"}, "n": {"N": start}})
    return client.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "c"}},
        UpdateExpression="ADD n :v",
        ExpressionAttributeValues={":v": {"N": value}},
        ReturnValues="UPDATED_NEW",
    )["Attributes"]["n"]["N"]


@pytest.mark.parametrize(
    ("start", "value", "total"),
    [
        (None, "1", "1"),
        ("41", "1", "42"),
        ("5", "-5", "0"),
        ("-3", "1", "-2"),
        ("2", "0.5", "2.5"),
        ("2.5", "-0.5", "2"),
        ("2", "1e3", "1002"),
        # 10^38: one significant digit, kept whole.
        (NINES, "1", "1" + "0" * 38),
    ],
)
def test_a_counters_add_is_the_exact_sum_written_as_dynamodb_writes_it(
    start: str | None, value: str, total: str
) -> None:
    assert add(table_client(), value, start=start) == total


def test_an_add_past_38_significant_digits_is_refused() -> None:
    client = table_client()
    client.put_item(TableName=TABLE, Item={"pk": {"S": "c"}, "n": {"N": NINES}})
    code, message = refusal(
        client.update_item,
        TableName=TABLE,
        Key={"pk": {"S": "c"}},
        UpdateExpression="ADD n :v",
        ExpressionAttributeValues={":v": {"N": "0.5"}},
    )
    assert code == "ValidationException" and "38 significant digits" in message
    assert client.get_item(TableName=TABLE, Key={"pk": {"S": "c"}})["Item"]["n"] == {"N": NINES}


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({":v": {"S": "1"}}, "Incorrect operand type for operator or function; operator: ADD"),
        ({":v": {"N": "one"}}, "cannot be converted"),
        ({":v": {"N": "1"}, ":w": {"N": "2"}}, "unused in expressions"),
        ({}, "must not be empty"),
    ],
)
def test_a_request_shape_once_taken_still_refuses_its_bad_values(
    values: dict[str, Any], says: str
) -> None:
    client = table_client()
    assert add(client, "1") == "1"  # the shape taken (and kept) first
    code, message = refusal(
        client.update_item,
        TableName=TABLE,
        Key={"pk": {"S": "c"}},
        UpdateExpression="ADD n :v",
        ExpressionAttributeValues=values,
    )
    assert code == "ValidationException" and says in message
    assert add(client, "1") == "2"  # and takes good values again
