"""The room's table, queues and ticket key secret.

Everything here is deleted with the stack: a room is a one-off event, and `beekeeper destroy`
promises to leave nothing behind (visitors' items expire within a day of the event anyway).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from beekeeper.core import datamodel, tickets
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import nag


class RoomStorage(Construct):
    """DynamoDB table (docs/data-model.md), the visitors' SQS queue with its DLQ, and the secret
    that will hold the room's private ticket keys."""

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

        # Created empty: keys are made by `beekeeper deploy` and `beekeeper keys` (which also
        # publish them), never by the template. Secrets Manager fills the one field it must
        # generate with a throwaway value; the key ring ignores it. CloudFormation names the
        # secret: a deleted secret's name stays taken for days, and a room may come back.
        self.ticket_keys = secretsmanager.Secret(
            self,
            "TicketKeys",
            description=f"Beekeeper room {settings.name}: private keys that sign admission tickets",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                secret_string_template=tickets.EMPTY_KEY_RING,
                generate_string_key="unused",
                exclude_punctuation=True,
            ),
            removal_policy=RemovalPolicy.DESTROY,
        )
        nag.acknowledge_on(self.ticket_keys, (nag.TICKET_KEYS_ROTATION,))


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
