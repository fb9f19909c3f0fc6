"""Dashboard, alarms and the outputs the CLI records."""

from __future__ import annotations

import pytest

from beekeeper.core import telemetry
from beekeeper.stacks import monitoring
from tests.support.stack_testkit import Synthesized, flatten

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow

OUTPUT_KEYS = {
    "PublicUrl",
    "EdgeDomain",
    "DistributionId",
    "OriginUrl",
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
    "JwksUrl",
    "TicketKeysSecret",
    "ChannelHttpDomain",
    "ChannelRealtimeDomain",
    "ChannelApiArn",
    "ChannelKeyExpires",
}


def test_outputs_are_exactly_the_data_model_keys(synthesized: Synthesized) -> None:
    outputs = synthesized.raw["Outputs"]
    assert set(outputs) == OUTPUT_KEYS
    api_id, _ = synthesized.only("AWS::ApiGateway::RestApi")
    stage_id, _ = synthesized.only("AWS::ApiGateway::Stage")
    distribution_id, _ = synthesized.only("AWS::CloudFront::Distribution")
    origin = f"https://<Ref:{api_id}>.execute-api.eu-west-1.<Ref:AWS::URLSuffix>/<Ref:{stage_id}>"
    # Visitors and shops use the public address (the room's domain); the API is its origin.
    base = f"https://{synthesized.settings.domain}"
    assert flatten(outputs["PublicUrl"]["Value"]) == base
    assert flatten(outputs["OriginUrl"]["Value"]) == f"{origin}/"
    assert flatten(outputs["EdgeDomain"]["Value"]) == f"<GetAtt:{distribution_id}.DomainName>"
    assert outputs["DistributionId"]["Value"] == {"Ref": distribution_id}
    for key, path in (
        ("MarketingUrl", "beekeeper"),
        ("ClientCheckUrl", "client"),
        ("PageUrl", "room"),
        ("JwksUrl", "jwks.json"),
    ):
        assert flatten(outputs[key]["Value"]) == f"{base}/{path}"
    assert outputs["DashboardName"]["Value"] == {
        "Ref": synthesized.only("AWS::CloudWatch::Dashboard")[0]
    }
    secret_id, _ = synthesized.secret("TicketKeys")
    assert outputs["TicketKeysSecret"]["Value"] == {"Ref": secret_id}
    producer_id, _ = synthesized.function("producer")
    assert outputs["ProducerFunctionName"]["Value"] == {"Ref": producer_id}


def test_a_capacity_rooms_dashboard_shows_who_is_inside_and_who_left(
    synthesized_changed: Synthesized,
) -> None:
    assert synthesized_changed.settings.max_inside > 0
    references = synthesized_changed.metric_references(telemetry.METRIC_NAMESPACE)
    by_name = {metric.name: metric for metric in telemetry.CAPACITY_METRICS}
    shown = {r.name: r for r in references if r.name in by_name}
    assert set(shown) == set(by_name)
    assert all(r.statistic == by_name[name].statistic for name, r in shown.items())


def test_dashboard_shows_every_room_metric_as_the_functions_emit_it(
    synthesized: Synthesized,
) -> None:
    _, dashboard = synthesized.only("AWS::CloudWatch::Dashboard")
    assert dashboard["Properties"]["DashboardName"] == "beekeeper-test-room"
    references = synthesized.metric_references(telemetry.METRIC_NAMESPACE)
    by_name = {metric.name: metric for metric in telemetry.METRICS}
    for reference in references:
        # Only names the functions emit, with the room's one dimension and the metric's statistic.
        assert reference.name in by_name, reference
        assert reference.dimensions == ((telemetry.ROOM_DIMENSION, "test-room"),)
        if reference.name == telemetry.WAIT.name:  # a distribution, by its percentiles
            assert reference.statistic in telemetry.PERCENTILES
        else:
            assert reference.statistic == by_name[reference.name].statistic
    # ... and every metric the functions emit is on the dashboard (capacity mode's only on a
    # capacity-mode room's), the wait with its median, p90 and p99.
    capacity = {metric.name for metric in telemetry.CAPACITY_METRICS}
    assert {reference.name for reference in references} == set(by_name) - capacity
    waits = {r.statistic for r in references if r.name == telemetry.WAIT.name}
    assert waits == set(telemetry.PERCENTILES)
    body = flatten(dashboard["Properties"]["DashboardBody"])
    for aws_metric in (
        "ApproximateNumberOfMessagesVisible",
        "ApproximateAgeOfOldestMessage",
        "Throttles",
        "Errors",
        "ReadThrottleEvents",
        "WriteThrottleEvents",
    ):
        assert aws_metric in body


ALARMS = (
    "dead-letters",
    "producer-errors",
    "producer-throttles",
    "behind-schedule",
    "table-throttles",
    "api-5xx",
)


def alarms_by_name(synthesized: Synthesized) -> dict[str, dict]:
    return {
        alarm["Properties"]["AlarmName"]: alarm["Properties"]
        for alarm in synthesized.resources("AWS::CloudWatch::Alarm").values()
    }


def test_alarms_cover_what_needs_a_person(synthesized: Synthesized) -> None:
    alarms = alarms_by_name(synthesized)
    assert set(alarms) == {f"beekeeper-test-room-{name}" for name in ALARMS}
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
    assert expressions == [monitoring.BEHIND_SCHEDULE_EXPRESSION]
    assert behind["Threshold"] == monitoring.BEHIND_SCHEDULE_PERCENT
    assert behind["EvaluationPeriods"] == behind["DatapointsToAlarm"] == 5
    assert behind["TreatMissingData"] == "notBreaching"


def test_every_alarm_notifies_the_rooms_topic_and_the_alert_email(
    synthesized: Synthesized,
) -> None:
    topic_id, topic = synthesized.only("AWS::SNS::Topic")
    assert topic["Properties"]["TopicName"] == "beekeeper-test-room-alarms"
    for name, alarm in alarms_by_name(synthesized).items():
        assert alarm["AlarmActions"] == [{"Ref": topic_id}], name
    _, subscription = synthesized.only("AWS::SNS::Subscription")
    assert subscription["Properties"] == {
        "Endpoint": "ops@shop.example",
        "Protocol": "email",
        "TopicArn": {"Ref": topic_id},
    }
    _, policy = synthesized.only("AWS::SNS::TopicPolicy")
    statements = {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    # TLS only, and CloudWatch may publish for this room's alarms only.
    assert statements["AllowPublishThroughSSLOnly"]["Effect"] == "Deny"
    publish = statements["RoomAlarmsPublish"]
    assert publish["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert publish["Action"] == "sns:Publish"
    assert flatten(publish["Condition"]["ArnLike"]["aws:SourceArn"]) == (
        "arn:<Ref:AWS::Partition>:cloudwatch:eu-west-1:<Ref:AWS::AccountId>"
        ":alarm:beekeeper-test-room-*"
    )


def test_without_an_alert_email_the_topic_has_no_subscriber(
    synthesized_changed: Synthesized,
) -> None:
    topic_id, _ = synthesized_changed.only("AWS::SNS::Topic")
    assert synthesized_changed.resources("AWS::SNS::Subscription") == {}
    for alarm in alarms_by_name(synthesized_changed).values():
        assert alarm["AlarmActions"] == [{"Ref": topic_id}]
