"""The store where the differential tests can not hold it (moto and DynamoDB Local answer
otherwise than DynamoDB), the rules those tests hold it to, checked without Java (so a
machine without DynamoDB Local still runs them), and its waiting and locking, in real and
simulated time."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from beekeeper.core.datamodel import (
    LEAVING_ATTRIBUTE,
    LEAVING_INDEX,
    LEFT_AT_ATTRIBUTE,
    table_definition,
)
from beekeeper.simulator.clock import Scheduler, SimulatedTiming
from beekeeper.simulator.fake_dynamodb import FakeTable
from beekeeper.simulator.faults import Faults
from beekeeper.store.client import StoreClient
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from tests.support.refusals import refusal

TABLE = "t"
URL = "https://sqs.local/q"


def table_client() -> StoreClient:
    database = DynamoDb(RealTime())
    database.create_table(TABLE)
    return StoreClient(database)


def room_table_client() -> StoreClient:
    """The room's own table, with its `leaving` index."""
    database = DynamoDb(RealTime())
    database.create_table_as_defined(table_definition(TABLE))
    return StoreClient(database)


def test_numbers_are_kept_as_dynamodb_normalises_them() -> None:
    """Leading and trailing zeros trimmed (the Developer Guide's item sizes page), in an item
    and in an update's values and results; DynamoDB Local keeps an update's as written."""
    client = table_client()
    client.put_item(
        TableName=TABLE, Item={"pk": {"S": "a"}, "x": {"N": "1.50"}, "y": {"N": "0100"}}
    )
    answer = client.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "a"}},
        UpdateExpression="ADD x :half SET z = :z, w = y + :z",
        ExpressionAttributeValues={":half": {"N": "0.50"}, ":z": {"N": "1.0e0"}},
        ReturnValues="ALL_NEW",
    )
    assert answer["Attributes"] == {
        "pk": {"S": "a"},
        "x": {"N": "2"},
        "y": {"N": "100"},
        "z": {"N": "1"},
        "w": {"N": "101"},
    }


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ({"pk": {"S": "a"}, "x": {"N": "1e200"}}, "Number overflow"),
        ({"pk": {"S": "a"}, "x": {"N": "1" * 39}}, "38 significant digits"),
        ({"pk": {"S": "a"}, "x": {"N": "twelve"}}, "cannot be converted"),
        ({"pk": {"S": "a"}, "x": {"N": " 1"}}, "cannot be converted"),
        ({"pk": {"S": "a"}, "x": {"N": "1_000"}}, "cannot be converted"),
        ({"pk": {"S": "a"}, "x": {"N": "1e-131"}}, "Number underflow"),
        ({"pk": {"S": "k" * 2049}}, "must be under 2048 bytes"),
        ({"pk": {"S": "a"}, "x": {"S": "a" * (400 * 1024 - 3)}}, "Item size has exceeded"),
        ({"pk": {"S": "a"}, "s": {"SS": ["b", "b"]}}, "contains duplicates"),
        ({"pk": {"S": "a"}, "s": {"SS": []}}, "may not be empty"),
        ({"pk": {"N": "1"}}, "Type mismatch for key pk"),
        ({"pk": {"S": ""}}, "cannot contain an empty string"),
    ],
)
def test_values_dynamodb_refuses_are_refused(item: dict[str, Any], says: str) -> None:
    code, message = refusal(table_client().put_item, TableName=TABLE, Item=item)
    assert code == "ValidationException"
    assert says in message


def test_requests_dynamodb_refuses_are_refused() -> None:
    client = table_client()
    code, message = refusal(client.get_item, TableName=TABLE, Key={"pk": {"N": "1"}})
    assert (code, message) == (
        "ValidationException",
        "The provided key element does not match the schema",
    )
    code, message = refusal(
        client.update_item,
        TableName=TABLE,
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET #nope = :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    assert code == "ValidationException" and "#nope" in message
    code, message = refusal(
        client.batch_write_item,
        RequestItems={TABLE: [{"PutRequest": {"Item": {"pk": {"S": f"k{i}"}}}} for i in range(26)]},
    )
    assert code == "ValidationException" and "Too many items" in message


def test_concurrent_increments_are_never_lost() -> None:
    client = table_client()

    def add() -> None:
        for _ in range(200):
            client.update_item(
                TableName=TABLE,
                Key={"pk": {"S": "n"}},
                UpdateExpression="ADD n :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
            )

    threads = [threading.Thread(target=add) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert client.get_item(TableName=TABLE, Key={"pk": {"S": "n"}})["Item"]["n"] == {"N": "1600"}


def test_a_waiting_long_poll_is_woken_by_a_send_in_real_time() -> None:
    queues = Sqs(RealTime())
    queues.create_queue("q", URL)
    client = StoreClient(queues)
    answers: list[tuple[float, dict[str, Any]]] = []
    started = time.monotonic()

    def receive() -> None:
        answer = client.receive_message(QueueUrl=URL, MaxNumberOfMessages=10, WaitTimeSeconds=10)
        answers.append((time.monotonic() - started, answer))

    waiter = threading.Thread(target=receive)
    waiter.start()
    time.sleep(0.3)
    client.send_message(QueueUrl=URL, MessageBody="hello")
    waiter.join(5)
    ((after, answer),) = answers
    assert [m["Body"] for m in answer["Messages"]] == ["hello"]
    assert after < 3  # woken by the send, not by the end of its 10 s


def test_a_waiting_long_poll_is_woken_by_a_send_in_simulated_time() -> None:
    scheduler = Scheduler(start=100.0)
    queues = Sqs(SimulatedTiming(scheduler))
    queues.create_queue("q", URL)
    client = StoreClient(queues)
    woken: list[tuple[float, list[str]]] = []

    def receive() -> None:
        answer = client.receive_message(QueueUrl=URL, MaxNumberOfMessages=10, WaitTimeSeconds=20)
        woken.append((scheduler.now, [m["Body"] for m in answer.get("Messages", [])]))

    scheduler.spawn(100.0, receive)
    scheduler.at(103.5, lambda: client.send_message(QueueUrl=URL, MessageBody="hello"))
    scheduler.run_until(200.0)
    assert woken == [(103.5, ["hello"])]


def test_a_message_hidden_for_longer_comes_back_then_and_not_before() -> None:
    scheduler = Scheduler(start=0.0)
    queues = Sqs(SimulatedTiming(scheduler))
    queues.create_queue("q", URL, visibility_timeout=30)
    client = StoreClient(queues)
    seen: list[tuple[float, int]] = []

    def consumer() -> None:
        client.send_message(QueueUrl=URL, MessageBody="m")
        (message,) = client.receive_message(QueueUrl=URL)["Messages"]
        client.change_message_visibility(
            QueueUrl=URL, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=90
        )
        client.change_message_visibility(
            QueueUrl=URL, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=120
        )
        for _ in range(2):
            answer = client.receive_message(QueueUrl=URL, WaitTimeSeconds=20)
            seen.append((scheduler.now, len(answer.get("Messages", []))))
            if not answer:
                scheduler.sleep(100)

    scheduler.spawn(0.0, consumer)
    scheduler.run_until(500.0)
    # Not back after the queue's 30 s nor the first change's 90 s: after the last one's 120 s.
    assert seen == [(20.0, 0), (120.0, 1)]


def test_the_simulators_short_receives_come_from_its_seed() -> None:
    from beekeeper.simulator.fake_sqs import FakeQueue
    from beekeeper.simulator.faults import Faults

    def receipts(seed: int) -> list[int]:
        scheduler = Scheduler()
        queue = FakeQueue(scheduler, random.Random(seed), Faults(), URL)
        for i in range(100):
            queue.send_message(QueueUrl=URL, MessageBody=str(i))
        return [
            len(queue.receive_message(QueueUrl=URL, MaxNumberOfMessages=10).get("Messages", []))
            for _ in range(20)
        ]

    assert receipts(3) == receipts(3)
    assert any(count < 10 for count in receipts(3))  # a standard queue's short receives


def test_a_query_of_an_index_the_table_lacks_is_a_validation_error() -> None:
    database = DynamoDb(RealTime())
    database.create_table_as_defined(table_definition(TABLE))
    client = StoreClient(database)
    code, message = refusal(
        client.query,
        TableName=TABLE,
        IndexName="no-such-index",
        KeyConditionExpression="#l = :yes",
        ExpressionAttributeNames={"#l": LEAVING_ATTRIBUTE},
        ExpressionAttributeValues={":yes": {"S": "1"}},
    )
    assert (code, message) == (
        "ValidationException",
        "The table does not have the specified index: no-such-index",
    )


def test_request_observers_learn_where_each_requests_writes_end() -> None:
    """A journal keeps a transaction whole by what the store tells it: every write of one
    request is told before the request's end, and a refused request ends with none."""
    database = DynamoDb(RealTime())
    database.create_table(TABLE)
    told: list[str] = []
    database.observers.append(lambda _table, pk, _item, _whole: told.append(pk))
    database.request_observers.append(lambda: told.append("|"))
    client = StoreClient(database)
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": pk}}}} for pk in ("a", "b", "c")
        ]
    )
    client.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})
    with pytest.raises(ClientError):
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "d"}}}},
                {
                    "Put": {
                        "TableName": TABLE,
                        "Item": {"pk": {"S": "a"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    client.batch_write_item(
        RequestItems={TABLE: [{"PutRequest": {"Item": {"pk": {"S": p}}}} for p in ("e", "f")]}
    )
    assert "".join(told) == "abc|||ef|"


def test_observers_learn_whether_an_item_was_written_whole() -> None:
    """A put (alone, in a batch or in a transaction) writes an item whole; an update does not:
    the simulator counts admissions by it, so a session's renewal is no admission."""
    database = DynamoDb(RealTime())
    database.create_table(TABLE)
    seen: list[tuple[str, bool]] = []
    database.observers.append(lambda _table, pk, _item, whole: seen.append((pk, whole)))
    client = StoreClient(database)
    client.put_item(TableName=TABLE, Item={"pk": {"S": "a"}})
    client.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET x = :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": {"pk": {"S": "b"}}}}]})
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "c"}}}},
            {
                "Update": {
                    "TableName": TABLE,
                    "Key": {"pk": {"S": "a"}},
                    "UpdateExpression": "SET y = :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                }
            },
        ]
    )
    client.delete_item(TableName=TABLE, Key={"pk": {"S": "b"}})
    assert seen == [("a", True), ("a", False), ("b", True), ("c", True), ("a", False), ("b", False)]


def admission(pk: str) -> dict[str, Any]:
    return {"Put": {"TableName": TABLE, "Item": {"pk": {"S": pk}, "admitted_at": {"N": "1"}}}}


def test_the_simulated_table_throttles_admission_transactions_and_logs_it() -> None:
    table = FakeTable(
        Scheduler(), random.Random(1), Faults(throttle=True, throttled_per_call=1), TABLE
    )
    code, _ = refusal(table.transact_write_items, TransactItems=[admission("v#a")])
    assert code == "TransactionCanceledException"
    assert table.injected.counts()["throttle"] == 1
    assert "v#a" not in table.items
    # A transaction that admits nobody is never throttled by the simulation.
    table.transact_write_items(
        TransactItems=[{"Put": {"TableName": TABLE, "Item": {"pk": {"S": "places"}}}}]
    )
    assert "places" in table.items


def test_the_simulated_table_counts_puts_of_admitted_visitors_not_their_renewals() -> None:
    table = FakeTable(Scheduler(), random.Random(1), Faults(), TABLE)
    table.transact_write_items(TransactItems=[admission("v#a")])
    renewal = {
        "TableName": TABLE,
        "Key": {"pk": {"S": "v#a"}},
        "UpdateExpression": "SET expires_at = :t",
        "ExpressionAttributeValues": {":t": {"N": "99"}},
    }
    table.update_item(**renewal)
    table.transact_write_items(TransactItems=[admission("v#a")])  # admitted twice: counted
    assert [token for _, token in table.admissions] == ["a", "a"]
    assert table.writes_per_id["a"] == 2


def refused_update(client: StoreClient, expression: str, **more: Any) -> tuple[str, str]:
    return refusal(
        client.update_item,
        TableName=TABLE,
        Key={"pk": {"S": "a"}},
        UpdateExpression=expression,
        **more,
    )


@pytest.mark.parametrize(
    ("expression", "condition", "says"),
    [
        ("SET state = :v", None, "reserved keyword: state"),
        ("SET x = :v", "attribute_exists(ttl)", "reserved keyword: ttl"),
        ("SET x = :v", "Status = :v", "reserved keyword: Status"),
        ("SET x = :v", "a.count = :v", "reserved keyword: count"),
        ("SET x = if_not_exists(name, :v)", None, "reserved keyword: name"),
        ("SET x = :v", "((x = :v))", "redundant parentheses"),
        ("SET x = ((:v))", None, "redundant parentheses"),
        ("SET x = :v", "x < :t", "operator or function: <, operand type: BOOL"),
        ("SET x = :v", "x = x", "first operand must be distinct"),
        ("SET _x = :v", None, "Syntax error"),
    ],
)
def test_expressions_dynamodb_refuses_are_refused(
    expression: str, condition: str | None, says: str
) -> None:
    client = table_client()
    used = {":v": {"N": "1"}, ":t": {"BOOL": True}}
    values = {k: v for k, v in used.items() if k in expression + (condition or "")}
    more: dict[str, Any] = {"ExpressionAttributeValues": values}
    if condition is not None:
        more["ConditionExpression"] = condition
    code, message = refused_update(client, expression, **more)
    assert code == "ValidationException"
    assert says in message


def test_reserved_words_are_taken_through_placeholders() -> None:
    client = table_client()
    answer = client.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET #s = :v, #t = :v",
        ConditionExpression="#s <> :v",
        ExpressionAttributeNames={"#s": "state", "#t": "ttl"},
        ExpressionAttributeValues={":v": {"N": "1"}},
        ReturnValues="ALL_NEW",
    )
    assert answer["Attributes"] == {"pk": {"S": "a"}, "state": {"N": "1"}, "ttl": {"N": "1"}}


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        ("absent <> :v", True),
        ("NOT absent = :v", True),
        ("absent = :v", False),
        ("absent < :v", False),
        ("absent >= :v", False),
        ("absent BETWEEN :v AND :v", False),
        ("absent IN (:v)", False),
        ("s <> :v", True),  # another type: never equal
        ("s < :v", False),  # nor ordered
        ("size(absent) <> :v", True),
    ],
)
def test_a_missing_attribute_equals_nothing_and_is_unequal_to_everything(
    condition: str, holds: bool
) -> None:
    """DynamoDB's `a <> b` is `NOT a = b`: true when either side is missing."""
    client = table_client()
    client.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "s": {"S": "x"}})
    request = {
        "TableName": TABLE,
        "Key": {"pk": {"S": "a"}},
        "UpdateExpression": "SET z = :v",
        "ConditionExpression": condition,
        "ExpressionAttributeValues": {":v": {"N": "1"}},
    }
    if holds:
        client.update_item(**request)
    else:
        code, _ = refusal(client.update_item, **request)
        assert code == "ConditionalCheckFailedException"


def test_the_condition_is_checked_before_the_update_that_needs_the_item() -> None:
    client = table_client()
    client.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "s": {"S": "x"}})
    one = {":v": {"N": "1"}}
    code, _ = refused_update(
        client,
        "SET z = s + :v",
        ConditionExpression="attribute_exists(zz)",
        ExpressionAttributeValues=one,
    )
    assert code == "ConditionalCheckFailedException"
    code, message = refused_update(client, "SET z = s + :v", ExpressionAttributeValues=one)
    assert (code, message) == (
        "ValidationException",
        "An operand in the update expression has an incorrect data type",
    )


@pytest.mark.parametrize(
    ("attributes", "says"),
    [
        ({LEAVING_ATTRIBUTE: {"S": ""}}, "cannot contain an empty string value"),
        ({LEAVING_ATTRIBUTE: {"N": "1"}}, "Type mismatch for Index Key leaving"),
        ({LEFT_AT_ATTRIBUTE: {"S": "1"}}, "Type mismatch for Index Key left_at"),
        ({LEAVING_ATTRIBUTE: {"S": "x" * 2049}}, "Size limit exceeded"),
    ],
)
def test_index_keys_dynamodb_refuses_are_refused(attributes: dict[str, Any], says: str) -> None:
    client = room_table_client()
    code, message = refusal(client.put_item, TableName=TABLE, Item={"pk": {"S": "a"}, **attributes})
    assert code == "ValidationException" and says in message
    ((name, value),) = attributes.items()
    code, message = refused_update(
        client,
        "SET #k = :k",
        ExpressionAttributeNames={"#k": name},
        ExpressionAttributeValues={":k": value},
    )
    assert code == "ValidationException"


def test_an_update_past_400_kb_is_refused_and_the_item_kept() -> None:
    client = table_client()
    big = {"pk": {"S": "a"}, "x": {"S": "a" * (400 * 1024 - 10)}}
    client.put_item(TableName=TABLE, Item=big)
    code, message = refused_update(
        client, "SET y = :s", ExpressionAttributeValues={":s": {"S": "12345678"}}
    )
    assert (code, message) == (
        "ValidationException",
        "Item size to update has exceeded the maximum allowed size",
    )
    assert client.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})["Item"] == big


def test_a_scan_reads_a_megabyte_a_page_and_says_where_it_stopped() -> None:
    """Items of a quarter megabyte: a page ends with the one that brings it to 1 MB."""
    client = table_client()
    quarter = 1024 * 1024 // 4
    for number in range(9):
        pk = f"i{number}"
        client.put_item(TableName=TABLE, Item={"pk": {"S": pk}, "x": {"S": "a" * (quarter - 5)}})
    pages, seen, start = [], [], None
    while True:
        answer = client.scan(TableName=TABLE, **({"ExclusiveStartKey": start} if start else {}))
        pages.append(answer["ScannedCount"])
        seen += [item["pk"]["S"] for item in answer["Items"]]
        start = answer.get("LastEvaluatedKey")
        if start is None:
            break
    assert pages == [4, 4, 1]
    assert sorted(seen) == [f"i{number}" for number in range(9)]


def test_a_query_of_the_leaving_index_resumes_after_its_last_evaluated_key() -> None:
    client = room_table_client()
    for number in (5, 1, 4, 2, 3):
        client.put_item(
            TableName=TABLE,
            Item={
                "pk": {"S": f"v#{number}"},
                LEAVING_ATTRIBUTE: {"S": "1"},
                LEFT_AT_ATTRIBUTE: {"N": str(number)},
            },
        )
    query = {
        "TableName": TABLE,
        "IndexName": LEAVING_INDEX,
        "KeyConditionExpression": "#l = :y",
        "ExpressionAttributeNames": {"#l": LEAVING_ATTRIBUTE},
        "ExpressionAttributeValues": {":y": {"S": "1"}},
        "Limit": 2,
    }
    order, start = [], None
    while True:
        answer = client.query(**query, **({"ExclusiveStartKey": start} if start else {}))
        order.append([item["pk"]["S"] for item in answer["Items"]])
        start = answer.get("LastEvaluatedKey")
        if start is None:
            break
    assert order == [["v#1", "v#2"], ["v#3", "v#4"], ["v#5"]]
