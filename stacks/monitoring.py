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
from beekeeper.core.settings import RoomSettings

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

        def ours(metric: telemetry.Metric, label: str) -> cw.Metric:
            return room_metric(settings, metric, label)

        arrivals = ours(telemetry.ARRIVALS, "Arrivals / min")
        rejoined = ours(telemetry.REJOINED, "Rejoined / min")
        admitted = ours(telemetry.ADMITTED, "Admitted / min")
        planned = ours(telemetry.PLANNED, "Planned / min")
        rate = ours(telemetry.RATE, "Rate (visitors / min)")
        operator_rate = ours(telemetry.OPERATOR_RATE, "Operator's rate (visitors / min)")
        backlog = ours(telemetry.BACKLOG, "Waiting when the minute began")
        duplicates = ours(telemetry.DUPLICATES, "Duplicate deliveries")
        write_retries = ours(telemetry.WRITE_RETRIES, "Write retries")
        abandoned = ours(telemetry.ABANDONED_BATCHES, "Abandoned batches")
        halved = ours(telemetry.GOVERNOR_HALVED, "Governor: halved")
        held = ours(telemetry.GOVERNOR_HELD, "Governor: held (slow)")
        raised = ours(telemetry.GOVERNOR_RAISED, "Governor: raised")
        shop_median = ours(telemetry.GOVERNOR_MEDIAN_MS, "Shop's median answer time (ms)")
        shop_p90 = ours(telemetry.GOVERNOR_P90_MS, "Shop's p90 answer time (ms)")
        waits: list[cw.IMetric] = [
            room_metric(settings, telemetry.WAIT, f"Wait, {p} (s)", statistic=p)
            for p in telemetry.PERCENTILES
        ]

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
            expression=BEHIND_SCHEDULE_EXPRESSION,
            using_metrics={"planned": planned, "admitted": admitted, "depth": depth},
            period=MINUTE,
            label="Behind plan (% of the minute's plan not admitted)",
        )

        # Not encrypted with KMS: CloudWatch can not publish to a topic under the AWS managed
        # SNS key, a customer managed key costs every room a monthly fee, and an alarm
        # notification carries no visitor data. TLS is enforced.
        self.topic = sns.Topic(
            self,
            "AlarmTopic",
            topic_name=alarm_topic_name(settings),
            display_name=f"Beekeeper {settings.name}",
            enforce_ssl=True,
        )
        # The TLS policy replaces SNS's default topic policy, so CloudWatch must be allowed to
        # publish explicitly: only this room's alarms.
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="RoomAlarmsPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "ArnLike": {
                        "aws:SourceArn": room_alarm_arns(self, settings),
                    }
                },
            )
        )
        if settings.alert_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(settings.alert_email))
        notify = cw_actions.SnsAction(self.topic)

        def alarm(
            construct_id: str, metric: cw.IMetric, threshold: float, periods: int, what: str
        ) -> cw.Alarm:
            made = cw.Alarm(
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
            made.add_alarm_action(notify)
            return made

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
                BEHIND_SCHEDULE_PERCENT,
                BEHIND_SCHEDULE_MINUTES,
                f"For {BEHIND_SCHEDULE_MINUTES} minutes the room admitted at least "
                f"{BEHIND_SCHEDULE_PERCENT}% fewer visitors than it planned (or the trigger "
                "planned nothing while visitors waited): are the trigger and consumers "
                "running? Read their logs and the consumer errors.",
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
            graph(
                "Arrivals and admissions per minute",
                [arrivals, admitted, planned, rejoined],
                [rate],
            ),
            graph("Queue", [depth, backlog], [oldest]),
            graph("Behind plan (%)", [behind]),
        )
        self.dashboard.add_widgets(
            graph("Rate and governor", [rate, operator_rate], [halved, held, raised]),
            graph("Consumers", [duplicates, write_retries, abandoned], [consumer_errors]),
            graph("Producer", [producer_errors, producer_throttles]),
        )
        self.dashboard.add_widgets(
            graph("DynamoDB throttles", [table_throttles]),
            graph("API", [api_count], [api_4xx, api_5xx]),
            graph("Dead letters", [dead_letters]),
        )
        self.dashboard.add_widgets(
            graph("Shop's answer time (governor)", [shop_median, shop_p90]),
            graph("Wait from joining to admission, by minute of admission", waits),
            cw.AlarmStatusWidget(title="Alarms", alarms=list(self.alarms), width=8, height=6),
        )
        if settings.max_inside:
            self.dashboard.add_widgets(
                graph(
                    "Inside the shop (capacity mode)",
                    [
                        ours(telemetry.INSIDE, "Inside as the minute began"),
                        ours(telemetry.MAX_INSIDE, "The cap (max_inside)"),
                    ],
                    [
                        ours(telemetry.LEFT_LINE, "Left the line / min"),
                        ours(telemetry.LEFT_SHOP, "Left the shop / min"),
                        ours(telemetry.NO_SHOWS, "Never arrived / min"),
                        ours(telemetry.SESSIONS_ENDED, "Sessions ran out / min"),
                    ],
                )
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
