"""The room's table and queues.

Everything here is deleted with the stack: a room is a one-off event, and `beekeeper destroy`
promises to leave nothing behind (visitors' items expire within a day of the event anyway).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from beekeeper.core import datamodel
from beekeeper.core.settings import RoomSettings


class RoomStorage(Construct):
    """DynamoDB table (docs/data-model.md) and the visitors' SQS queue with its DLQ."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: RoomSettings) -> None:
        super().__init__(scope, construct_id)
        names = settings.names

        self.table = dynamodb.Table(
            self,
            "Table",
            table_name=names.table,
            partition_key=dynamodb.Attribute(
                name=datamodel.PARTITION_KEY, type=dynamodb.AttributeType.STRING
            ),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            time_to_live_attribute=datamodel.TTL_ATTRIBUTE,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            # Encrypted at rest with an AWS owned key: no KMS request on the poll path.
            encryption=dynamodb.TableEncryption.DEFAULT,
            removal_policy=RemovalPolicy.DESTROY,
            deletion_protection=False,
        )

        # Sparse: only visitors who left and still hold a place (datamodel.table_definition).
        self.table.add_global_secondary_index(
            index_name=datamodel.LEAVING_INDEX,
            partition_key=dynamodb.Attribute(
                name=datamodel.LEAVING_ATTRIBUTE, type=dynamodb.AttributeType.STRING
            ),
            sort_key=dynamodb.Attribute(
                name=datamodel.LEFT_AT_ATTRIBUTE, type=dynamodb.AttributeType.NUMBER
            ),
            projection_type=dynamodb.ProjectionType.KEYS_ONLY,
        )

        self.dead_letter_queue = _private_queue(self, "DeadLetterQueue", names.dead_letter_queue)
        self.queue = _private_queue(
            self,
            "Queue",
            names.queue,
            visibility_timeout=Duration.seconds(datamodel.QUEUE_VISIBILITY_TIMEOUT_SECONDS),
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue,
                max_receive_count=datamodel.QUEUE_MAX_RECEIVE_COUNT,
            ),
        )


def _private_queue(
    scope: Construct, construct_id: str, queue_name: str, **options: Any
) -> sqs.Queue:
    """Encrypted, TLS only, the longest retention SQS allows, deleted with the room."""
    return sqs.Queue(
        scope,
        construct_id,
        queue_name=queue_name,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=Duration.seconds(datamodel.QUEUE_RETENTION_SECONDS),
        removal_policy=RemovalPolicy.DESTROY,
        **options,
    )
