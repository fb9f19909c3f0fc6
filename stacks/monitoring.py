"""The room's CloudWatch dashboard, the alarms that need a person, and who they tell.

The room's own metrics (arrivals, admissions, rates, backlog, the consumers' duplicates,
retries and abandoned batches, the governor's decisions) are Embedded Metric Format lines the
Lambdas print (room/emf.py); their names, units, namespace and dimension come from
core/telemetry.py, the same values the functions emit, so a graph can not wait for a metric
nobody writes. A test runs the real functions for a simulated minute and checks that every
metric this construct references was emitted.

Every alarm notifies one SNS topic, `beekeeper-<room>-alarms`; the room's `alert_email` is
subscribed to it (AWS asks the address to confirm once). Without one, `beekeeper deploy` says
that nobody will be told.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, Unpack

from aws_cdk import ArnFormat, Duration, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk.aws_dynamodb import ITable
from constructs import Construct

from beekeeper.core import telemetry
from beekeeper.core.settings import Mode, RoomSettings

MINUTE = Duration.minutes(1)

# The behind-schedule alarm, in percent of the minute's plan not admitted. A healthy room
# admits exactly its plan every full minute (docs/pipeline.md); a trigger that reports no plan
# while visitors wait counts as 100% behind. Missing data never breaches (a quiet room).
BEHIND_SCHEDULE_EXPRESSION = (
    "IF(FILL(planned, -1) < 0 AND depth > 0, 100, 100 * (planned - FILL(admitted, 0)) / planned)"
)
BEHIND_SCHEDULE_PERCENT = 10
BEHIND_SCHEDULE_MINUTES = 5


def alarm_topic_name(settings: RoomSettings) -> str:
    return f"{settings.stack_name}-alarms"


def room_metric(
    settings: RoomSettings, metric: telemetry.Metric, label: str, statistic: str | None = None
) -> cw.Metric:
    """One of the room's own metrics, exactly as the functions emit it (a distribution's
    percentile other than its median: `statistic`)."""
    (dimensions,) = telemetry.DIMENSION_SETS  # one set: the room
    assert dimensions == (telemetry.ROOM_DIMENSION,)
    return cw.Metric(
        namespace=telemetry.METRIC_NAMESPACE,
        metric_name=metric.name,
        dimensions_map={telemetry.ROOM_DIMENSION: settings.name},
        statistic=statistic or metric.statistic,
        period=MINUTE,
        label=label,
    )


class MetricSources(TypedDict):
    """The resources whose metrics the room's alarms and dashboard read."""

    table: ITable
    queue: sqs.IQueue
    dead_letter_queue: sqs.IQueue
    producer: lambda_.IFunction
    consumer: lambda_.IFunction
    api: apigw.RestApi


class RoomMonitoring(Construct):
    """The alarm topic with its alarms, and the dashboard, built from the room's metrics."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: RoomSettings,
        **sources: Unpack[MetricSources],
    ) -> None:
        super().__init__(scope, construct_id)
        metrics = RoomMetrics.of(settings, **sources)
        self.topic = alarm_topic(self, settings)
        self.alarms = alarms(self, settings, metrics, cw_actions.SnsAction(self.topic))
        self.dashboard = dashboard(self, settings, metrics, self.alarms)


@dataclass(frozen=True)
class RoomMetrics:
    """Every metric the alarms and the dashboard read: the room's own (core/telemetry.py), and
    those of its queue, functions, table and API."""

    arrivals: cw.Metric
    rejoined: cw.Metric
    admitted: cw.Metric
    planned: cw.Metric
    rate: cw.Metric
    operator_rate: cw.Metric
    backlog: cw.Metric
    duplicates: cw.Metric
    write_retries: cw.Metric
    abandoned: cw.Metric
    halved: cw.Metric
    held: cw.Metric
    raised: cw.Metric
    shop_median: cw.Metric
    shop_p90: cw.Metric
    waits: list[cw.IMetric]
    depth: cw.Metric
    oldest: cw.Metric
    dead_letters: cw.Metric
    producer_errors: cw.Metric
    producer_throttles: cw.Metric
    consumer_errors: cw.Metric
    table_throttles: cw.MathExpression
    api_5xx: cw.Metric
    api_4xx: cw.Metric
    api_count: cw.Metric
    behind: cw.MathExpression

    @classmethod
    def of(cls, settings: RoomSettings, **sources: Unpack[MetricSources]) -> RoomMetrics:
        table, queue, dead_letter_queue = (
            sources["table"],
            sources["queue"],
            sources["dead_letter_queue"],
        )
        producer, consumer, api = sources["producer"], sources["consumer"], sources["api"]

        def ours(metric: telemetry.Metric, label: str) -> cw.Metric:
            return room_metric(settings, metric, label)

        admitted = ours(telemetry.ADMITTED, "Admitted / min")
        planned = ours(telemetry.PLANNED, "Planned / min")
        depth = queue.metric_approximate_number_of_messages_visible(
            period=MINUTE, statistic="Maximum", label="Waiting in the queue"
        )
        return cls(
            arrivals=ours(telemetry.ARRIVALS, "Arrivals / min"),
            rejoined=ours(telemetry.REJOINED, "Rejoined / min"),
            admitted=admitted,
            planned=planned,
            rate=ours(telemetry.RATE, "Rate (visitors / min)"),
            operator_rate=ours(telemetry.OPERATOR_RATE, "Operator's rate (visitors / min)"),
            backlog=ours(telemetry.BACKLOG, "Waiting when the minute began"),
            duplicates=ours(telemetry.DUPLICATES, "Duplicate deliveries"),
            write_retries=ours(telemetry.WRITE_RETRIES, "Write retries"),
            abandoned=ours(telemetry.ABANDONED_BATCHES, "Abandoned batches"),
            halved=ours(telemetry.GOVERNOR_HALVED, "Governor: halved"),
            held=ours(telemetry.GOVERNOR_HELD, "Governor: held (slow)"),
            raised=ours(telemetry.GOVERNOR_RAISED, "Governor: raised"),
            shop_median=ours(telemetry.GOVERNOR_MEDIAN_MS, "Shop's median answer time (ms)"),
            shop_p90=ours(telemetry.GOVERNOR_P90_MS, "Shop's p90 answer time (ms)"),
            waits=[
                room_metric(settings, telemetry.WAIT, f"Wait, {p} (s)", statistic=p)
                for p in telemetry.PERCENTILES
            ],
            depth=depth,
            oldest=queue.metric_approximate_age_of_oldest_message(
                period=MINUTE, statistic="Maximum", label="Oldest waiting visitor (s)"
            ),
            dead_letters=dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(5), statistic="Maximum", label="Dead letters"
            ),
            producer_errors=producer.metric_errors(period=MINUTE, label="Producer errors"),
            producer_throttles=producer.metric_throttles(period=MINUTE, label="Producer throttles"),
            consumer_errors=consumer.metric_errors(period=MINUTE, label="Consumer errors"),
            table_throttles=cw.MathExpression(
                expression="FILL(r, 0) + FILL(w, 0)",
                using_metrics={
                    "r": table.metric("ReadThrottleEvents", period=MINUTE, statistic="Sum"),
                    "w": table.metric("WriteThrottleEvents", period=MINUTE, statistic="Sum"),
                },
                period=MINUTE,
                label="DynamoDB throttled requests",
            ),
            api_5xx=api.metric_server_error(period=MINUTE, statistic="Sum", label="API 5xx"),
            api_4xx=api.metric_client_error(period=MINUTE, statistic="Sum", label="API 4xx"),
            api_count=api.metric_count(period=MINUTE, statistic="Sum", label="API requests"),
            behind=cw.MathExpression(
                expression=BEHIND_SCHEDULE_EXPRESSION,
                using_metrics={"planned": planned, "admitted": admitted, "depth": depth},
                period=MINUTE,
                label="Behind plan (% of the minute's plan not admitted)",
            ),
        )


def alarm_topic(scope: Construct, settings: RoomSettings) -> sns.Topic:
    """The topic every alarm notifies, with the room's `alert_email` subscribed.

    Not encrypted with KMS: CloudWatch can not publish to a topic under the AWS managed SNS
    key, a customer managed key costs every room a monthly fee, and an alarm notification
    carries no visitor data. TLS is enforced.
    """
    topic = sns.Topic(
        scope,
        "AlarmTopic",
        topic_name=alarm_topic_name(settings),
        display_name=f"Beekeeper {settings.name}",
        enforce_ssl=True,
    )
    # The TLS policy replaces SNS's default topic policy, so CloudWatch must be allowed to
    # publish explicitly: only this room's alarms.
    topic.add_to_resource_policy(
        iam.PolicyStatement(
            sid="RoomAlarmsPublish",
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            actions=["sns:Publish"],
            resources=[topic.topic_arn],
            conditions={
                "ArnLike": {
                    "aws:SourceArn": room_alarm_arns(scope, settings),
                }
            },
        )
    )
    if settings.alert_email:
        topic.add_subscription(subscriptions.EmailSubscription(settings.alert_email))
    return topic


def alarms(
    scope: Construct, settings: RoomSettings, metrics: RoomMetrics, notify: cw.IAlarmAction
) -> list[cw.Alarm]:
    """The alarms that need a person, each notifying `notify`."""

    def alarm(
        construct_id: str, metric: cw.IMetric, threshold: float, periods: int, what: str
    ) -> cw.Alarm:
        made = cw.Alarm(
            scope,
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
        made.add_alarm_action(notify)
        return made

    return [
        alarm(
            "dead-letters",
            metrics.dead_letters,
            1,
            1,
            "Visitors' messages failed admission 5 times and wait in the dead-letter "
            "queue: read the consumer's logs, fix, then redrive them to the queue.",
        ),
        alarm(
            "producer-errors",
            metrics.producer_errors,
            1,
            2,
            "The marketing link failed for visitors two minutes running: read the producer's logs.",
        ),
        alarm(
            "producer-throttles",
            metrics.producer_throttles,
            1,
            1,
            "New visitors were turned away by Lambda throttling: raise the account's "
            "Lambda concurrency quota or lower the other reservations.",
        ),
        alarm(
            "behind-schedule",
            metrics.behind,
            BEHIND_SCHEDULE_PERCENT,
            BEHIND_SCHEDULE_MINUTES,
            f"For {BEHIND_SCHEDULE_MINUTES} minutes the room admitted at least "
            f"{BEHIND_SCHEDULE_PERCENT}% fewer visitors than it planned (or the trigger "
            "planned nothing while visitors waited): are the trigger and consumers "
            "running? Read their logs and the consumer errors.",
        ),
        alarm(
            "table-throttles",
            metrics.table_throttles,
            1,
            3,
            "DynamoDB throttled the room three minutes running: visitors see 'busy' "
            "answers. Check the table's metrics and the arrival shards.",
        ),
        alarm(
            "api-5xx",
            metrics.api_5xx,
            1,
            3,
            "The API answered 5xx three minutes running: check the access log's "
            "integrationError field and the execution log.",
        ),
    ]


def dashboard(
    scope: Construct, settings: RoomSettings, metrics: RoomMetrics, alarms: list[cw.Alarm]
) -> cw.Dashboard:
    """The room's dashboard: four rows of three graphs, the push channel's, and capacity mode's
    own graph."""
    m = metrics
    made = cw.Dashboard(
        scope,
        "Dashboard",
        dashboard_name=settings.stack_name,
        default_interval=Duration.hours(3),
    )
    made.add_widgets(
        graph(
            "Arrivals and admissions per minute",
            [m.arrivals, m.admitted, m.planned, m.rejoined],
            [m.rate],
        ),
        graph("Queue", [m.depth, m.backlog], [m.oldest]),
        graph("Behind plan (%)", [m.behind]),
    )
    made.add_widgets(
        graph("Rate and governor", [m.rate, m.operator_rate], [m.halved, m.held, m.raised]),
        graph("Consumers", [m.duplicates, m.write_retries, m.abandoned], [m.consumer_errors]),
        graph("Producer", [m.producer_errors, m.producer_throttles]),
    )
    made.add_widgets(
        graph("DynamoDB throttles", [m.table_throttles]),
        graph("API", [m.api_count], [m.api_4xx, m.api_5xx]),
        graph("Dead letters", [m.dead_letters]),
    )
    made.add_widgets(
        graph("Shop's answer time (governor)", [m.shop_median, m.shop_p90]),
        graph("Wait from joining to admission, by minute of admission", m.waits),
        cw.AlarmStatusWidget(title="Alarms", alarms=list(alarms), width=8, height=6),
    )
    made.add_widgets(push_graph(settings))
    if settings.mode is Mode.CAPACITY:
        made.add_widgets(capacity_graph(settings))
    return made


def graph(
    title: str, left: list[cw.IMetric], right: list[cw.IMetric] | None = None
) -> cw.GraphWidget:
    return cw.GraphWidget(title=title, left=left, right=right or [], width=8, height=6)


def capacity_graph(settings: RoomSettings) -> cw.GraphWidget:
    """Capacity mode: who is inside the shop against the cap, and how places free."""
    inside, cap, left_line, left_shop, no_shows, ended = (
        room_metric(settings, metric, label)
        for metric, label in (
            (telemetry.INSIDE, "Inside as the minute began"),
            (telemetry.MAX_INSIDE, "The cap (max_inside)"),
            (telemetry.LEFT_LINE, "Left the line / min"),
            (telemetry.LEFT_SHOP, "Left the shop / min"),
            (telemetry.NO_SHOWS, "Never arrived / min"),
            (telemetry.SESSIONS_ENDED, "Sessions ran out / min"),
        )
    )
    return graph(
        "Inside the shop (capacity mode)", [inside, cap], [left_line, left_shop, no_shows, ended]
    )


def push_graph(settings: RoomSettings) -> cw.GraphWidget:
    """The push channel: changes and resyncs published to waiting pages, and what failed."""
    return graph(
        "Push channel: changes published to waiting pages / min",
        [room_metric(settings, telemetry.PUSHES, "Published / min")],
        [room_metric(settings, telemetry.PUSH_FAILURES, "Refused or unreachable / min")],
    )


def room_alarm_arns(scope: Construct, settings: RoomSettings) -> str:
    """`arn:<partition>:cloudwatch:<region>:<account>:alarm:beekeeper-<room>-*`: every alarm
    above is named with the room's prefix."""
    return Stack.of(scope).format_arn(
        service="cloudwatch",
        resource="alarm",
        resource_name=f"{settings.stack_name}-*",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )
