"""The store's tests' sides: DynamoDB Local (its session fixture, tests/support/dynamodb_local.py)
and the store, each with the room's table; test_store_against_moto.py has its own store side,
with the queues and the secret."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from beekeeper.core.datamodel import table_definition
from beekeeper.local.store_transport import StoreTransport
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from beekeeper.store.wire import JsonProtocol
from tests.support.dynamodb_local import DynamoDbLocal, dynamodb_local
from tests.support.store_scenarios import TABLE, Side

__all__ = ["dynamodb_local", "local_side", "store_side"]


@pytest.fixture()
def local_side(dynamodb_local: DynamoDbLocal) -> Iterator[Side]:
    """DynamoDB Local with the room's table (created from `core.datamodel.table_definition`,
    as the stack creates it), deleted after the test."""
    client = dynamodb_local.client()
    client.create_table(**table_definition(TABLE))
    try:
        yield Side({"dynamodb": client})
    finally:
        client.delete_table(TableName=TABLE)


@pytest.fixture()
def store_side() -> Side:
    """The store with the room's table, through local mode's boto3 clients."""
    timing = RealTime()
    database = DynamoDb(timing)
    database.create_table_as_defined(table_definition(TABLE))
    transport = StoreTransport(JsonProtocol(database, Sqs(timing)), "http://127.0.0.1:9/diff")
    return Side({"dynamodb": transport.client("dynamodb")})
