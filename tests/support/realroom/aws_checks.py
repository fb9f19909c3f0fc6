"""What only a room in AWS has: its metrics in CloudWatch, alarm notices, and what `destroy`
leaves behind. Each function takes boto3 clients, so the tests run them against moto too.

AWS behaviour they rely on (CloudWatch, SNS and Resource Groups Tagging API documentation):
- a new custom metric can take up to 15 minutes to appear in ListMetrics, but its statistics
  are available sooner through GetMetricData: the metrics are read with GetMetricData by name;
- an alarm's history records each action it executed ("Successfully executed action <topic>")
  or why it failed; SetAlarmState puts an alarm into ALARM until its next evaluation;
- GetResources lists tagged and previously tagged resources, which may include deleted ones:
  every ARN it lists is looked up in its own service before it counts as left behind, and the
  resources that can carry no tag (dashboards) or are global (IAM roles) are looked up by name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core import telemetry

ROOM_TAG = "beekeeper:room"  # stacks/room_stack.py tags every resource of the stack with it


def metric_sums(
    cloudwatch: Any, room: str, names: Iterable[str], since: datetime, until: datetime
) -> dict[str, float | None]:
    """Each metric's total over [since, until) (its maximum for a level); None: no data."""
    by_name = {metric.name: metric for metric in telemetry.METRICS}
    queries = [
        {
            "Id": f"m{index}",
            "MetricStat": {
                "Metric": {
                    "Namespace": telemetry.METRIC_NAMESPACE,
                    "MetricName": name,
                    "Dimensions": [{"Name": telemetry.ROOM_DIMENSION, "Value": room}],
                },
                "Period": 60,
                "Stat": by_name[name].statistic,
            },
        }
        for index, name in enumerate(names)
    ]
    answer = cloudwatch.get_metric_data(
        MetricDataQueries=queries, StartTime=since, EndTime=until, ScanBy="TimestampAscending"
    )
    found: dict[str, float | None] = {}
    for query, result in zip(queries, answer["MetricDataResults"], strict=True):
        name = query["MetricStat"]["Metric"]["MetricName"]
        values = result.get("Values") or []
        if not values:
            found[name] = None
        elif by_name[name].statistic == "Sum":
            found[name] = float(sum(values))
        else:
            found[name] = float(max(values))
    return found


def alarm_notice_delivered(cloudwatch: Any, alarm_name: str, topic_arn: str) -> bool:
    """Whether the alarm's history says it published to the topic successfully."""
    history = cloudwatch.describe_alarm_history(
        AlarmName=alarm_name, HistoryItemType="Action", MaxRecords=20
    )["AlarmHistoryItems"]
    return any(
        "Successfully executed action" in item["HistorySummary"]
        and topic_arn in item["HistorySummary"]
        for item in history
    )


def _exists(call: Callable[[], Any], *gone: str) -> bool:
    try:
        call()
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in gone or code in ("ResourceNotFoundException", "NotFoundException"):
            return False
        raise
    return True


def _tagged_resource_exists(clients: Callable[[str], Any], arn: str) -> bool:
    """Look an ARN from the tagging API up in its own service (it may list deleted ones)."""
    service = arn.split(":")[2]
    resource = arn.split(":", 5)[5]
    if service == "dynamodb":
        name = resource.split("/")[1]
        return _exists(lambda: clients("dynamodb").describe_table(TableName=name))
    if service == "sqs":
        return _exists(
            lambda: clients("sqs").get_queue_url(QueueName=resource),
            "AWS.SimpleQueueService.NonExistentQueue",
            "QueueDoesNotExist",
        )
    if service == "lambda":
        return _exists(lambda: clients("lambda").get_function(FunctionName=arn))
    if service == "logs":
        name = resource.removeprefix("log-group:").removesuffix(":*")
        groups = clients("logs").describe_log_groups(logGroupNamePrefix=name)["logGroups"]
        return any(group["logGroupName"] == name for group in groups)
    if service == "sns":
        return _exists(lambda: clients("sns").get_topic_attributes(TopicArn=arn))
    if service == "cloudwatch":
        name = resource.removeprefix("alarm:")
        return bool(clients("cloudwatch").describe_alarms(AlarmNames=[name])["MetricAlarms"])
    if service == "events":
        name = resource.removeprefix("rule/")
        return _exists(lambda: clients("events").describe_rule(Name=name))
    if service == "secretsmanager":
        # A deleted secret waits out its recovery window unreadable, then goes by itself.
        try:
            secret = clients("secretsmanager").describe_secret(SecretId=arn)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                return False
            raise
        return "DeletedDate" not in secret
    if service == "apigateway":
        api_id = resource.split("/")[2]
        return _exists(lambda: clients("apigateway").get_rest_api(restApiId=api_id))
    if service == "wafv2":
        # .../regional/webacl/<name>/<id>: the origin lock on the stage.
        scope, _, name, acl_id = resource.split("/")[:4]
        return _exists(
            lambda: clients("wafv2").get_web_acl(
                Name=name, Id=acl_id, Scope="REGIONAL" if scope == "regional" else "CLOUDFRONT"
            ),
            "WAFNonexistentItemException",
        )
    return True  # a service this check does not know: reported, never silently passed


def leftovers(
    clients: Callable[[str], Any],
    room: str,
    us_east_1: Callable[[str], Any] | None = None,
) -> list[str]:
    """Everything of the room that still exists: tagged resources, and by name what a tag
    can not find (the dashboard; IAM roles, which are global); with `us_east_1` clients also
    the edge's (the distribution, global, and the edge WAF's stack in us-east-1)."""
    prefix = f"beekeeper-{room}"
    found: list[str] = []
    if us_east_1 is not None:
        distributions = us_east_1("cloudfront").list_distributions()["DistributionList"]
        found += [
            f"distribution {d['Id']}"
            for d in distributions.get("Items", [])
            if d.get("Comment") == f"Beekeeper waiting room {room}"
        ]
        waf_stack = f"{prefix}-edge-waf"
        if _exists(
            lambda: us_east_1("cloudformation").describe_stacks(StackName=waf_stack),
            "ValidationError",
        ):
            found.append(f"stack {waf_stack} in us-east-1")
    tagging = clients("resourcegroupstaggingapi")
    token = ""
    while True:
        page = tagging.get_resources(
            TagFilters=[{"Key": ROOM_TAG, "Values": [room]}], PaginationToken=token
        )
        for mapping in page["ResourceTagMappingList"]:
            if _tagged_resource_exists(clients, mapping["ResourceARN"]):
                found.append(mapping["ResourceARN"])
        token = page.get("PaginationToken", "")
        if not token:
            break
    dashboards = clients("cloudwatch").list_dashboards(DashboardNamePrefix=prefix)
    found += [f"dashboard {d['DashboardName']}" for d in dashboards["DashboardEntries"]]
    roles = clients("iam").get_paginator("list_roles").paginate()
    found += [
        f"role {role['RoleName']}"
        for page in roles
        for role in page["Roles"]
        if role["RoleName"].startswith(f"{prefix}-")
    ]
    return sorted(found)


def wait_until_gone(
    clients: Callable[[str], Any],
    room: str,
    timeout: float,
    sleep: Callable[[float], None],
    us_east_1: Callable[[str], Any] | None = None,
) -> list[str]:
    """Leftovers, looked up until none remain or `timeout` passes (deletion is eventual)."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = leftovers(clients, room, us_east_1)
        if not remaining or time.monotonic() >= deadline:
            return remaining
        sleep(15)


def recent(minutes: int) -> tuple[datetime, datetime]:
    until = datetime.now(UTC) + timedelta(minutes=1)
    return until - timedelta(minutes=minutes), until
