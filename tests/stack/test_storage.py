"""The table and queues follow docs/data-model.md and leave nothing behind on destroy."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Capture, Match

from beekeeper.core import datamodel
from tests.support.stack_testkit import Synthesized

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow


def test_table_is_on_demand_keyed_by_pk_with_ttl_and_recovery(synthesized: Synthesized) -> None:
    definition = datamodel.table_definition("beekeeper-test-room")
    (index,) = definition["GlobalSecondaryIndexes"]
    synthesized.template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "Delete",
            "UpdateReplacePolicy": "Delete",
            "Properties": Match.object_like(
                {
                    "BillingMode": "PAY_PER_REQUEST",
                    "KeySchema": definition["KeySchema"],
                    "AttributeDefinitions": definition["AttributeDefinitions"],
                    # The sparse index the warden reads (local mode creates the same one).
                    "GlobalSecondaryIndexes": [index],
                    "TimeToLiveSpecification": {"AttributeName": "ttl", "Enabled": True},
                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                }
            ),
        },
    )


def test_queue_settings_come_from_the_data_model(synthesized: Synthesized) -> None:
    dead_letter_arn = Capture()
    synthesized.template.has_resource_properties(
        "AWS::SQS::Queue",
        {
            "QueueName": "beekeeper-test-room-visitors",
            "VisibilityTimeout": datamodel.QUEUE_VISIBILITY_TIMEOUT_SECONDS,
            "MessageRetentionPeriod": datamodel.QUEUE_RETENTION_SECONDS,
            "SqsManagedSseEnabled": True,
            "RedrivePolicy": {
                "deadLetterTargetArn": dead_letter_arn,
                "maxReceiveCount": datamodel.QUEUE_MAX_RECEIVE_COUNT,
            },
        },
    )
    dead_letter_id = dead_letter_arn.as_object()["Fn::GetAtt"][0]
    dead_letters = synthesized.raw["Resources"][dead_letter_id]["Properties"]
    assert dead_letters["QueueName"] == "beekeeper-test-room-dead-letters"
    assert dead_letters["MessageRetentionPeriod"] == datamodel.QUEUE_RETENTION_SECONDS
    assert dead_letters["SqsManagedSseEnabled"] is True


def test_both_queues_refuse_requests_without_tls(synthesized: Synthesized) -> None:
    queues = set(synthesized.resources("AWS::SQS::Queue"))
    protected = set()
    for policy in synthesized.resources("AWS::SQS::QueuePolicy").values():
        statements = policy["Properties"]["PolicyDocument"]["Statement"]
        if any(
            s["Effect"] == "Deny"
            and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
            and s["Principal"] == {"AWS": "*"}
            for s in statements
        ):
            protected.update(ref["Ref"] for ref in policy["Properties"]["Queues"])
    assert protected == queues


def test_destroy_leaves_nothing_behind(synthesized: Synthesized) -> None:
    kept = {
        logical_id: (resource.get("DeletionPolicy"), resource.get("UpdateReplacePolicy"))
        for logical_id, resource in synthesized.raw["Resources"].items()
        if {"Retain", "Snapshot", "RetainExceptOnCreate"}
        & {resource.get("DeletionPolicy"), resource.get("UpdateReplacePolicy")}
    }
    assert kept == {}
    # No bucket, so nothing for the stack to empty first.
    assert synthesized.resources("AWS::S3::Bucket") == {}


def test_every_log_group_has_the_room_retention_and_is_deleted(synthesized: Synthesized) -> None:
    groups = synthesized.resources("AWS::Logs::LogGroup")
    # four functions, the access log and the execution log
    assert len(groups) == 6
    for group in groups.values():
        assert group["Properties"]["RetentionInDays"] == synthesized.settings.log_retention_days
        assert group["DeletionPolicy"] == "Delete"
