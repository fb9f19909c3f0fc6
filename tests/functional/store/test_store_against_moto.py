"""The store answers the room's requests as moto (AWS's own model of DynamoDB, SQS and Secrets
Manager) does.

Every scenario runs twice on the same requests: once against moto (in process, `mock_aws`),
once against the store through local mode's boto3 clients (botocore builds, sends and parses
both). The transcripts, each answer or refusal in turn, must be equal: successes compared
whole (sets as sets; SQS's opaque ids and handles left out), refusals by their error code and
modeled fields (a cancelled transaction's reasons, a failed condition's item).

Covered: the room's DynamoDB requests (tests/support/store_scenarios.py, which the store is
also held to DynamoDB Local with), SQS's calls with ChangeMessageVisibility with a timeout, a
dead-letter queue and PurgeQueue (once a minute, as `beekeeper reset` uses it), and what the
consumers, local mode and `beekeeper keys` do with the ticket keys' secret (GetSecretValue,
PutSecretValue).
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from beekeeper.core.datamodel import table_definition
from beekeeper.local.store_transport import StoreTransport
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.secretsmanager import SecretsManager
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from beekeeper.store.wire import JsonProtocol, TemplateTarget
from tests.support.store_scenarios import SCENARIOS as DYNAMODB_SCENARIOS
from tests.support.store_scenarios import (
    TABLE,
    Side,
    assert_same_transcripts,
    comparable,
    key,
)

REGION = "us-east-1"


# Where moto is not DynamoDB, the test leaves the case out and tests/unit/test_store.py holds
# the store to DynamoDB's documented answer instead: numbers are normalised ("2.00" is "2"),
# 1e200 is out of range, a set with duplicate members and a key of the wrong type are
# refused, an undefined `#name` is a ValidationException (moto raises KeyError). One moto
# answer is adjusted here: UpdateItem's UPDATED_NEW/UPDATED_OLD return only the attributes
# the update expression names (DynamoDB's documentation), where moto adds the key of an item
# the update created. A Query of an index the table lacks is DynamoDB's ValidationException
# (moto: ResourceNotFoundException). DynamoDB's other refusals (reserved words, 400 KB,
# redundant parentheses, index keys...) and its 1 MB pages are held to DynamoDB Local instead
# (test_store_refuses_as_dynamodb_local.py).


def _moto_adjusted(operation: str, request: dict[str, Any], answer: dict[str, Any]) -> None:
    """moto adds the key of an item the update created to UPDATED_NEW and UPDATED_OLD."""
    if str(request.get("ReturnValues", "")).startswith("UPDATED"):
        answer.get("Attributes", {}).pop("pk", None)


def _comparable(answer: dict[str, Any]) -> dict[str, Any]:
    out = comparable(answer)
    if "Messages" in out:
        out["Messages"] = [
            {k: v for k, v in m.items() if k not in ("MessageId", "ReceiptHandle")}
            for m in out["Messages"]
        ]
    out.pop("MessageId", None)
    for key_name in ("Successful", "Failed"):
        if key_name in out:  # ids are ours; the failure's wording is the service's
            out[key_name] = sorted((e.get("Id"), e.get("Code")) for e in out[key_name])
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


class QueueSide(Side):
    """A side with the room's queue and its dead-letter queue, and a way to make a secret as
    the stack (or local mode's start) makes it: `create_secret(name, value)` gives its ARN."""

    def __init__(
        self,
        clients: dict[str, Any],
        queue_url: str,
        dlq_url: str,
        create_secret: Callable[[str, str], str],
        **more: Any,
    ) -> None:
        super().__init__(clients, answer=_comparable, **more)
        self.queue_url = queue_url
        self.dlq_url = dlq_url
        self.create_secret = create_secret


@pytest.fixture()
def moto_side() -> Iterator[QueueSide]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        secretsmanager = boto3.client("secretsmanager", region_name=REGION)
        queue, dlq = _create(dynamodb, sqs)
        yield QueueSide(
            {"dynamodb": dynamodb, "sqs": sqs, "secretsmanager": secretsmanager},
            queue,
            dlq,
            lambda name, value: secretsmanager.create_secret(Name=name, SecretString=value)["ARN"],
            adjust=_moto_adjusted,
        )


@pytest.fixture()
def store_side() -> QueueSide:
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
    side = QueueSide(
        {
            "dynamodb": transport.client("dynamodb"),
            "sqs": transport.client("sqs"),
            "secretsmanager": transport.client("secretsmanager"),
        },
        visitors.url,
        dead_letters.url,
        lambda name, value: secrets.create(name, value).arn,
    )
    side.template_target = TemplateTarget(database)  # type: ignore[attr-defined]
    return side


# -- the queue's and the secret's scenarios --------------------------------------------------


def queue_calls(side: QueueSide) -> None:
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


def purge(side: QueueSide) -> None:
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


def dead_letters(side: QueueSide) -> None:
    side.call("sqs", "send_message", QueueUrl=side.queue_url, MessageBody="poison")
    for _ in range(3):  # maxReceiveCount 2: the third receive finds it moved
        side.call("sqs", "receive_message", QueueUrl=side.queue_url, VisibilityTimeout=0)
    side.call("sqs", "receive_message", QueueUrl=side.dlq_url)


def ticket_keys_secret(side: QueueSide) -> None:
    """The ticket keys' secret as the consumers, `beekeeper keys` and local mode use it: read
    and written by its ARN and by its name, a retried write (the same ClientRequestToken),
    and every refusal on the way. (The secret itself is made as the stack makes it.)"""
    secret = "beekeeper-diff-ticket-keys"
    side.call("secretsmanager", "get_secret_value", SecretId=secret)
    side.call("secretsmanager", "put_secret_value", SecretId=secret, SecretString="{}")
    arn = side.create_secret(secret, '{"keys": []}')
    for secret_id in (secret, arn):
        side.call("secretsmanager", "get_secret_value", SecretId=secret_id)
    side.call("secretsmanager", "get_secret_value", SecretId=arn[:-1])
    side.call("secretsmanager", "put_secret_value", SecretId=arn, SecretString='{"keys": [1]}')
    side.call("secretsmanager", "get_secret_value", SecretId=arn)
    token = "7" * 32
    for _ in range(2):
        side.call(
            "secretsmanager",
            "put_secret_value",
            SecretId=arn,
            SecretString='{"keys": [2]}',
            ClientRequestToken=token,
        )
    side.call("secretsmanager", "get_secret_value", SecretId=secret)
    side.call("secretsmanager", "put_secret_value", SecretId=secret)
    side.call("secretsmanager", "put_secret_value", SecretId=secret, SecretString='{"keys": [3]}')
    side.call("secretsmanager", "get_secret_value", SecretId=arn)


SCENARIOS: dict[str, Callable[[QueueSide], None]] = {
    **DYNAMODB_SCENARIOS,
    "queue calls": queue_calls,
    "purge": purge,
    "dead letters": dead_letters,
    "the ticket keys' secret": ticket_keys_secret,
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_store_answers_as_moto_does(
    moto_side: QueueSide, store_side: QueueSide, scenario: str
) -> None:
    SCENARIOS[scenario](moto_side)
    SCENARIOS[scenario](store_side)
    assert_same_transcripts(store_side, moto_side, scenario)


def test_the_templates_rendered_requests_get_dynamodbs_status(
    moto_side: QueueSide, store_side: QueueSide
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
