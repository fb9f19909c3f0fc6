"""The store answers the room's requests as DynamoDB Local (AWS's own DynamoDB emulator) does.

Each scenario of tests/support/store_scenarios.py runs on DynamoDB Local and on the store
through local mode's boto3 clients, on a table created from `core.datamodel.table_definition`;
the transcripts must be equal.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from beekeeper.core.datamodel import table_definition
from beekeeper.local.store_transport import StoreTransport
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from beekeeper.store.wire import JsonProtocol
from tests.support.dynamodb_local import DynamoDbLocal
from tests.support.store_scenarios import SCENARIOS, TABLE, Side, assert_same_transcripts


@pytest.fixture()
def local_side(dynamodb_local: DynamoDbLocal) -> Iterator[Side]:
    client = dynamodb_local.client()
    client.create_table(**table_definition(TABLE))
    try:
        yield Side({"dynamodb": client})
    finally:
        client.delete_table(TableName=TABLE)


@pytest.fixture()
def store_side() -> Side:
    timing = RealTime()
    database = DynamoDb(timing)
    database.create_table_as_defined(table_definition(TABLE))
    transport = StoreTransport(JsonProtocol(database, Sqs(timing)), "http://127.0.0.1:9/diff")
    return Side({"dynamodb": transport.client("dynamodb")})


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_store_answers_as_dynamodb_local_does(
    local_side: Side, store_side: Side, scenario: str
) -> None:
    SCENARIOS[scenario](local_side)
    SCENARIOS[scenario](store_side)
    assert_same_transcripts(store_side, local_side, scenario)
