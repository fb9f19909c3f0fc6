"""The real-AWS journey's AWS-only checks (tests/realroom/aws_checks.py), against moto.

What the opt-in test (tests/aws) relies on when it reads a deployed room's metrics, its alarm
history and what `destroy` left, run here on moto (and a botocore Stubber where moto lacks an
operation), so the code is right before anyone spends money on it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from tests.support.realroom import aws_checks

REGION = "eu-west-1"
ROOM = "e2e-abc"
TAGS = {aws_checks.ROOM_TAG: ROOM}


@pytest.fixture
def clients() -> Iterator[Callable[[str], Any]]:
    with mock_aws():
        yield functools.cache(lambda service: boto3.client(service, region_name=REGION))


def test_metric_sums_read_each_metric_by_name_and_statistic(clients: Callable[[str], Any]) -> None:
    cloudwatch = clients("cloudwatch")
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=5)
    for minute, (arrivals, rate) in enumerate([(5, 60), (3, 120)]):
        cloudwatch.put_metric_data(
            Namespace="Beekeeper",
            MetricData=[
                {
                    "MetricName": name,
                    "Dimensions": [{"Name": "Room", "Value": ROOM}],
                    "Timestamp": start + timedelta(minutes=minute),
                    "Value": value,
                }
                for name, value in (("Arrivals", arrivals), ("Rate", rate))
            ],
        )
    sums = aws_checks.metric_sums(
        cloudwatch, ROOM, ["Arrivals", "Rate", "Admitted"], start, start + timedelta(minutes=10)
    )
    assert sums == {"Arrivals": 8.0, "Rate": 120.0, "Admitted": None}
    other = aws_checks.metric_sums(
        cloudwatch, "another-room", ["Arrivals"], start, start + timedelta(minutes=10)
    )
    assert other == {"Arrivals": None}


def test_an_alarm_notice_counts_only_when_its_history_says_it_reached_the_topic() -> None:
    cloudwatch = boto3.client("cloudwatch", region_name=REGION)
    topic = "arn:aws:sns:eu-west-1:123456789012:beekeeper-e2e-abc-alarms"

    def history(*summaries: str) -> dict[str, Any]:
        now = datetime.now(UTC)
        return {
            "AlarmHistoryItems": [
                {"AlarmName": "a", "Timestamp": now, "HistoryItemType": "Action",
                 "HistorySummary": summary}
                for summary in summaries
            ]
        }  # fmt: skip

    with Stubber(cloudwatch) as stubber:
        stubber.add_response(
            "describe_alarm_history",
            history(f"Failed to execute action {topic}. Received error: not authorized"),
        )
        stubber.add_response(
            "describe_alarm_history", history(f"Successfully executed action {topic}")
        )
        assert aws_checks.alarm_notice_delivered(cloudwatch, "a", topic) is False
        assert aws_checks.alarm_notice_delivered(cloudwatch, "a", topic) is True


def _room_resources(clients: Callable[[str], Any]) -> None:
    prefix = f"beekeeper-{ROOM}"
    clients("dynamodb").create_table(
        TableName=prefix,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        Tags=[{"Key": k, "Value": v} for k, v in TAGS.items()],
    )
    clients("sqs").create_queue(QueueName=f"{prefix}-visitors", tags=TAGS)
    clients("logs").create_log_group(logGroupName=f"/aws/lambda/{prefix}-producer", tags=TAGS)
    clients("sns").create_topic(
        Name=f"{prefix}-alarms", Tags=[{"Key": k, "Value": v} for k, v in TAGS.items()]
    )
    clients("cloudwatch").put_dashboard(DashboardName=prefix, DashboardBody='{"widgets": []}')
    clients("iam").create_role(
        RoleName=f"{prefix}-FunctionsProducerRole-ABC", AssumeRolePolicyDocument="{}"
    )
    # Another room's resources are never counted.
    clients("sqs").create_queue(
        QueueName="beekeeper-other-visitors", tags={aws_checks.ROOM_TAG: "other"}
    )
    clients("iam").create_role(RoleName="beekeeper-e2e-abcd-Role", AssumeRolePolicyDocument="{}")


def test_leftovers_finds_every_kind_of_resource_and_none_once_deleted(
    clients: Callable[[str], Any],
) -> None:
    _room_resources(clients)
    found = aws_checks.leftovers(clients, ROOM)
    kinds = sorted(
        item.split(":")[2] if item.startswith("arn:") else item.split()[0] for item in found
    )
    assert kinds == ["dashboard", "dynamodb", "logs", "role", "sns", "sqs"]
    assert any(item.endswith(":table/beekeeper-e2e-abc") for item in found)
    assert "dashboard beekeeper-e2e-abc" in found
    assert "role beekeeper-e2e-abc-FunctionsProducerRole-ABC" in found

    prefix = f"beekeeper-{ROOM}"
    clients("dynamodb").delete_table(TableName=prefix)
    queue_url = clients("sqs").get_queue_url(QueueName=f"{prefix}-visitors")["QueueUrl"]
    clients("sqs").delete_queue(QueueUrl=queue_url)
    clients("logs").delete_log_group(logGroupName=f"/aws/lambda/{prefix}-producer")
    topic_arn = f"arn:aws:sns:{REGION}:123456789012:{prefix}-alarms"
    clients("sns").delete_topic(TopicArn=topic_arn)
    clients("cloudwatch").delete_dashboards(DashboardNames=[prefix])
    clients("iam").delete_role(RoleName=f"{prefix}-FunctionsProducerRole-ABC")
    assert aws_checks.leftovers(clients, ROOM) == []


def test_a_deleted_resource_the_tagging_api_still_lists_is_not_a_leftover(
    clients: Callable[[str], Any],
) -> None:
    tagging = boto3.client("resourcegroupstaggingapi", region_name=REGION)
    listed = [
        f"arn:aws:dynamodb:{REGION}:123456789012:table/beekeeper-{ROOM}",
        f"arn:aws:lambda:{REGION}:123456789012:function:beekeeper-{ROOM}-producer",
        f"arn:aws:wafv2:{REGION}:123456789012:regional/webacl/beekeeper-{ROOM}-origin-lock/x",
        f"arn:aws:kinesis:{REGION}:123456789012:stream/beekeeper-{ROOM}",
    ]
    with Stubber(tagging) as stubber:
        stubber.add_response(
            "get_resources",
            {"ResourceTagMappingList": [{"ResourceARN": arn, "Tags": []} for arn in listed]},
        )

        def with_stubbed_tagging(service: str) -> Any:
            return tagging if service == "resourcegroupstaggingapi" else clients(service)

        # The table, function and web ACL are gone (moto has none); a service the check does
        # not know is reported rather than passed.
        assert aws_checks.leftovers(with_stubbed_tagging, ROOM) == [listed[3]]


def test_the_edge_s_leftovers_are_looked_for_in_us_east_1(clients: Callable[[str], Any]) -> None:
    def us_east_1(service: str) -> Any:
        return boto3.client(service, region_name="us-east-1")

    stack = f"beekeeper-{ROOM}-edge-waf"
    us_east_1("cloudformation").create_stack(
        StackName=stack,
        TemplateBody='{"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}',
    )
    created = us_east_1("cloudfront").create_distribution(
        DistributionConfig={
            "CallerReference": "e2e",
            "Comment": f"Beekeeper waiting room {ROOM}",
            "Enabled": True,
            "Origins": {
                "Quantity": 1,
                "Items": [
                    {
                        "Id": "api",
                        "DomainName": "abc.execute-api.eu-west-1.amazonaws.com",
                        "CustomOriginConfig": {
                            "HTTPPort": 80,
                            "HTTPSPort": 443,
                            "OriginProtocolPolicy": "https-only",
                        },
                    }
                ],
            },
            "DefaultCacheBehavior": {
                "TargetOriginId": "api",
                "ViewerProtocolPolicy": "redirect-to-https",
                "CachePolicyId": "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
            },
        }
    )["Distribution"]
    found = aws_checks.leftovers(clients, ROOM, us_east_1)
    assert found == sorted([f"distribution {created['Id']}", f"stack {stack} in us-east-1"])
    assert aws_checks.leftovers(clients, "another-room", us_east_1) == []
