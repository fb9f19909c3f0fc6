"""The room's CloudWatch dashboard and the alarms that need a person.

Arrivals, admissions and the current rate are not AWS metrics: the Lambdas are to print
CloudWatch Embedded Metric Format lines (no API call, no cost beyond the log line) into the
namespace and with the dimension (`Room` = the room's name) of core/telemetry.py:

    Arrivals  Count  producer, one per new visitor queued
    Admitted  Count  consumer, visitors admitted (duplicates never counted)
    Rate      None   trigger, once a minute: the effective rate (visitors/min); 0 while off

Alarms have no notification target (a room's settings name no address); they show on the
dashboard and in the console, and anyone can add an SNS action.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from aws_cdk.aws_dynamodb import ITable
from constructs import Construct

from beekeeper.core.settings import RoomSettings
from beekeeper.core.telemetry import (
    ADMITTED_METRIC,
    ARRIVALS_METRIC,
    METRIC_NAMESPACE,
    RATE_METRIC,
    ROOM_DIMENSION,
)

MINUTE = Duration.minutes(1)
# How far the oldest waiting visitor may fall behind what the queue depth and the rate
# promise before a person should look (consumers not running, rate not applied).
BEHIND_SCHEDULE_SECONDS = 15 * 60


class RoomMonitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: RoomSettings,
        table: ITable,
        queue: sqs.IQueue,
        dead_letter_queue: sqs.IQueue,
        producer: lambda_.IFunction,
        consumer: lambda_.IFunction,
        api: apigw.RestApi,
    ) -> None:
        super().__init__(scope, construct_id)

        def room_metric(name: str, statistic: str, label: str) -> cw.Metric:
            return cw.Metric(
                namespace=METRIC_NAMESPACE,
                metric_name=name,
                dimensions_map={ROOM_DIMENSION: settings.name},
                statistic=statistic,
                period=MINUTE,
                label=label,
            )

        arrivals = room_metric(ARRIVALS_METRIC, "Sum", "Arrivals / min")
        admitted = room_metric(ADMITTED_METRIC, "Sum", "Admitted / min")
        rate = room_metric(RATE_METRIC, "Maximum", "Rate (visitors / min)")
        depth = queue.metric_approximate_number_of_messages_visible(
            period=MINUTE, statistic="Maximum", label="Waiting in the queue"
        )
        oldest = queue.metric_approximate_age_of_oldest_message(
            period=MINUTE, statistic="Maximum", label="Oldest waiting visitor (s)"
        )
        dead_letters = dead_letter_queue.metric_approximate_number_of_messages_visible(
            period=Duration.minutes(5), statistic="Maximum", label="Dead letters"
        )
        producer_errors = producer.metric_errors(period=MINUTE, label="Producer errors")
        producer_throttles = producer.metric_throttles(period=MINUTE, label="Producer throttles")
        consumer_errors = consumer.metric_errors(period=MINUTE, label="Consumer errors")
        table_throttles = cw.MathExpression(
            expression="FILL(r, 0) + FILL(w, 0)",
            using_metrics={
                "r": table.metric("ReadThrottleEvents", period=MINUTE, statistic="Sum"),
                "w": table.metric("WriteThrottleEvents", period=MINUTE, statistic="Sum"),
            },
            period=MINUTE,
            label="DynamoDB throttled requests",
        )
        api_5xx = api.metric_server_error(period=MINUTE, statistic="Sum", label="API 5xx")
        api_4xx = api.metric_client_error(period=MINUTE, statistic="Sum", label="API 4xx")
        api_count = api.metric_count(period=MINUTE, statistic="Sum", label="API requests")
        behind = cw.MathExpression(
            # How much longer the oldest visitor has waited than the queue ahead of them
            # explains at the current rate. Off (rate 0) or no rate reported: not behind.
            expression="IF(rate > 0, age - 60 * depth / rate, 0)",
            using_metrics={"age": oldest, "depth": depth, "rate": rate},
            period=MINUTE,
            label="Seconds behind schedule",
        )

        def alarm(
            construct_id: str, metric: cw.IMetric, threshold: float, periods: int, what: str
        ) -> cw.Alarm:
            return cw.Alarm(
                self,
                construct_id,
                alarm_name=f"{settings.stack_name}-{construct_id}",
                alarm_description=what,
                metric=metric,
                threshold=threshold,
                evaluation_periods=periods,
                datapoints_to_alarm=periods,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )

        self.alarms = [
            alarm(
                "dead-letters",
                dead_letters,
                1,
                1,
                "Visitors' messages failed admission 5 times and wait in the dead-letter "
                "queue: read the consumer's logs, fix, then redrive them to the queue.",
            ),
            alarm(
                "producer-errors",
                producer_errors,
                1,
                2,
                "The marketing link failed for visitors two minutes running: read the "
                "producer's logs.",
            ),
            alarm(
                "producer-throttles",
                producer_throttles,
                1,
                1,
                "New visitors were turned away by Lambda throttling: raise the account's "
                "Lambda concurrency quota or lower the other reservations.",
            ),
            alarm(
                "behind-schedule",
                behind,
                BEHIND_SCHEDULE_SECONDS,
                5,
                "The oldest waiting visitor has waited 15 minutes longer than the queue and "
                "the rate explain: are the trigger and consumers running?",
            ),
            alarm(
                "table-throttles",
                table_throttles,
                1,
                3,
                "DynamoDB throttled the room three minutes running: visitors see 'busy' "
                "answers. Check the table's metrics and the arrival shards.",
            ),
            alarm(
                "api-5xx",
                api_5xx,
                1,
                3,
                "The API answered 5xx three minutes running: check the access log's "
                "integrationError field and the execution log.",
            ),
        ]

        self.dashboard = cw.Dashboard(
            self,
            "Dashboard",
            dashboard_name=settings.stack_name,
            default_interval=Duration.hours(3),
        )

        def graph(title: str, left: list[cw.IMetric], right: list[cw.IMetric] | None = None):
            return cw.GraphWidget(title=title, left=left, right=right or [], width=8, height=6)

        self.dashboard.add_widgets(
            graph("Arrivals and admissions per minute", [arrivals, admitted], [rate]),
            graph("Queue", [depth], [oldest]),
            graph("Behind schedule (s)", [behind]),
        )
        self.dashboard.add_widgets(
            graph("Producer", [producer_errors, producer_throttles], [consumer_errors]),
            graph("DynamoDB throttles", [table_throttles]),
            graph("API", [api_count], [api_4xx, api_5xx]),
        )
        self.dashboard.add_widgets(
            graph("Dead letters", [dead_letters]),
            cw.AlarmStatusWidget(title="Alarms", alarms=list(self.alarms), width=16, height=6),
        )
