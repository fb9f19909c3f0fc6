"""The store answers the room's requests as moto (AWS's own model of DynamoDB, SQS and Secrets
Manager) does.

Every scenario runs twice on the same requests: once against moto (in process, `mock_aws`),
once against the store through local mode's boto3 clients (botocore builds, sends and parses
both). The transcripts, each answer or refusal in turn, must be equal: successes compared
whole (sets as sets; SQS's opaque ids and handles left out), refusals by their error code and
modeled fields (a cancelled transaction's reasons, a failed condition's item).

Covered: the templates' reads (refusals included), every write the producer, trigger,
consumer, governor and CLI make, and what capacity mode uses: TransactWriteItems with
condition checks, string-set ADD and DELETE, DeleteItem, GetItem and UpdateItem with every
ReturnValues, the warden's Query of the sparse `leaving` index, SQS's ChangeMessageVisibility
with a timeout and PurgeQueue (once a minute, as `beekeeper reset` uses it), and what local
mode and `beekeeper keys` do with the ticket keys' secret (CreateSecret, GetSecretValue,
PutSecretValue, DeleteSecret).
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from beekeeper.core import client_check, sessions
from beekeeper.core.datamodel import (
    LEAVING_ATTRIBUTE,
    LEAVING_INDEX,
    LEAVING_VALUE,
    LEFT_AT_ATTRIBUTE,
    table_definition,
)
from beekeeper.local.store_transport import StoreTransport
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.secretsmanager import SecretsManager
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from beekeeper.store.wire import JsonProtocol, TemplateTarget

TABLE = "beekeeper-diff"
REGION = "us-east-1"
Outcome = tuple[Any, ...]


# Where moto is not DynamoDB, the test leaves the case out and tests/unit/test_store.py holds
# the store to DynamoDB's documented answer instead: numbers are normalised ("2.00" is "2"),
# 1e200 is out of range, a set with duplicate members and a key of the wrong type are
# refused, an undefined `#name` is a ValidationException (moto raises KeyError). One moto
# answer is adjusted here: UpdateItem's UPDATED_NEW/UPDATED_OLD return only the attributes
# the update expression names (DynamoDB's documentation), where moto adds the key of an item
# the update created. A Query of an index the table lacks is DynamoDB's ValidationException
# (moto: ResourceNotFoundException). For Secrets Manager, moto accepts what Secrets Manager
# refuses (a name with other characters, a string and a binary value together, a new value or
# a new secret of the same name while a secret is scheduled for deletion):
# tests/unit/test_store.py holds the store to the refusals Secrets Manager documents.


class Side:
    """One side of the comparison: a DynamoDB and an SQS client, and a transcript."""

    def __init__(
        self, dynamodb: Any, sqs: Any, secretsmanager: Any, queue_url: str, dlq_url: str
    ) -> None:
        self.clients = {"dynamodb": dynamodb, "sqs": sqs, "secretsmanager": secretsmanager}
        self.queue_url = queue_url
        self.dlq_url = dlq_url
        self.transcript: list[Outcome] = []
        self.is_moto = False

    def call(self, service: str, operation: str, **request: Any) -> dict[str, Any]:
        try:
            answer = getattr(self.clients[service], operation)(**request)
            if self.is_moto and str(request.get("ReturnValues", "")).startswith("UPDATED"):
                answer.get("Attributes", {}).pop("pk", None)
        except ClientError as error:
            response = error.response
            extras = {
                "reasons": response.get("CancellationReasons"),
                "item": response.get("Item"),
            }
            self.transcript.append(
                (operation, "refused", response["Error"]["Code"], _normal(extras))
            )
            return {}
        self.transcript.append((operation, "answered", _normal(_comparable(answer))))
        return answer


# moto adds these to every answer; DynamoDB only when the request asks for them (none does).
_UNASKED = ("ResponseMetadata", "ConsumedCapacity", "ItemCollectionMetrics")


def _comparable(answer: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in answer.items() if k not in _UNASKED}
    if "Messages" in out:
        out["Messages"] = [
            {k: v for k, v in m.items() if k not in ("MessageId", "ReceiptHandle")}
            for m in out["Messages"]
        ]
    out.pop("MessageId", None)
    for key in ("Successful", "Failed"):
        if key in out:  # ids are ours; the failure's wording is the service's
            out[key] = sorted((e.get("Id"), e.get("Code")) for e in out[key])
    if "Attributes" in out and "QueueArn" in out["Attributes"]:
        out["Attributes"].pop("QueueArn")
    return _secret_answer(out)


# A secret's ARN: the account differs, the six characters after the name are random.
_SECRET_ARN = re.compile(r"^arn:aws:secretsmanager:us-east-1:\d{12}:secret:(.+)-[A-Za-z0-9]{6}$")
_GENERATED_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _secret_answer(out: dict[str, Any]) -> dict[str, Any]:
    """Secrets Manager's answers with what differs by nature made comparable: the ARN's
    account and suffix, a version id boto3 generated, the dates (a deletion date as the
    days from now)."""
    if "ARN" in out:
        named = _SECRET_ARN.match(str(out["ARN"]))
        out["ARN"] = f"<arn of {named.group(1)}>" if named else out["ARN"]
    if _GENERATED_ID.match(str(out.get("VersionId", ""))):
        out["VersionId"] = "<generated>"
    if "CreatedDate" in out:
        out["CreatedDate"] = isinstance(out["CreatedDate"], datetime.datetime)
    if "DeletionDate" in out:
        ahead = out["DeletionDate"] - datetime.datetime.now(datetime.UTC)
        out["DeletionDate"] = f"in {round(ahead.total_seconds() / 86_400)} days"
    return out


def _normal(value: Any) -> Any:
    """Sets compared as sets (DynamoDB returns their members in no particular order)."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in ("SS", "NS", "BS"):
            ((kind, members),) = value.items()
            return {kind: sorted(members)}
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _create(dynamodb: Any, sqs: Any) -> tuple[str, str]:
    """What the tests need of the stack: the table, the queue and its dead-letter queue."""
    dynamodb.create_table(**table_definition(TABLE))
    dlq = sqs.create_queue(QueueName="diff-dead-letters")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue = sqs.create_queue(
        QueueName="diff-visitors",
        Attributes={
            "VisibilityTimeout": "60",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 2}),
        },
    )["QueueUrl"]
    return queue, dlq


@pytest.fixture()
def moto_side() -> Iterator[Side]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        secretsmanager = boto3.client("secretsmanager", region_name=REGION)
        queue, dlq = _create(dynamodb, sqs)
        side = Side(dynamodb, sqs, secretsmanager, queue, dlq)
        side.is_moto = True
        yield side


@pytest.fixture()
def store_side() -> Side:
    timing = RealTime()
    database, queues = DynamoDb(timing), Sqs(timing)
    database.create_table_as_defined(table_definition(TABLE))
    endpoint = "http://127.0.0.1:9/diff"
    dead_letters = queues.create_queue("diff-dead-letters", f"{endpoint}/0/diff-dead-letters")
    visitors = queues.create_queue(
        "diff-visitors",
        f"{endpoint}/0/diff-visitors",
        visibility_timeout=60,
        max_receives=2,
        dead_letter=dead_letters,
    )
    secrets = SecretsManager(timing, region=REGION)
    transport = StoreTransport(JsonProtocol(database, queues, secrets), endpoint)
    side = Side(
        transport.client("dynamodb"),
        transport.client("sqs"),
        transport.client("secretsmanager"),
        visitors.url,
        dead_letters.url,
    )
    side.template_target = TemplateTarget(database)  # type: ignore[attr-defined]
    return side


def key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}}


def n(value: int | str) -> dict[str, str]:
    return {"N": str(value)}


# -- scenarios: each makes the same calls on a side ------------------------------------------


def templates_reads(side: Side) -> None:
    """The /polling and /client templates' requests, and what a bad one gets."""
    side.call("dynamodb", "put_item", TableName=TABLE, Item={**key("v#a"), "expires_at": n(9)})
    side.call("dynamodb", "put_item", TableName=TABLE, Item={**key("status#1"), "rate": n(60)})
    side.call(
        "dynamodb", "batch_get_item", RequestItems={TABLE: {"Keys": [key("v#a"), key("status#1")]}}
    )
    side.call("dynamodb", "batch_get_item", RequestItems={TABLE: {"Keys": [key("v#nobody")]}})
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("v#a"))
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("v#nobody"))
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("v#a"), ConsistentRead=True)
    side.call("dynamodb", "get_item", TableName="no-such-table", Key=key("v#a"))
    side.call("dynamodb", "batch_get_item", RequestItems={"no-such-table": {"Keys": [key("a")]}})
    side.call("dynamodb", "batch_get_item", RequestItems={TABLE: {"Keys": [key("a"), key("a")]}})
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key(""))
    side.call("dynamodb", "get_item", TableName=TABLE, Key={**key("a"), "other": n(1)})
    side.call(
        "dynamodb",
        "batch_get_item",
        RequestItems={TABLE: {"Keys": [key(f"k{i}") for i in range(101)]}},
    )
    side.call(
        "dynamodb", "get_item", TableName=TABLE, Key=key("v#a"), ProjectionExpression="expires_at"
    )
    # /client: a check, a redeem (once; the second's refusal carries the item as it was), on a
    # valid, an expired and a missing admission; capacity mode's session redeem.
    side.call("dynamodb", "put_item", TableName=TABLE, Item={**key("v#b"), "expires_at": n(99)})
    for token_id in ("b", "a", "nobody"):
        for redeem in (False, True, True):
            side.call(
                "dynamodb",
                "update_item",
                **client_check.check_request(TABLE, token_id, now=50, redeem=redeem),
            )
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={**key("v#c"), "expires_at": n(99), "state": {"S": "admitted"}, "ticket": {"S": "t"}},
    )
    for redeem in (False, True, True):
        side.call(
            "dynamodb",
            "update_item",
            **sessions.session_request(TABLE, "c", now=50, session_seconds=60, redeem=redeem),
        )


def counters_and_claims(side: Side) -> None:
    """The producer's counters, the trigger's claim, the consumer's counts and admissions."""
    for _ in range(3):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("arrivals#3"),
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": n(1)},
            ReturnValues="UPDATED_NEW",
        )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("quiet"),
        UpdateExpression="SET n = :next",
        ConditionExpression="attribute_not_exists(n) OR n < :next",
        ExpressionAttributeValues={":next": n(5)},
        ReturnValues="ALL_NEW",
    )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("quiet"),
        UpdateExpression="SET n = :next",
        ConditionExpression="attribute_not_exists(n) OR n < :next",
        ExpressionAttributeValues={":next": n(4)},
    )
    for _ in range(2):
        side.call(
            "dynamodb",
            "put_item",
            TableName=TABLE,
            Item={**key("minute#7"), "rate": n(60)},
            ConditionExpression="attribute_not_exists(pk)",
        )
    side.call(
        "dynamodb",
        "batch_write_item",
        RequestItems={
            TABLE: [
                {"PutRequest": {"Item": {**key(f"v#{i}"), "ordinal": n(i), "ttl": n(99)}}}
                for i in range(25)
            ]
        },
    )
    side.call(
        "dynamodb",
        "batch_write_item",
        RequestItems={
            TABLE: [{"PutRequest": {"Item": key("dup")}}, {"PutRequest": {"Item": key("dup")}}]
        },
    )
    side.call(
        "dynamodb",
        "batch_get_item",
        RequestItems={TABLE: {"Keys": [key("v#3"), key("v#24")], "ConsistentRead": True}},
    )
    side.call(
        "dynamodb",
        "batch_write_item",
        RequestItems={TABLE: [{"DeleteRequest": {"Key": key("v#3")}}]},
    )
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("v#3"))


def config_writes(side: Side) -> None:
    """`beekeeper on/off/rate`, the governor's conditional rate, the wake-up's claim."""
    values = {":now": n(100), ":one": n(1), ":deployed": n(60), ":enabled": {"BOOL": False}}
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("config"),
        UpdateExpression="SET updated_at = :now, enabled = :enabled, "
        "operator_rate = if_not_exists(operator_rate, :deployed), "
        "rate = if_not_exists(rate, :deployed) ADD version :one",
        ExpressionAttributeValues=values,
        ReturnValues="ALL_NEW",
    )
    for version in (1, 1, 7):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("config"),
            UpdateExpression="SET rate = :rate, updated_at = :now",
            ConditionExpression="version = :version",
            ExpressionAttributeValues={":rate": n(30), ":now": n(101), ":version": n(version)},
        )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("minute#9"),
        UpdateExpression="SET woken_at = :now",
        ConditionExpression="attribute_exists(pk) AND attribute_not_exists(woken_at)",
        ExpressionAttributeValues={":now": n(5)},
    )
    side.call("dynamodb", "put_item", TableName=TABLE, Item={**key("minute#9"), "consumers": n(0)})
    for _ in range(2):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("minute#9"),
            UpdateExpression="SET woken_at = :now",
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(woken_at)",
            ExpressionAttributeValues={":now": n(5)},
            ReturnValues="UPDATED_OLD",
        )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("minute#9"),
        UpdateExpression="REMOVE woken_at",
        ReturnValues="UPDATED_OLD",
    )
    side.call("dynamodb", "delete_item", TableName=TABLE, Key=key("governor"))
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("config"))


def return_values(side: Side) -> None:
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={**key("r"), "a": n(1), "b": {"S": "x"}, "c": {"BOOL": True}},
    )
    for returns in ("NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("r"),
            UpdateExpression="SET b = :b ADD a :half REMOVE c",
            ExpressionAttributeValues={":b": {"S": returns}, ":half": n(2)},
            ReturnValues=returns,
        )
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={**key("r"), "z": n(1)},
        ReturnValues="ALL_OLD",
    )
    side.call("dynamodb", "delete_item", TableName=TABLE, Key=key("r"), ReturnValues="ALL_OLD")
    side.call("dynamodb", "delete_item", TableName=TABLE, Key=key("r"), ReturnValues="ALL_OLD")
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("fresh"),
        UpdateExpression="SET a = :a",
        ExpressionAttributeValues={":a": n(1)},
        ReturnValues="UPDATED_OLD",
    )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("fresh"),
        UpdateExpression="SET a = :a",
        ConditionExpression="a = :zero",
        ExpressionAttributeValues={":a": n(2), ":zero": n(0)},
        ReturnValuesOnConditionCheckFailure="ALL_OLD",
    )
    side.call(
        "dynamodb",
        "delete_item",
        TableName=TABLE,
        Key=key("fresh"),
        ConditionExpression="attribute_not_exists(pk)",
        ReturnValuesOnConditionCheckFailure="ALL_OLD",
    )


def string_sets(side: Side) -> None:
    def update(expression: str, members: list[str], returns: str = "ALL_NEW") -> None:
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("lanes"),
            UpdateExpression=expression,
            ExpressionAttributeValues={":m": {"SS": members}},
            ReturnValues=returns,
        )

    update("ADD held :m", ["a", "b"])
    update("ADD held :m", ["b", "c"], "UPDATED_NEW")
    for most in (2, 4):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("lanes"),
            UpdateExpression="ADD held :m",
            ConditionExpression="contains(held, :one) OR size(held) < :most",
            ExpressionAttributeValues={":m": {"SS": ["q"]}, ":one": {"S": "q"}, ":most": n(most)},
            ReturnValues="ALL_NEW",
        )
    update("DELETE held :m", ["a", "x"], "UPDATED_OLD")
    update("DELETE held :m", ["b", "c", "q"])  # the last members: the attribute goes
    update("DELETE held :m", ["b"])  # from nothing: nothing happens
    update("ADD held :m", [])  # an empty set is refused
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("lanes"),
        UpdateExpression="ADD held :m",
        ExpressionAttributeValues={":m": {"S": "a"}},
    )


def transactions(side: Side) -> None:
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={**key("lease"), "held": {"SS": ["l1"]}, "n": n(1)},
    )

    def transact(*items: dict[str, Any]) -> None:
        side.call("dynamodb", "transact_write_items", TransactItems=list(items))

    check_free = {
        "ConditionCheck": {
            "TableName": TABLE,
            "Key": key("lease"),
            "ConditionExpression": "NOT contains(held, :lane)",
            "ExpressionAttributeValues": {":lane": {"S": "l2"}},
        }
    }
    take = {
        "Update": {
            "TableName": TABLE,
            "Key": key("slot#2"),
            "UpdateExpression": "SET lane = :lane ADD n :one",
            "ConditionExpression": "attribute_not_exists(lane)",
            "ExpressionAttributeValues": {":lane": {"S": "l2"}, ":one": n(1)},
        }
    }
    transact(check_free, take)  # succeeds
    transact(check_free, take)  # the slot is taken: cancelled, the first reason "None"
    transact(
        {
            "Put": {
                "TableName": TABLE,
                "Item": {**key("p"), "v": n(1)},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {
            "Delete": {
                "TableName": TABLE,
                "Key": key("lease"),
                "ConditionExpression": "n = :two",
                "ExpressionAttributeValues": {":two": n(2)},
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        },
    )
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("p"))  # not written: all or nothing
    transact(
        {"Put": {"TableName": TABLE, "Item": {**key("p"), "v": n(1)}}},
        {
            "Update": {
                "TableName": TABLE,
                "Key": key("lease"),
                "UpdateExpression": "DELETE held :l",
                "ExpressionAttributeValues": {":l": {"SS": ["l1"]}},
            }
        },
        {"Delete": {"TableName": TABLE, "Key": key("slot#2")}},
    )
    for pk in ("p", "lease", "slot#2"):
        side.call("dynamodb", "get_item", TableName=TABLE, Key=key(pk))
    transact(
        take,
        {
            "ConditionCheck": {
                "TableName": TABLE,
                "Key": key("slot#2"),
                "ConditionExpression": "attribute_exists(pk)",
            }
        },
    )


def refused_expressions(side: Side) -> None:
    side.call(
        "dynamodb", "put_item", TableName=TABLE, Item={**key("e"), "s": {"S": "text"}, "n": n(1)}
    )

    def update(expression: str, values: dict[str, Any] | None = None, **more: Any) -> None:
        request: dict[str, Any] = {
            "TableName": TABLE,
            "Key": key("e"),
            "UpdateExpression": expression,
        }
        if values is not None:
            request["ExpressionAttributeValues"] = values
        side.call("dynamodb", "update_item", **request, **more)

    update("ADD s :one", {":one": n(1)})  # ADD to a string
    update("SET a = missing + :one", {":one": n(1)})  # reads an attribute that is not there
    update("SET a = s + :one", {":one": n(1)})  # arithmetic on a string
    update("SET pk = :v", {":v": {"S": "x"}})  # the key
    update("SET n = :one", {":one": n(1), ":unused": n(2)})  # a value not used
    update("SET n = :nope", {":one": n(1)})  # a value not given
    update("SET n = :one, n = :two", {":one": n(1), ":two": n(2)})  # overlapping paths
    update("SET n = :one", {":one": n(1)}, ReturnValues="ALL_AND_MORE")
    side.call("dynamodb", "put_item", TableName=TABLE, Item={"other": {"S": "x"}})
    side.call("dynamodb", "put_item", TableName=TABLE, Item=key(""))
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("e"))


def queue_calls(side: Side) -> None:
    for body in ("a.1", "b.2", "c.3"):
        side.call("sqs", "send_message", QueueUrl=side.queue_url, MessageBody=body)
    side.call(
        "sqs",
        "get_queue_attributes",
        QueueUrl=side.queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )
    received = side.call("sqs", "receive_message", QueueUrl=side.queue_url, MaxNumberOfMessages=2)
    handles = [m["ReceiptHandle"] for m in received.get("Messages", [])]
    side.call(
        "sqs",
        "get_queue_attributes",
        QueueUrl=side.queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )
    # Capacity mode keeps a message hidden while it works on it; the consumer hands one back.
    side.call(
        "sqs",
        "change_message_visibility",
        QueueUrl=side.queue_url,
        ReceiptHandle=handles[0],
        VisibilityTimeout=120,
    )
    side.call(
        "sqs",
        "change_message_visibility",
        QueueUrl=side.queue_url,
        ReceiptHandle=handles[0],
        VisibilityTimeout=300,
    )
    side.call(
        "sqs",
        "change_message_visibility_batch",
        QueueUrl=side.queue_url,
        Entries=[{"Id": "0", "ReceiptHandle": handles[1], "VisibilityTimeout": 0}],
    )
    side.call(
        "sqs",
        "receive_message",
        QueueUrl=side.queue_url,
        MaxNumberOfMessages=10,
        AttributeNames=["ApproximateReceiveCount"],
    )
    side.call(
        "sqs",
        "delete_message_batch",
        QueueUrl=side.queue_url,
        Entries=[{"Id": "0", "ReceiptHandle": handles[0]}],
    )
    side.call("sqs", "delete_message", QueueUrl=side.queue_url, ReceiptHandle=handles[1])
    side.call(
        "sqs",
        "get_queue_attributes",
        QueueUrl=side.queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )
    side.call("sqs", "receive_message", QueueUrl=side.queue_url, MaxNumberOfMessages=11)
    side.call(
        "sqs",
        "get_queue_attributes",
        QueueUrl=side.queue_url + "-gone",
        AttributeNames=["ApproximateNumberOfMessages"],
    )
    side.call("sqs", "send_message", QueueUrl=side.queue_url + "-gone", MessageBody="x")


def purge(side: Side) -> None:
    """`beekeeper reset` empties the line: visible and in-flight messages go, once a minute."""
    counts = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    for body in ("a.1", "b.2", "c.3"):
        side.call("sqs", "send_message", QueueUrl=side.queue_url, MessageBody=body)
    side.call("sqs", "receive_message", QueueUrl=side.queue_url, MaxNumberOfMessages=1)
    side.call("sqs", "purge_queue", QueueUrl=side.queue_url)
    side.call("sqs", "get_queue_attributes", QueueUrl=side.queue_url, AttributeNames=counts)
    side.call("sqs", "receive_message", QueueUrl=side.queue_url, MaxNumberOfMessages=10)
    side.call("sqs", "purge_queue", QueueUrl=side.queue_url)  # within 60 s: refused
    side.call("sqs", "send_message", QueueUrl=side.queue_url, MessageBody="d.4")
    side.call("sqs", "receive_message", QueueUrl=side.queue_url, MaxNumberOfMessages=10)
    side.call("sqs", "purge_queue", QueueUrl=side.queue_url + "-gone")


def dead_letters(side: Side) -> None:
    side.call("sqs", "send_message", QueueUrl=side.queue_url, MessageBody="poison")
    for _ in range(3):  # maxReceiveCount 2: the third receive finds it moved
        side.call("sqs", "receive_message", QueueUrl=side.queue_url, VisibilityTimeout=0)
    side.call("sqs", "receive_message", QueueUrl=side.dlq_url)


def leaving_index(side: Side) -> None:
    """The warden's Query: only items with both index keys, oldest `left_at` first (numbers
    by value, not by text), the keys only, a page of `Limit` with where it stopped."""
    leavers = {"v#late": "1000", "v#early": "95", "v#middle": "200.5", "v#first": "7"}
    for pk, left_at in leavers.items():
        item = {
            "pk": {"S": pk},
            LEAVING_ATTRIBUTE: {"S": LEAVING_VALUE},
            LEFT_AT_ATTRIBUTE: n(left_at),
            "state": {"S": "left"},
        }
        side.call("dynamodb", "put_item", TableName=TABLE, Item=item)
    # Not in the index: no `leaving`, or no `left_at`.
    side.call("dynamodb", "put_item", TableName=TABLE, Item={"pk": {"S": "v#staying"}})
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={"pk": {"S": "v#half"}, LEAVING_ATTRIBUTE: {"S": LEAVING_VALUE}},
    )
    query = {
        "TableName": TABLE,
        "IndexName": LEAVING_INDEX,
        "KeyConditionExpression": "#leaving = :yes",
        "ExpressionAttributeNames": {"#leaving": LEAVING_ATTRIBUTE},
        "ExpressionAttributeValues": {":yes": {"S": LEAVING_VALUE}},
    }
    side.call("dynamodb", "query", **query)
    side.call("dynamodb", "query", **query, Limit=2)
    side.call("dynamodb", "query", **query, ScanIndexForward=False, Limit=1)
    # Leaving the index: the attribute removed.
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("v#first"),
        UpdateExpression=f"REMOVE {LEAVING_ATTRIBUTE}",
    )
    side.call("dynamodb", "query", **query)


def ticket_keys_secret(side: Side) -> None:
    """The ticket keys' secret: created empty at a local room's start, read by the consumer and
    `beekeeper keys`, written by them, by name and by ARN; and every refusal on the way."""
    secret = "beekeeper-diff-ticket-keys"
    side.call("secretsmanager", "get_secret_value", SecretId=secret)
    side.call("secretsmanager", "put_secret_value", SecretId=secret, SecretString="{}")
    arn = side.call(
        "secretsmanager", "create_secret", Name=secret, SecretString='{"keys": []}'
    ).get("ARN", "")
    side.call("secretsmanager", "create_secret", Name=secret, SecretString="{}")
    for secret_id in (secret, arn, arn[:-7]):
        side.call("secretsmanager", "get_secret_value", SecretId=secret_id)
    side.call("secretsmanager", "get_secret_value", SecretId=arn[:-1])
    side.call("secretsmanager", "put_secret_value", SecretId=arn, SecretString='{"keys": [1]}')
    side.call("secretsmanager", "get_secret_value", SecretId=secret)
    side.call("secretsmanager", "get_secret_value", SecretId=secret, VersionStage="AWSPREVIOUS")
    token = "7" * 32
    for value in ('{"keys": [2]}', '{"keys": [2]}', '{"keys": [3]}'):
        side.call(
            "secretsmanager",
            "put_secret_value",
            SecretId=secret,
            SecretString=value,
            ClientRequestToken=token,
        )
    side.call("secretsmanager", "get_secret_value", SecretId=secret, VersionId=token)
    side.call("secretsmanager", "get_secret_value", SecretId=secret, VersionId="8" * 32)
    side.call("secretsmanager", "get_secret_value", SecretId=secret, VersionStage="NOBODY")
    side.call(
        "secretsmanager",
        "get_secret_value",
        SecretId=secret,
        VersionId=token,
        VersionStage="AWSPREVIOUS",
    )
    side.call("secretsmanager", "put_secret_value", SecretId=secret)
    side.call("secretsmanager", "put_secret_value", SecretId=secret, SecretBinary=b"\x00\xff")
    side.call("secretsmanager", "get_secret_value", SecretId=secret)
    side.call(
        "secretsmanager",
        "put_secret_value",
        SecretId=secret,
        SecretString="staged",
        VersionStages=["PENDING"],
    )
    side.call("secretsmanager", "get_secret_value", SecretId=secret, VersionStage="PENDING")
    side.call("secretsmanager", "get_secret_value", SecretId=secret)
    side.call("secretsmanager", "create_secret", Name="beekeeper-diff-empty")
    side.call("secretsmanager", "get_secret_value", SecretId="beekeeper-diff-empty")


def deleted_secrets(side: Side) -> None:
    """A secret deleted with a recovery window, then at once; and the refusals of each."""
    secret = "beekeeper-diff-deleted"
    side.call("secretsmanager", "create_secret", Name=secret, SecretString="{}")
    side.call("secretsmanager", "delete_secret", SecretId=secret, RecoveryWindowInDays=3)
    side.call("secretsmanager", "delete_secret", SecretId=secret, RecoveryWindowInDays=31)
    side.call(
        "secretsmanager",
        "delete_secret",
        SecretId=secret,
        RecoveryWindowInDays=7,
        ForceDeleteWithoutRecovery=True,
    )
    side.call("secretsmanager", "delete_secret", SecretId=secret, RecoveryWindowInDays=7)
    side.call("secretsmanager", "get_secret_value", SecretId=secret)
    side.call("secretsmanager", "delete_secret", SecretId=secret)
    side.call("secretsmanager", "delete_secret", SecretId=secret, ForceDeleteWithoutRecovery=True)
    side.call("secretsmanager", "get_secret_value", SecretId=secret)
    side.call("secretsmanager", "delete_secret", SecretId=secret)
    side.call("secretsmanager", "delete_secret", SecretId=secret, ForceDeleteWithoutRecovery=True)
    side.call("secretsmanager", "create_secret", Name=secret, SecretString="again")
    side.call("secretsmanager", "get_secret_value", SecretId=secret)
    side.call("secretsmanager", "delete_secret", SecretId=secret)


SCENARIOS: dict[str, Callable[[Side], None]] = {
    "the warden's leaving index": leaving_index,
    "the templates' reads": templates_reads,
    "counters and claims": counters_and_claims,
    "config writes": config_writes,
    "return values": return_values,
    "string sets": string_sets,
    "transactions": transactions,
    "refused expressions": refused_expressions,
    "queue calls": queue_calls,
    "purge": purge,
    "dead letters": dead_letters,
    "the ticket keys' secret": ticket_keys_secret,
    "deleted secrets": deleted_secrets,
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_store_answers_as_moto_does(moto_side: Side, store_side: Side, scenario: str) -> None:
    SCENARIOS[scenario](moto_side)
    SCENARIOS[scenario](store_side)
    assert len(store_side.transcript) == len(moto_side.transcript)
    for step, (ours, theirs) in enumerate(
        zip(store_side.transcript, moto_side.transcript, strict=True)
    ):
        assert ours == theirs, f"step {step} of {scenario!r}"


def test_the_templates_rendered_requests_get_dynamodbs_status(
    moto_side: Side, store_side: Side
) -> None:
    """API Gateway hands DynamoDB the rendered JSON: a refusal is a 400 either way."""
    target = store_side.template_target  # type: ignore[attr-defined]
    good = json.dumps({"RequestItems": {TABLE: {"Keys": [key("v#a")]}}})
    assert target("BatchGetItem", good) == (
        200,
        json.dumps({"Responses": {TABLE: []}, "UnprocessedKeys": {}}),
    )
    for body in (
        "not json",
        json.dumps({"RequestItems": {TABLE: {"Keys": [key("v#a"), key("v#a")]}}}),
        json.dumps({"RequestItems": {"other": {"Keys": [key("v#a")]}}}),
        json.dumps({"TableName": TABLE, "Key": key("")}),
    ):
        status, _ = target("BatchGetItem" if "RequestItems" in body else "GetItem", body)
        assert status == 400, body
