"""The producer, trigger, consumer and governor Lambdas, their roles, logs and schedules.

Each function has its own role with an inline policy naming only its actions
(stacks/permissions.py) on only its resources, and its own log group created by the stack
(with the room's retention, deleted on destroy): no AWS managed policy, no log group that
Lambda creates on its own and leaves behind.
"""

from __future__ import annotations

import atexit
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from aws_cdk.aws_dynamodb import ITable
from constructs import Construct

from beekeeper.core import names
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import capacity, permissions
from beekeeper.stacks.channel import RoomChannel
from beekeeper.stacks.lambda_asset import stage_lambda_source
from beekeeper.stacks.lambda_wheels import (
    LAMBDA_ARCHITECTURE,
    LAMBDA_RUNTIME,
    WHEEL_TARGET,
    cached_wheels,
)

# The newest Python runtime Lambda offers in the pinned aws-cdk-lib (cdk-nag's L1 checks it),
# and the architecture: named in stacks/lambda_wheels.py, whose wheels are built for them.
RUNTIME = next(runtime for runtime in lambda_.Runtime.ALL if runtime.name == LAMBDA_RUNTIME)
ARCHITECTURE = next(
    architecture
    for architecture in (lambda_.Architecture.ARM_64, lambda_.Architecture.X86_64)
    if architecture.name == LAMBDA_ARCHITECTURE
)

RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
}


@dataclass(frozen=True)
class FunctionSpec:
    role: str  # producer, trigger, consumer, governor (the keys of stacks/permissions.py)
    timeout_seconds: int
    memory_mb: int
    description: str

    @property
    def handler(self) -> str:
        return f"beekeeper.lambdas.{self.role}.handler"


SPECS = {
    spec.role: spec
    for spec in (
        # The marketing link: answers each new visitor within a few hundred ms; memory buys
        # CPU and a faster cold start on the hot path.
        FunctionSpec("producer", 10, 512, "Marketing link: issues tokens, queues visitors"),
        FunctionSpec("trigger", 30, 256, "Every minute: claims the minute, starts consumers"),
        # A consumer paces its quota over one minute, plus margin to finish its last batch.
        FunctionSpec("consumer", 75, 512, "Admits one minute's quota from the queue"),
        FunctionSpec("governor", 60, 256, "Samples the origin's latency, adjusts the rate"),
    )
}

# Lambda retries failed or throttled asynchronous invocations for up to six hours by default.
# A trigger, consumer or governor run belongs to its minute: a late or repeated run would
# admit a minute's quota twice. So: no retries, and an event older than a minute is dropped
# (the next minute's run takes over; the visitors stay queued, nothing is lost).
SCHEDULED_MAX_EVENT_AGE = Duration.seconds(60)

# Lambda's Python runtime drops INFO records unless the function says otherwise, and a room's
# per-minute story (claims, plans, consumer reports, governor decisions) is written at INFO.
# JSON puts each record's extra fields, such as the room's name (lambdas/log_context.py), in
# its own field. The metric lines (room/emf.py) carry no level, which Lambda reads as INFO:
# a level above INFO would drop the room's metrics too.
LOG_FORMAT = lambda_.LoggingFormat.JSON
APPLICATION_LOG_LEVEL = lambda_.ApplicationLogLevel.INFO
# START, END and REPORT (duration, memory) of every invocation.
SYSTEM_LOG_LEVEL = lambda_.SystemLogLevel.INFO

_staging_dirs: list[tempfile.TemporaryDirectory[str]] = []


def _staged_code(wheels: Sequence[Path] = ()) -> lambda_.Code:
    staging = tempfile.TemporaryDirectory(prefix="beekeeper-lambda-asset-")
    _staging_dirs.append(staging)
    return lambda_.Code.from_asset(str(stage_lambda_source(Path(staging.name), wheels=wheels)))


@atexit.register
def _remove_staging_dirs() -> None:
    # CDK has copied the asset into its output folder by now.
    for staging in _staging_dirs:
        staging.cleanup()


class RoomFunction(Construct):
    """One function with its own role and log group."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: RoomSettings,
        spec: FunctionSpec,
        code: lambda_.Code,
        environment: dict[str, str],
        reserved_concurrency: int | None,
    ) -> None:
        super().__init__(scope, construct_id)
        function_name = settings.names.function(spec.role)
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            log_group_name=f"/aws/lambda/{function_name}",
            retention=RETENTION[settings.log_retention_days],
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"{function_name}: only the calls this function makes",
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=list(permissions.LOG_ACTIONS),
                resources=[self.log_group.log_group_arn],
            )
        )
        scheduled = reserved_concurrency is not None
        self.function = lambda_.Function(
            self,
            "Function",
            function_name=function_name,
            description=spec.description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=spec.handler,
            code=code,
            timeout=Duration.seconds(spec.timeout_seconds),
            memory_size=spec.memory_mb,
            role=self.role,
            log_group=self.log_group,
            logging_format=LOG_FORMAT,
            application_log_level_v2=APPLICATION_LOG_LEVEL,
            system_log_level_v2=SYSTEM_LOG_LEVEL,
            environment=environment,
            reserved_concurrent_executions=reserved_concurrency,
            retry_attempts=0 if scheduled else None,
            max_event_age=SCHEDULED_MAX_EVENT_AGE if scheduled else None,
        )
        # The role's policy must exist before the function first runs and logs.
        self.function.node.add_dependency(self.role)

    def allow(self, actions: tuple[str, ...], resources: list[str]) -> None:
        if actions:
            self.role.add_to_policy(iam.PolicyStatement(actions=list(actions), resources=resources))


class RoomFunctions(Construct):
    """The four functions, wired to the table, the queue and each other."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: RoomSettings,
        table: ITable,
        queue: sqs.IQueue,
        ticket_keys: secretsmanager.ISecret,
        join_secret: secretsmanager.ISecret,
        channel: RoomChannel,
    ) -> None:
        super().__init__(scope, construct_id)
        code = _staged_code()
        # Only the consumer signs tickets: only its asset carries the crypto wheels (the
        # producer's cold start, on every new visitor's path, stays small).
        signing_code = _staged_code(cached_wheels(WHEEL_TARGET, os.environ))
        common = {**settings.to_lambda_environment(), names.TABLE_NAME_VARIABLE: table.table_name}
        with_queue = {**common, names.QUEUE_URL_VARIABLE: queue.queue_url}

        def make(
            role: str,
            environment: dict[str, str],
            reserved: int | None,
            role_code: lambda_.Code = code,
        ) -> RoomFunction:
            made = RoomFunction(
                self,
                role.capitalize(),
                settings=settings,
                spec=SPECS[role],
                code=role_code,
                environment=environment,
                reserved_concurrency=reserved,
            )
            made.allow(permissions.table_actions(role, settings.mode), [table.table_arn])
            made.allow(
                permissions.index_actions(role, settings.mode),
                [table.table_arn + permissions.INDEX_ARN_SUFFIX],
            )
            made.allow(permissions.QUEUE_ACTIONS[role], [queue.queue_arn])
            return made

        reserved = capacity.reserved_concurrency(settings)
        self.consumer = make(
            "consumer",
            {**with_queue, names.TICKET_KEYS_SECRET_VARIABLE: ticket_keys.secret_arn},
            reserved["consumer"],
            signing_code,
        )
        # The private ticket keys: read by the function that signs, and by nothing else.
        self.consumer.allow(permissions.READS_TICKET_KEYS, [ticket_keys.secret_arn])
        starts_consumers = {
            **with_queue,
            names.CONSUMER_FUNCTION_VARIABLE: self.consumer.function.function_name,
        }
        # The producer keeps whatever concurrency the others do not reserve.
        self.producer = make(
            "producer",
            {**starts_consumers, names.JOIN_SECRET_VARIABLE: join_secret.secret_arn},
            None,
        )
        # The join secret: read by the marketing link, and by nothing else.
        self.producer.allow(permissions.READS_JOIN_SECRET, [join_secret.secret_arn])
        self.trigger = make("trigger", starts_consumers, reserved["trigger"])
        # The unqualified ARN only: they invoke $LATEST, never a version.
        for starter in (self.trigger, self.producer):
            starter.allow(permissions.STARTS_CONSUMERS, [self.consumer.function.function_arn])
        self.governor = make("governor", common, reserved["governor"])
        self.by_role = {
            "producer": self.producer,
            "trigger": self.trigger,
            "consumer": self.consumer,
            "governor": self.governor,
        }
        # The writers of the room's state tell the waiting pages on its channel (room/push.py).
        for role in permissions.PUBLISHERS:
            publisher = self.by_role[role]
            publisher.function.add_environment(
                names.CHANNEL_HTTP_DOMAIN_VARIABLE, channel.http_domain
            )
            channel.grant_publish(publisher.role)

        self.trigger_schedule = self._every_minute("TriggerSchedule", self.trigger.function)
        self.governor_schedule = (
            self._every_minute("GovernorSchedule", self.governor.function)
            if settings.dynamic_rate_throttling
            else None
        )

    def _every_minute(self, construct_id: str, function: lambda_.IFunction) -> events.Rule:
        return events.Rule(
            self,
            construct_id,
            schedule=events.Schedule.rate(Duration.minutes(1)),
            targets=[
                targets.LambdaFunction(
                    function, retry_attempts=0, max_event_age=SCHEDULED_MAX_EVENT_AGE
                )
            ],
        )
