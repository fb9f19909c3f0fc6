"""Dashboard, alarms and the outputs the CLI records."""

from __future__ import annotations

import json

from beekeeper.core import telemetry
from beekeeper.stacks import monitoring
from tests.support.stack_testkit import Synthesized, flatten

OUTPUT_KEYS = {
    "MarketingUrl",
    "ClientCheckUrl",
    "PageUrl",
    "TableName",
    "QueueUrl",
    "DeadLetterQueueUrl",
    "ProducerFunctionName",
    "TriggerFunctionName",
    "ConsumerFunctionName",
    "GovernorFunctionName",
    "DashboardName",
}


def test_outputs_are_exactly_the_data_model_keys(synthesized: Synthesized) -> None:
    outputs = synthesized.raw["Outputs"]
    assert set(outputs) == OUTPUT_KEYS
    api_id, _ = synthesized.only("AWS::ApiGateway::RestApi")
    stage_id, _ = synthesized.only("AWS::ApiGateway::Stage")
    base = f"https://<Ref:{api_id}>.execute-api.eu-west-1.<Ref:AWS::URLSuffix>/<Ref:{stage_id}>"
    for key, path in (
        ("MarketingUrl", "beekeeper"),
        ("ClientCheckUrl", "client"),
        ("PageUrl", "room"),
    ):
        assert flatten(outputs[key]["Value"]) == f"{base}/{path}"
    assert outputs["DashboardName"]["Value"] == {
        "Ref": synthesized.only("AWS::CloudWatch::Dashboard")[0]
    }
    producer_id, _ = synthesized.function("producer")
    assert outputs["ProducerFunctionName"]["Value"] == {"Ref": producer_id}


def test_dashboard_shows_the_room_metrics(synthesized: Synthesized) -> None:
    _, dashboard = synthesized.only("AWS::CloudWatch::Dashboard")
    assert dashboard["Properties"]["DashboardName"] == "beekeeper-test-room"
    body = flatten(dashboard["Properties"]["DashboardBody"])
    for metric in (telemetry.ARRIVALS_METRIC, telemetry.ADMITTED_METRIC, telemetry.RATE_METRIC):
        namespace, dimension = telemetry.METRIC_NAMESPACE, telemetry.ROOM_DIMENSION
        assert f'["{namespace}","{metric}","{dimension}","test-room"' in body
    for aws_metric in (
        "ApproximateNumberOfMessagesVisible",
        "ApproximateAgeOfOldestMessage",
        "Throttles",
        "Errors",
        "ReadThrottleEvents",
        "WriteThrottleEvents",
    ):
        assert aws_metric in body


def test_alarms_cover_what_needs_a_person(synthesized: Synthesized) -> None:
    alarms = {
        alarm["Properties"]["AlarmName"]: alarm["Properties"]
        for alarm in synthesized.resources("AWS::CloudWatch::Alarm").values()
    }
    assert set(alarms) == {
        f"beekeeper-test-room-{name}"
        for name in (
            "dead-letters",
            "producer-errors",
            "producer-throttles",
            "behind-schedule",
            "table-throttles",
            "api-5xx",
        )
    }
    dead_letters = alarms["beekeeper-test-room-dead-letters"]
    (metric,) = [m["MetricStat"]["Metric"] for m in dead_letters["Metrics"] if "MetricStat" in m]
    assert metric["MetricName"] == "ApproximateNumberOfMessagesVisible"
    dead_letter_queue = next(
        logical_id
        for logical_id, queue in synthesized.resources("AWS::SQS::Queue").items()
        if queue["Properties"]["QueueName"].endswith("-dead-letters")
    )
    assert metric["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": [dead_letter_queue, "QueueName"]}}
    ]
    assert dead_letters["Threshold"] == 1
    assert dead_letters["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    behind = alarms["beekeeper-test-room-behind-schedule"]
    expressions = [m["Expression"] for m in behind["Metrics"] if "Expression" in m]
    assert expressions == ["IF(rate > 0, age - 60 * depth / rate, 0)"]
    assert behind["Threshold"] == monitoring.BEHIND_SCHEDULE_SECONDS
    assert json.dumps(behind).count('"MetricName": "Rate"') == 1
