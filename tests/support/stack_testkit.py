"""What the stack tests share: the fully featured room, its one synth, lookup helpers.

Kept out of conftest.py so tests import it by name (tests.support.stack_testkit).

The room turns on everything optional (governor schedule, WAF, a logo, API logging, an alert
email), so one template shows every resource the stack can make. cdk-nag's AwsSolutions pack
runs during the same synth; its findings are read from the cloud assembly, not from a second
synth.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks

from beekeeper.apigateway.model import InvalidApi, cfn_text
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import page
from beekeeper.stacks.rest_api import ApiReferences
from beekeeper.stacks.room_stack import build_room

FULL_ROOM = RoomSettings(
    name="test-room",
    display_name="Test sale",
    region="eu-west-1",
    # An internationalised host: every CORS header must name its ASCII form, as browsers send it.
    origin="https://Bücher.Example.com:8443/sale?from=room",
    rate=30_000,
    dynamic_rate_throttling=True,
    consumer_capacity=6_000,
    arrival_shards=8,
    waf_requests_per_5_minutes=1_000,
    logo_url="https://cdn.example.com/logo.png",
    log_retention_days=14,
    alert_email="ops@shop.example",
    domain="queue.shop.example",
    certificate_arn=(
        "arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
    ),
)


# The same room with every setting a room file can change set otherwise: what a redeploy of
# an edited room file turns FULL_ROOM into (and a room with nothing optional).
CHANGED_ROOM = FULL_ROOM.replace(
    display_name="Another sale",
    origin="https://other.example/",
    rate=600,
    dynamic_rate_throttling=False,
    admission_validity_minutes=30,
    fail_open=True,
    consumer_capacity=3_000,
    arrival_shards=4,
    waf_requests_per_5_minutes=0,
    health_check_url="https://other.example/health",
    slow_ms=1_500,
    accent_colour="#aa3300",
    logo_url="",
    log_retention_days=30,
    alert_email="",
    max_inside=500,
    session_minutes=15,
    claim_minutes=1.5,
    presence_grace_seconds=30,
    presence_idle_minutes=5,
    starts_at="2030-06-01T09:00:00Z",
    join_work=2_000,
    domain="",
    certificate_arn="",
)


# When the synthesized rooms' channel key expires (a deploy passes a year from its clock).
CHANNEL_KEY_EXPIRES = 1_830_000_000


@dataclass(frozen=True)
class MetricReference:
    """A metric as a dashboard widget or an alarm names it."""

    namespace: str
    name: str
    dimensions: tuple[tuple[str, str], ...]  # (name, value), sorted
    statistic: str


@dataclass(frozen=True)
class Synthesized:
    settings: RoomSettings
    template: Template
    raw: dict[str, Any]  # the template as plain JSON
    nag_messages: list[str]  # "AwsSolutions-XXX: ..." errors and warnings left unacknowledged
    nag_report: list[dict[str, str]]  # cdk-nag's CSV report: one row per rule and resource
    outdir: Path
    # The edge WAF's stack in us-east-1 (None: the room has no per-address rule), and what
    # cdk-nag left unacknowledged in it.
    edge_waf_raw: dict[str, Any] | None = None
    edge_waf_nag_messages: tuple[str, ...] = ()

    def save(self, path: Path) -> None:
        """Everything but the settings (the caller's) and the Template (made from `raw`)."""
        fields = {
            "raw": self.raw,
            "nag_messages": self.nag_messages,
            "nag_report": self.nag_report,
            "outdir": str(self.outdir),
            "edge_waf_raw": self.edge_waf_raw,
            "edge_waf_nag_messages": list(self.edge_waf_nag_messages),
        }
        path.write_text(json.dumps(fields), encoding="utf-8")

    @classmethod
    def load(cls, path: Path, settings: RoomSettings) -> Synthesized:
        fields = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            settings,
            Template.from_json(fields["raw"]),
            fields["raw"],
            fields["nag_messages"],
            fields["nag_report"],
            Path(fields["outdir"]),
            fields["edge_waf_raw"],
            tuple(fields["edge_waf_nag_messages"]),
        )

    def resources(self, kind: str) -> dict[str, dict[str, Any]]:
        """The room's own resources of a kind (the CDK's cross-region handler left out)."""
        handler = cdk_handler_ids(self.raw)
        return {
            logical_id: resource
            for logical_id, resource in self.raw["Resources"].items()
            if resource["Type"] == kind and logical_id not in handler
        }

    def cdk_handler(self) -> dict[str, dict[str, Any]]:
        """The CDK's own cross-region reference handler (function and role), by logical ID."""
        return {
            logical_id: self.raw["Resources"][logical_id]
            for logical_id in cdk_handler_ids(self.raw)
        }

    def only(self, kind: str) -> tuple[str, dict[str, Any]]:
        (found,) = self.resources(kind).items()
        return found

    def secret(self, construct: str) -> tuple[str, dict[str, Any]]:
        """The room's secret made by the storage construct `construct` ("TicketKeys",
        "JoinSecret"), found by its logical id."""
        (found,) = (
            item
            for item in self.resources("AWS::SecretsManager::Secret").items()
            if item[0].startswith(f"Storage{construct}")
        )
        return found

    def function(self, role: str) -> tuple[str, dict[str, Any]]:
        """The function of one role (producer, trigger, ...), found by its name."""
        name = f"{self.settings.stack_name}-{role}"
        (found,) = (
            item
            for item in self.resources("AWS::Lambda::Function").items()
            if item[1]["Properties"].get("FunctionName") == name
        )
        return found

    def statements_of_role(self, role_logical_id: str) -> list[dict[str, Any]]:
        """Every policy statement granted to a role: its inline policies and attached ones."""
        role = self.raw["Resources"][role_logical_id]
        statements = [
            statement
            for policy in role["Properties"].get("Policies", [])
            for statement in policy["PolicyDocument"]["Statement"]
        ]
        for policy in self.resources("AWS::IAM::Policy").values():
            if {"Ref": role_logical_id} in policy["Properties"].get("Roles", []):
                statements.extend(policy["Properties"]["PolicyDocument"]["Statement"])
        return statements

    def metric_references(self, namespace: str) -> set[MetricReference]:
        """Every metric of `namespace` the dashboard graphs or an alarm evaluates."""
        found: set[MetricReference] = set()
        for dashboard in self.resources("AWS::CloudWatch::Dashboard").values():
            body = json.loads(flatten(dashboard["Properties"]["DashboardBody"]))
            for widget in body["widgets"]:
                for row in widget["properties"].get("metrics", []):
                    if not isinstance(row[0], str):
                        continue  # a math expression: its inputs are rows of their own
                    options = row[-1] if isinstance(row[-1], dict) else {}
                    names = [part for part in row if isinstance(part, str)]
                    pairs = tuple(sorted(zip(names[2::2], names[3::2], strict=True)))
                    found.add(MetricReference(names[0], names[1], pairs, options["stat"]))
        for alarm in self.resources("AWS::CloudWatch::Alarm").values():
            properties = alarm["Properties"]
            stats = [
                (query["MetricStat"]["Metric"], query["MetricStat"]["Stat"])
                for query in properties.get("Metrics", [])
                if "MetricStat" in query
            ]
            if "MetricName" in properties:
                stats.append((properties, properties["Statistic"]))
            for metric, statistic in stats:
                pairs = tuple(
                    sorted((d["Name"], flatten(d["Value"])) for d in metric.get("Dimensions", []))
                )
                found.add(
                    MetricReference(metric["Namespace"], metric["MetricName"], pairs, statistic)
                )
        return {reference for reference in found if reference.namespace == namespace}


# The custom resources the CDK makes for cross-region references (the edge WAF's ARN).
CROSS_REGION_TYPES = ("Custom::CrossRegionExportReader", "Custom::CrossRegionExportWriter")


def cdk_handler_ids(raw: dict[str, Any]) -> set[str]:
    """The function (and its role) behind the CDK's cross-region custom resources."""
    resources = raw["Resources"]
    found: set[str] = set()
    for resource in resources.values():
        if resource["Type"] not in CROSS_REGION_TYPES:
            continue
        function_id = resource["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
        found.add(function_id)
        role = resources[function_id]["Properties"].get("Role")
        if isinstance(role, dict) and "Fn::GetAtt" in role:
            found.add(role["Fn::GetAtt"][0])
    return found


def flatten(value: Any) -> str:
    """A CloudFormation string value as text, with {"Ref": X} written <Ref:X> and
    {"Fn::GetAtt": [X, A]} written <GetAtt:X.A>, so a test can compare whole strings (the
    loader's own reading, beekeeper.apigateway.model.cfn_text)."""
    try:
        return cfn_text(value)
    except InvalidApi as error:
        raise AssertionError(f"not a string value: {value!r}") from error


def api_references(raw: dict[str, Any], settings: RoomSettings) -> ApiReferences:
    """What stacks/rest_api.definition names, as a synthesized template writes it (flatten)."""
    resources = raw["Resources"]

    def only(kind: str, test: Any = lambda _properties: True) -> str:
        (found,) = (
            logical_id
            for logical_id, resource in resources.items()
            if resource["Type"] == kind and test(resource["Properties"])
        )
        return found

    role = only(
        "AWS::IAM::Role",
        lambda p: (
            p["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
            == {"Service": "apigateway.amazonaws.com"}
        ),
    )
    producer = only(
        "AWS::Lambda::Function",
        lambda p: p.get("FunctionName") == f"{settings.stack_name}-producer",
    )
    channel = only("AWS::AppSync::Api")
    return ApiReferences(
        table_name=f"<Ref:{only('AWS::DynamoDB::Table')}>",
        integration_role_arn=f"<GetAtt:{role}.Arn>",
        producer_arn=f"<GetAtt:{producer}.Arn>",
        region=settings.region,
        partition="<Ref:AWS::Partition>",
        page_values={
            page.REALTIME_HOST: f"<GetAtt:{channel}.Dns.Realtime>",
            page.HTTP_HOST: f"<GetAtt:{channel}.Dns.Http>",
            page.API_KEY: f"<GetAtt:{only('AWS::AppSync::ApiKey')}.ApiKey>",
        },
    )


def synthesize_template(
    outdir: Path, settings: RoomSettings, *, api_logging: bool = False
) -> dict[str, Any]:
    """Only the template of a room (no cdk-nag): for the tests that compare several rooms."""
    app = cdk.App(outdir=str(outdir))
    stack = build_room(
        app, settings, api_logging=api_logging, channel_key_expires=CHANNEL_KEY_EXPIRES
    ).room
    template: dict[str, Any] = app.synth().get_stack_by_name(stack.stack_name).template
    return template


def synthesize(
    outdir: Path, settings: RoomSettings = FULL_ROOM, *, api_logging: bool = True
) -> Synthesized:
    """Synthesize a room (FULL_ROOM) into `outdir` with cdk-nag's AwsSolutions pack applied."""
    app = cdk.App(outdir=str(outdir))
    cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
    stacks = build_room(
        app, settings, api_logging=api_logging, channel_key_expires=CHANNEL_KEY_EXPIRES
    )
    assembly = app.synth()
    artifact = assembly.get_stack_by_name(stacks.room.stack_name)
    raw = json.loads(Path(outdir, artifact.template_file).read_text(encoding="utf-8"))
    (report,) = outdir.glob(f"AwsSolutions-*-{stacks.room.stack_name}-NagReport.csv")
    with report.open(encoding="utf-8", newline="") as lines:
        rows = list(csv.DictReader(lines))
    waf_raw: dict[str, Any] | None = None
    waf_messages: tuple[str, ...] = ()
    if stacks.edge_waf is not None:
        waf_artifact = assembly.get_stack_by_name(stacks.edge_waf.stack_name)
        waf_raw = json.loads(Path(outdir, waf_artifact.template_file).read_text(encoding="utf-8"))
        waf_messages = tuple(_nag_findings(waf_artifact))
    return Synthesized(
        settings,
        Template.from_json(raw),
        raw,
        _nag_findings(artifact),
        rows,
        outdir,
        waf_raw,
        waf_messages,
    )


def _nag_findings(artifact: Any) -> list[str]:
    """cdk-nag's errors and warnings a stack left unacknowledged."""
    return [
        str(message.entry.data)
        for message in artifact.messages
        if str(message.level) != "SynthesisMessageLevel.INFO"
        and str(message.entry.data).startswith("AwsSolutions-")
    ]
