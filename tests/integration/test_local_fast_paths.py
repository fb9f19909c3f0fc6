"""The emulator workarounds answer exactly as moto's server does (local/fast_paths.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from beekeeper.local.emulator import Emulator, RoomResources
from beekeeper.local.fast_paths import EmulatorDynamoDb, InProcessTransport, fast_standard_sends
from beekeeper.local.integration import Boto3DynamoDb


@pytest.fixture(scope="module")
def emulator() -> Iterator[tuple[Emulator, RoomResources]]:
    emulator = Emulator()
    emulator.start()
    resources = emulator.create_room_resources("fast")
    dynamodb = emulator.client("dynamodb")
    dynamodb.put_item(
        TableName=resources.table_name,
        Item={
            "pk": {"S": "v#abc"},
            "admitted_at": {"N": "10"},
            "ok": {"BOOL": True},
            "tags": {"L": [{"S": "x"}, {"N": "2"}]},
            "meta": {"M": {"a": {"S": "b"}}},
        },
    )
    dynamodb.put_item(TableName=resources.table_name, Item={"pk": {"S": "status#3"}})
    try:
        yield emulator, resources
    finally:
        emulator.stop()


def reads(emulator: Emulator, table: str) -> list[Any]:
    dynamodb = emulator.client("dynamodb")
    answers: list[Any] = []
    for key in ("v#abc", "v#missing"):
        answer = dynamodb.get_item(TableName=table, Key={"pk": {"S": key}}, ConsistentRead=True)
        answers.append(answer.get("Item"))
    batch = dynamodb.batch_get_item(
        RequestItems={
            table: {"Keys": [{"pk": {"S": k}} for k in ("v#abc", "status#3", "v#missing")]}
        }
    )
    answers.append(sorted(batch["Responses"][table], key=lambda item: item["pk"]["S"]))
    answers.append(batch["UnprocessedKeys"])
    projected = dynamodb.get_item(
        TableName=table, Key={"pk": {"S": "v#abc"}}, ProjectionExpression="admitted_at"
    )
    answers.append(projected["Item"])
    for bad in ({"pk": {"S": ""}}, {"other": {"S": "x"}}):
        with pytest.raises(dynamodb.exceptions.ClientError) as error:
            dynamodb.get_item(TableName=table, Key=bad)
        answers.append(error.value.response["Error"]["Code"])
    with pytest.raises(dynamodb.exceptions.ResourceNotFoundException):
        dynamodb.get_item(TableName="nope", Key={"pk": {"S": "x"}})
    return answers


def test_in_process_reads_answer_as_the_server_does(
    emulator: tuple[Emulator, RoomResources],
) -> None:
    server, resources = emulator
    over_http = reads(server, resources.table_name)
    transport = InProcessTransport(server.endpoint_url)
    transport.install()
    try:
        in_process = reads(server, resources.table_name)
    finally:
        transport.uninstall()
    assert in_process == over_http
    assert over_http[0]["tags"] == {"L": [{"S": "x"}, {"N": "2"}]}
    assert over_http[1] is None
    assert transport.calls >= 5  # the calls really took the in-process path


def test_fast_sends_keep_the_queue_as_moto_keeps_it(
    emulator: tuple[Emulator, RoomResources],
) -> None:
    server, resources = emulator
    sqs = server.client("sqs")
    release = fast_standard_sends()
    try:
        sent = [
            sqs.send_message(QueueUrl=resources.queue_url, MessageBody=f"m{i}") for i in range(5)
        ]
    finally:
        release()
    assert all(answer["MessageId"] for answer in sent)  # botocore checked each body's MD5
    got = sqs.receive_message(QueueUrl=resources.queue_url, MaxNumberOfMessages=10)["Messages"]
    assert sorted(m["Body"] for m in got) == [f"m{i}" for i in range(5)]
    attributes = sqs.get_queue_attributes(
        QueueUrl=resources.queue_url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "5"


def updated(answer: dict[str, Any], returns: str) -> Any:
    attributes = answer.get("Attributes")
    if returns == "UPDATED_NEW" and attributes:
        # DynamoDB returns only the updated attributes (the fast path too); moto adds the key.
        attributes = {k: v for k, v in attributes.items() if k != "pk"}
    return attributes


def counter_calls(emulator: Emulator, table: str) -> list[Any]:
    dynamodb = emulator.client("dynamodb")
    answers: list[Any] = []
    for returns in ("UPDATED_NEW", "ALL_NEW", "NONE"):
        answer = dynamodb.update_item(
            TableName=table,
            Key={"pk": {"S": f"arrivals#{returns}"}},
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues=returns,
        )
        answers.append(updated(answer, returns))
        answer = dynamodb.update_item(
            TableName=table,
            Key={"pk": {"S": f"arrivals#{returns}"}},
            UpdateExpression="ADD n :two",
            ExpressionAttributeValues={":two": {"N": "41"}},
            ReturnValues=returns,
        )
        answers.append(updated(answer, returns))
    dynamodb.put_item(TableName=table, Item={"pk": {"S": "text"}, "n": {"S": "words"}})
    with pytest.raises(dynamodb.exceptions.ClientError) as error:
        dynamodb.update_item(
            TableName=table,
            Key={"pk": {"S": "text"}},
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
    answers.append(error.value.response["Error"]["Code"])
    return answers


def test_in_process_counters_answer_as_the_server_does_and_lose_no_increment(
    emulator: tuple[Emulator, RoomResources],
) -> None:
    server, resources = emulator
    over_http = counter_calls(server, resources.table_name)
    server.client("dynamodb").delete_item(
        TableName=resources.table_name, Key={"pk": {"S": "arrivals#UPDATED_NEW"}}
    )
    for returns in ("ALL_NEW", "NONE"):
        server.client("dynamodb").delete_item(
            TableName=resources.table_name, Key={"pk": {"S": f"arrivals#{returns}"}}
        )
    transport = InProcessTransport(server.endpoint_url)
    transport.install()
    try:
        assert counter_calls(server, resources.table_name) == over_http
        dynamodb = server.client("dynamodb")

        def add_many() -> None:
            for _ in range(50):
                dynamodb.update_item(
                    TableName=resources.table_name,
                    Key={"pk": {"S": "together"}},
                    UpdateExpression="ADD n :one",
                    ExpressionAttributeValues={":one": {"N": "1"}},
                )

        threads = [threading.Thread(target=add_many) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        transport.uninstall()
    total = server.client("dynamodb").get_item(
        TableName=resources.table_name, Key={"pk": {"S": "together"}}
    )["Item"]["n"]
    assert total == {"N": "400"}
    assert over_http[0] == {"n": {"N": "1"}}
    assert over_http[1] == {"n": {"N": "42"}}


def test_in_process_sends_are_received_with_their_md5_checked(
    emulator: tuple[Emulator, RoomResources],
) -> None:
    server, resources = emulator
    sqs = server.client("sqs")
    transport = InProcessTransport(server.endpoint_url)
    transport.install()
    try:
        sent = sqs.send_message(QueueUrl=resources.dead_letter_queue_url, MessageBody="token.1")
    finally:
        transport.uninstall()
    got = sqs.receive_message(QueueUrl=resources.dead_letter_queue_url)["Messages"]
    assert [(m["MessageId"], m["Body"]) for m in got] == [(sent["MessageId"], "token.1")]


class RecordingTarget:
    """The boto3 target, counting what reaches it."""

    def __init__(self, target: Boto3DynamoDb) -> None:
        self._target = target
        self.actions: list[str] = []

    def __call__(self, action: str, body: str) -> tuple[int, str]:
        self.actions.append(action)
        return self._target(action, body)


def test_template_requests_are_answered_as_boto3_and_moto_answer_them(
    emulator: tuple[Emulator, RoomResources],
) -> None:
    server, resources = emulator
    table = resources.table_name
    boto3_target = Boto3DynamoDb(server.client("dynamodb"))
    through_moto = RecordingTarget(boto3_target)
    direct = EmulatorDynamoDb(moto=through_moto)

    def keys(*names: str) -> list[dict[str, Any]]:
        return [{"pk": {"S": name}} for name in names]

    plain = [
        ("GetItem", {"TableName": table, "Key": keys("v#abc")[0]}),
        ("GetItem", {"TableName": table, "Key": keys("v#!")[0], "ConsistentRead": True}),
        ("BatchGetItem", {"RequestItems": {table: {"Keys": keys("v#abc", "status#3")}}}),
        ("BatchGetItem", {"RequestItems": {table: {"Keys": keys("v#!")}}}),
    ]
    for action, request in plain:
        body = json.dumps(request)
        assert parsed(direct(action, body)) == parsed(boto3_target(action, body))
    assert through_moto.actions == []  # every plain read was answered without boto3

    refused = [
        ("GetItem", json.dumps({"TableName": "nope", "Key": keys("v#abc")[0]})),
        ("GetItem", json.dumps({"TableName": table, "Key": {"pk": {"S": ""}}})),
        ("GetItem", json.dumps({"TableName": table, "Key": keys("x")[0], "ConsistentRead": 1})),
        ("BatchGetItem", json.dumps({"RequestItems": {table: {"Keys": keys("a", "a")}}})),
        ("BatchGetItem", json.dumps({"RequestItems": {table: 7}})),
        ("GetItem", '{"TableName": '),
        ("GetItem", "[]"),
    ]
    for action, body in refused:
        status, answer = direct(action, body)
        assert 400 <= status < 500, (body, answer)
        assert (status, json.loads(answer)["__type"]) == _status_and_type(
            boto3_target(action, body)
        )
    assert len(through_moto.actions) == len(refused)  # each went to moto for its answer


def parsed(answer: tuple[int, str]) -> tuple[int, Any]:
    status, body = answer
    document = json.loads(body)
    # moto adds ConsumedCapacity unasked; DynamoDB (and the fast path) only when asked for it.
    document.pop("ConsumedCapacity", None)
    for items in document.get("Responses", {}).values():
        items.sort(key=lambda item: item["pk"]["S"])
    return status, document


def _status_and_type(answer: tuple[int, str]) -> tuple[int, str]:
    return answer[0], json.loads(answer[1])["__type"]
