"""The store holds a million visitors' items in little memory (store/stored_items.py) and checks
a request's expressions once per shape of request (store/dynamodb_validation.py), and answers
and refuses exactly as before: what the differential tests (tests/functional/store) hold
against DynamoDB Local, here for what those tests do not reach."""

from __future__ import annotations

import tracemalloc
import uuid
from typing import Any

from beekeeper.core.datamodel import table_definition
from beekeeper.store.client import StoreClient
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from tests.support.refusals import refusal

TABLE = "t"
VISITORS = 2_000
# A visitor's item in the simulator of a million: the visitor's key, its number, its times.
MOST_BYTES_PER_VISITOR = 600


def room_table() -> tuple[DynamoDb, StoreClient]:
    database = DynamoDb(RealTime())
    database.create_table_as_defined(table_definition(TABLE))
    return database, StoreClient(database)


def visitor(number: int) -> dict[str, Any]:
    return {
        "pk": {"S": f"v#{number:022d}"},
        "ordinal": {"N": str(number)},
        "admitted_at": {"N": str(1_800_000_000 + number // 5_000)},
        "expires_at": {"N": str(1_800_003_600 + number // 5_000)},
        "ttl": {"N": str(1_800_090_000 + number // 5_000)},
    }


def test_a_visitors_item_costs_the_store_a_few_hundred_bytes() -> None:
    """1,000,000 visitors in at most 2 GB (issue 36): held in DynamoDB's wire shape, a dict per
    attribute, each of these items took about 1,400 bytes (now under 200)."""
    _, client = room_table()
    for number in range(VISITORS):  # the store's caches filled first: they are bounded
        client.put_item(TableName=TABLE, Item=visitor(number))
    database, client = room_table()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for number in range(VISITORS):
            client.put_item(TableName=TABLE, Item=visitor(number))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(database.tables[TABLE].items) == VISITORS
    assert held / VISITORS <= MOST_BYTES_PER_VISITOR


def test_every_type_comes_back_as_written_and_a_read_item_is_a_copy() -> None:
    database, client = room_table()
    item = {
        "pk": {"S": "a"},
        "n": {"N": "0100.50"},
        "b": {"B": "AAE="},
        "yes": {"BOOL": True},
        "none": {"NULL": True},
        "ss": {"SS": ["x", "y"]},
        "ns": {"NS": ["1", "2.0"]},
        "bs": {"BS": ["AAE="]},
        "list": {"L": [{"S": "x"}, {"M": {"k": {"N": "1"}}}, {"L": []}]},
        "map": {"M": {"inner": {"SS": ["z"]}, "empty": {"M": {}}}},
    }
    client.put_item(TableName=TABLE, Item=item)
    read = client.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})["Item"]
    assert list(read) == list(item)  # the item's order, which the answer's JSON keeps
    assert read == {**item, "n": {"N": "100.5"}, "ns": {"NS": ["1", "2"]}}
    stored = database.tables[TABLE].items["a"]
    stored["list"]["L"].append({"S": "more"})
    stored["map"]["M"]["inner"]["SS"].append("more")
    assert client.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})["Item"] == read


def test_a_shape_of_request_that_passed_is_checked_again_with_new_values() -> None:
    """The expressions' checks are kept per expression, names and value types: values of another
    type, or BETWEEN bounds in the wrong order, are refused after the same text passed."""
    _, client = room_table()

    def update(expression: str, condition: str | None = None, **values: str) -> dict[str, Any]:
        """An update of item `a`; `values`: each placeholder's type and text (`v="N 1"`)."""
        request: dict[str, Any] = {
            "TableName": TABLE,
            "Key": {"pk": {"S": "a"}},
            "UpdateExpression": expression,
            "ExpressionAttributeValues": {
                f":{name}": dict([typed.split(" ")]) for name, typed in values.items()
            },
        }
        if condition is not None:
            request["ConditionExpression"] = condition
        return request

    client.update_item(**update("ADD n :v", v="N 1"))
    code, message = refusal(client.update_item, **update("ADD n :v", v="S 1"))
    assert code == "ValidationException" and "operand type: STRING" in message
    between = "n BETWEEN :lo AND :hi"
    client.update_item(**update("SET m = :v", between, v="N 1", lo="N 1", hi="N 2"))
    code, message = refusal(
        client.update_item, **update("SET m = :v", between, v="N 1", lo="N 2", hi="N 1")
    )
    assert code == "ValidationException" and "upper bound to be greater" in message
    code, message = refusal(client.update_item, **update("ADD n :v", v="N 1", w="N 1"))
    assert code == "ValidationException" and "unused in expressions: keys: {:w}" in message


def test_a_messages_id_is_its_number_as_a_uuid() -> None:
    queues = Sqs(RealTime())
    url = "https://sqs.local/q"
    queues.create_queue("q", url)
    sqs = StoreClient(queues)
    sent = [sqs.send_message(QueueUrl=url, MessageBody=f"m{i}")["MessageId"] for i in range(3)]
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert sent == [str(uuid.UUID(int=i)) for i in range(3)]
    assert [m["MessageId"] for m in received] == sent


def test_a_scans_pages_see_the_keys_that_came_and_went_between_them() -> None:
    """A Scan reads in key order from where its last page ended: an item put after that key
    before the next page is in it, one deleted is not (the sorted keys are kept between pages
    only while no key comes or goes)."""
    _, client = room_table()
    for name in ("b", "d", "f"):
        client.put_item(TableName=TABLE, Item={"pk": {"S": name}})
    first = client.scan(TableName=TABLE, Limit=1)
    assert [item["pk"]["S"] for item in first["Items"]] == ["b"]
    client.put_item(TableName=TABLE, Item={"pk": {"S": "c"}})
    client.put_item(TableName=TABLE, Item={"pk": {"S": "d"}, "again": {"N": "1"}})  # no new key
    client.delete_item(TableName=TABLE, Key={"pk": {"S": "f"}})
    rest = client.scan(TableName=TABLE, ExclusiveStartKey=first["LastEvaluatedKey"])
    assert [item["pk"]["S"] for item in rest["Items"]] == ["c", "d"]
    assert rest["Items"][1]["again"] == {"N": "1"}
