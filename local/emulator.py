"""The AWS API emulator behind a local room: moto's server on loopback, in this process.

It holds the room's real queue (with its dead-letter queue) and table, created from the same
definitions and under the same names the stack deploys (`core/datamodel.py`, `core/names.py`),
so the Lambdas, the templates and the operator CLI talk to it exactly as they would to AWS,
through `endpoint_url`.

moto keeps its services' state per process, so every emulator of the process serves the same
accounts: rooms keep apart by their names, as rooms in one AWS account do, and a room removes
its own resources when it stops (and any left under its name when it starts).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

import boto3
from moto.server import ThreadedMotoServer

from beekeeper.core import datamodel
from beekeeper.core.local_room import LOCAL_REGION, PLACEHOLDER_CREDENTIALS
from beekeeper.core.names import ResourceNames


@dataclass(frozen=True)
class RoomResources:
    table_name: str
    queue_url: str
    dead_letter_queue_url: str
    ticket_keys_secret: str = ""  # the secret's ARN; "" for a room without ticket keys


def table_definition(table_name: str) -> dict[str, Any]:
    """CreateTable parameters for the room's table: what the stack deploys, as an API call."""
    return {
        "TableName": table_name,
        "KeySchema": [{"AttributeName": datamodel.PARTITION_KEY, "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": datamodel.PARTITION_KEY, "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }


def queue_attributes(dead_letter_queue_arn: str) -> dict[str, str]:
    """The visitors' queue settings, the same constants the stack uses."""
    return {
        "VisibilityTimeout": str(datamodel.QUEUE_VISIBILITY_TIMEOUT_SECONDS),
        "MessageRetentionPeriod": str(datamodel.QUEUE_RETENTION_SECONDS),
        "RedrivePolicy": json.dumps(
            {
                "deadLetterTargetArn": dead_letter_queue_arn,
                "maxReceiveCount": datamodel.QUEUE_MAX_RECEIVE_COUNT,
            }
        ),
    }


class Emulator:
    """moto's server on 127.0.0.1; `port=0` lets the system pick a free port."""

    def __init__(self, port: int = 0) -> None:
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        self.endpoint_url = ""

    def start(self) -> str:
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint_url = f"http://{host}:{port}"
        return self.endpoint_url

    def stop(self) -> None:
        self._server.stop()

    def client(self, service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=self.endpoint_url,
            region_name=LOCAL_REGION,
            **PLACEHOLDER_CREDENTIALS,
        )

    def create_room_resources(self, room_name: str) -> RoomResources:
        """The room's table and queues, named as the stack names them; a room starts from
        nothing, as a new stack does."""
        names = ResourceNames(room_name)
        self.delete_room_resources(room_name)
        dynamodb = self.client("dynamodb")
        table_name = names.table
        dynamodb.create_table(**table_definition(table_name))
        dynamodb.update_time_to_live(
            TableName=table_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": datamodel.TTL_ATTRIBUTE},
        )
        sqs = self.client("sqs")
        dlq_url = sqs.create_queue(
            QueueName=names.dead_letter_queue,
            Attributes={"MessageRetentionPeriod": str(datamodel.QUEUE_RETENTION_SECONDS)},
        )["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        queue_url = sqs.create_queue(QueueName=names.queue, Attributes=queue_attributes(dlq_arn))[
            "QueueUrl"
        ]
        # The ticket keys' secret starts empty, as the stack's does (`beekeeper keys` fills it).
        secret_arn = self.client("secretsmanager").create_secret(
            Name=names.local_ticket_keys_secret, SecretString='{"keys": []}'
        )["ARN"]
        return RoomResources(table_name, queue_url, dlq_url, secret_arn)

    def delete_room_resources(self, room_name: str) -> None:
        """Remove the room's table and queues, those that exist."""
        names = ResourceNames(room_name)
        dynamodb = self.client("dynamodb")
        with contextlib.suppress(dynamodb.exceptions.ResourceNotFoundException):
            dynamodb.delete_table(TableName=names.table)
        sqs = self.client("sqs")
        for queue_name in (names.queue, names.dead_letter_queue):
            try:
                queue_url = sqs.get_queue_url(QueueName=queue_name)["QueueUrl"]
            except sqs.exceptions.QueueDoesNotExist:
                continue
            sqs.delete_queue(QueueUrl=queue_url)
        secrets = self.client("secretsmanager")
        with contextlib.suppress(secrets.exceptions.ResourceNotFoundException):
            secrets.delete_secret(
                SecretId=names.local_ticket_keys_secret, ForceDeleteWithoutRecovery=True
            )
