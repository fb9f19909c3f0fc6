"""What the CLI tests share: a temporary config directory, a moto-backed AWS, a recorded CDK
runner, a fixed clock, and a helper that runs the `beekeeper` group through CliRunner.

Imported by name (`tests.support.cli_testkit`), not a conftest; tests/functional/cli/conftest.py
registers the fixtures defined here."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from click.testing import CliRunner, Result
from moto import mock_aws

from beekeeper.cli.channel import publish_url
from beekeeper.cli.channel_quota import ChannelQuotas, Quota
from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import CliFactory
from beekeeper.cli.lambda_quota import AccountConcurrency
from beekeeper.cli.main import cli
from beekeeper.cli.table import get_item, to_attribute
from beekeeper.core.datamodel import (
    QUEUE_MAX_RECEIVE_COUNT,
    QUEUE_VISIBILITY_TIMEOUT_SECONDS,
    table_definition,
)
from beekeeper.core.local_room import LOCAL_OUTPUTS_KEY, LOCAL_PID_KEY, LOCAL_SETTINGS_KEY
from beekeeper.core.push import key_expiry
from beekeeper.core.settings import RoomSettings
from beekeeper.room.push import NO_PUBLISHER
from tests.support.push_double import RecordingPublisher

# A deployed room's Event API (its push channel, stacks/channel.py).
CHANNEL_API_ID = "abcdefghijklmnopqrstuvwxyz"
NOW = 1_700_000_040.0  # 22:14 UTC, second 0 of epoch minute 28,333,334
REGION = "eu-west-1"


@dataclass
class CdkCall:
    args: list[str]
    env: dict[str, str]
    cwd: Path


@dataclass
class RecordedCdkRunner:
    """Stands in for the CDK CLI: records each call, prints lines, returns scripted codes.

    `outputs` is written to the --outputs-file of a deploy, as the CDK CLI would.
    """

    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    exit_codes: dict[str, int] = field(default_factory=dict)
    lines: Sequence[str] = ("beekeeper-x |  1/2 | 10:00:00 | CREATE_COMPLETE | AWS::SQS::Queue",)
    # What one verb prints instead of `lines` (e.g. "diff").
    verb_lines: dict[str, Sequence[str]] = field(default_factory=dict)
    calls: list[CdkCall] = field(default_factory=list)
    missing: str | None = None  # what ensure_available reports, as the real runner would
    # What ensure_available says about the Node.js it runs on (cli/node.py), if anything.
    node_note: str | None = None
    # Where each call went, in order, with the wheels' and STS's (see `events`).
    events: list[str] | None = None

    def ensure_available(self) -> str | None:
        if self.missing:
            raise UserError(self.missing)
        return self.node_note

    def run(
        self,
        args: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        on_line: Callable[[str], None],
    ) -> int:
        assert cwd.is_dir(), "the CDK CLI must be given a working directory that exists"
        self.calls.append(CdkCall(list(args), dict(env), cwd))
        if self.events is not None:
            self.events.append(f"cdk {args[0]}")
        for line in self.verb_lines.get(args[0], self.lines):
            on_line(line)
        code = self.exit_codes.get(args[0], 0)
        if args[0] == "deploy" and code == 0:
            target = Path(args[args.index("--outputs-file") + 1])
            target.write_text(json.dumps(self.outputs), encoding="utf-8")
        return code


@dataclass
class FakeDns:
    """Name resolution for `deploy`'s URL checks: a table, never a DNS server."""

    addresses: dict[str, list[str]] = field(
        default_factory=lambda: {"shop.example": ["192.0.2.10", "2001:db8::10"]}
    )
    asked: list[str] = field(default_factory=list)

    def __call__(self, host: str) -> list[str]:
        self.asked.append(host)
        if host not in self.addresses:
            raise OSError(f"[Errno -2] Name or service not known: {host!r}")
        return self.addresses[host]


@dataclass
class LambdaAccount:
    """The account's Lambda concurrency, as `deploy` asks for it (moto has no GetAccountSettings).

    A double of the CLI's own ConcurrencyProbe interface; the default is an established account.
    """

    quota: int = 1000
    unreserved: int = 1000
    reserved_by_room: int = 0
    asked: list[tuple[str, bool]] = field(default_factory=list)

    def __call__(self, settings: RoomSettings, *, deployed: bool) -> AccountConcurrency:
        self.asked.append((settings.name, deployed))
        return AccountConcurrency(self.quota, self.unreserved, self.reserved_by_room)


@dataclass
class ChannelAccount:
    """The account's AppSync Events quotas, as `deploy` reads them (cli/channel_quota.py): a
    double of the CLI's own ChannelQuotaProbe; the default is AWS's defaults."""

    connections: float = 2_000
    outbound: float = 1_000_000
    asked: list[str] = field(default_factory=list)

    def __call__(self, settings: RoomSettings, api_arn: str) -> ChannelQuotas:
        self.asked.append(api_arn)
        return ChannelQuotas(
            Quota(self.connections, per_api=True, default=True),
            Quota(self.outbound, per_api=True, default=True),
        )


@dataclass
class RecordedWheels:
    """Stands in for the download of the consumer's wheels: counts the calls, reaches nothing."""

    calls: int = 0
    events: list[str] | None = None  # shared with the CDK double: what happened in order

    def __call__(self) -> Path:
        self.calls += 1
        if self.events is not None:
            self.events.append("wheels")
        return Path("/cache/lambda-wheels")


@dataclass
class Clock:
    now: float = NOW

    def __call__(self) -> float:
        return self.now


@dataclass
class WatchSleep:
    """A sleep that advances the clock, and ends a --watch after `rounds` sleeps (Ctrl-C)."""

    clock: Clock
    rounds: int = 1_000
    slept: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        if len(self.slept) >= self.rounds:
            raise KeyboardInterrupt
        self.slept.append(seconds)
        self.clock.now += seconds


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def environ(config_dir: Path) -> dict[str, str]:
    return {"BEEKEEPER_CONFIG_DIR": str(config_dir), "PATH": "/usr/bin", "HOME": "/home/op"}


@pytest.fixture
def cdk() -> RecordedCdkRunner:
    return RecordedCdkRunner()


@pytest.fixture
def dns() -> FakeDns:
    return FakeDns()


@pytest.fixture
def lambda_account() -> LambdaAccount:
    return LambdaAccount()


@pytest.fixture
def channel_account() -> ChannelAccount:
    return ChannelAccount()


@pytest.fixture
def channel() -> RecordingPublisher:
    """What the operator's commands publish to a deployed room's push channel (none reach it)."""
    return RecordingPublisher()


@pytest.fixture
def wheels() -> RecordedWheels:
    return RecordedWheels()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sleep(clock: Clock) -> WatchSleep:
    return WatchSleep(clock)


@pytest.fixture
def factory(
    environ: dict[str, str],
    cdk: RecordedCdkRunner,
    clock: Clock,
    sleep: WatchSleep,
    dns: FakeDns,
    lambda_account: LambdaAccount,
    channel_account: ChannelAccount,
    channel: RecordingPublisher,
    wheels: RecordedWheels,
) -> CliFactory:
    return CliFactory(
        environ=environ,
        session_factory=boto3.Session,
        cdk_runner=cdk,
        clock=clock,
        sleep=sleep,
        python="/opt/py/bin/python3",
        stderr_is_terminal=lambda: False,
        resolve=dns,
        concurrency=lambda_account,
        channel_quotas=channel_account,
        # A room with a channel publishes to the double; one without, to none (cli/channel.py).
        channel_publisher=lambda _settings, deployment: (
            channel if publish_url(deployment) else NO_PUBLISHER
        ),
        lambda_wheels=wheels,
    )


Invoke = Callable[..., Result]


@pytest.fixture
def invoke(factory: CliFactory) -> Invoke:
    def run(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(cli, list(args), obj=factory, input=input)

    return run


def room_settings(name: str = "sale", **changes: Any) -> RoomSettings:
    values: dict[str, Any] = {
        "name": name,
        "display_name": "Spring sale",
        "region": REGION,
        "origin": "https://shop.example/sale",
        "rate": 600,
        "arrival_shards": 4,
    }
    values.update(changes)
    return RoomSettings(**values)


def write_room(config_dir: Path, settings: RoomSettings) -> Path:
    path = config_dir / "rooms" / f"{settings.name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(settings.to_toml(), encoding="utf-8")
    return path


def write_deployment(
    config_dir: Path,
    name: str,
    outputs: Mapping[str, str],
    settings: RoomSettings | None = None,
) -> Path:
    """The record `beekeeper deploy` writes (cli/rooms.py's shape): the outputs and the
    settings deployed, `settings` or else the room file's as it is now. Without either: a
    record written before the settings were recorded, a flat object of the outputs."""
    path = config_dir / "rooms" / f"{name}.deployed.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    room_file = config_dir / "rooms" / f"{name}.toml"
    if settings is None and room_file.exists():
        settings = RoomSettings.from_toml(room_file.read_text(encoding="utf-8"))
    record: dict[str, Any] = dict(outputs)
    if settings is not None:
        record = {"outputs": dict(outputs), "settings": settings.to_mapping()}
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def write_local_record(
    config_dir: Path, settings: RoomSettings, outputs: Mapping[str, str], pid: int
) -> Path:
    """The record `beekeeper local` keeps while a room runs (local/record.py's shape)."""
    path = config_dir / "rooms" / f"{settings.name}.local.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        LOCAL_PID_KEY: pid,
        LOCAL_SETTINGS_KEY: settings.to_mapping(),
        LOCAL_OUTPUTS_KEY: {"EndpointUrl": "http://127.0.0.1:5000/s3cret", **outputs},
    }
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def local_outputs(name: str, port: int = 8080) -> dict[str, str]:
    """A local room's stack outputs: the same keys, loopback URLs."""
    base = f"http://127.0.0.1:{port}"
    return {
        **stack_outputs(name, f"beekeeper-{name}-table", f"{base}/q", f"{base}/dlq"),
        "MarketingUrl": f"{base}/beekeeper",
        "ClientCheckUrl": f"{base}/client",
        "PageUrl": f"{base}/room",
    }


def stack_outputs(name: str, table: str, queue_url: str, dlq_url: str) -> dict[str, str]:
    # The room's public address is its edge; the API's stage is its origin only.
    edge = "d111111abcdef8.cloudfront.net"
    base = f"https://{edge}"
    return {
        "PublicUrl": base,
        "EdgeDomain": edge,
        "DistributionId": "E2QWRUHEXAMPLE",
        "OriginUrl": f"https://abc123.execute-api.{REGION}.amazonaws.com/{name}/",
        "MarketingUrl": f"{base}/beekeeper",
        "ClientCheckUrl": f"{base}/client",
        "PageUrl": f"{base}/room",
        "TableName": table,
        "QueueUrl": queue_url,
        "DeadLetterQueueUrl": dlq_url,
        "ProducerFunctionName": f"beekeeper-{name}-producer",
        "TriggerFunctionName": f"beekeeper-{name}-trigger",
        "ConsumerFunctionName": f"beekeeper-{name}-consumer",
        "GovernorFunctionName": f"beekeeper-{name}-governor",
        "DashboardName": f"beekeeper-{name}",
        "JwksUrl": f"{base}/jwks.json",
        "TicketKeysSecret": f"arn:aws:secretsmanager:{REGION}:123456789012:secret:{name}-k-AbCdEf",
        "ChannelHttpDomain": f"{CHANNEL_API_ID}.appsync-api.{REGION}.amazonaws.com",
        "ChannelRealtimeDomain": f"{CHANNEL_API_ID}.appsync-realtime-api.{REGION}.amazonaws.com",
        "ChannelApiArn": f"arn:aws:appsync:{REGION}:123456789012:apis/{CHANNEL_API_ID}",
        "ChannelKeyExpires": str(key_expiry(NOW)),
    }


def create_room_resources(region: str, name: str) -> dict[str, str]:
    """The table and queues of docs/data-model.md, in moto; returns the stack outputs."""
    dynamodb = aws_client("dynamodb", region)
    table = f"beekeeper-{name}-table"
    dynamodb.create_table(**table_definition(table))
    sqs = aws_client("sqs", region)
    dlq_url = sqs.create_queue(QueueName=f"beekeeper-{name}-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue_url = sqs.create_queue(
        QueueName=f"beekeeper-{name}-visitors",
        Attributes={
            "VisibilityTimeout": str(QUEUE_VISIBILITY_TIMEOUT_SECONDS),
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": QUEUE_MAX_RECEIVE_COUNT}
            ),
        },
    )["QueueUrl"]
    # The ticket keys' secret, empty as the stack creates it.
    secret = aws_client("secretsmanager", region).create_secret(
        Name=f"{name}-ticket-keys", SecretString='{"keys": []}'
    )["ARN"]
    return {**stack_outputs(name, table, queue_url, dlq_url), "TicketKeysSecret": secret}


@dataclass
class DeployedRoom:
    settings: RoomSettings
    outputs: dict[str, str]

    @property
    def table(self) -> str:
        return self.outputs["TableName"]


def redeploy(config_dir: Path, room: DeployedRoom, **changes: Any) -> RoomSettings:
    """The deployed room with its settings changed, as `beekeeper deploy` leaves it after an
    edit of its room file: the file and the record's settings both."""
    settings = room.settings.replace(**changes)
    write_room(config_dir, settings)
    write_deployment(config_dir, settings.name, room.outputs, settings)
    return settings


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS credentials anywhere botocore looks (the metadata service is off in tests)."""
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    empty = tmp_path / "empty-aws-config"
    empty.write_text("")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty))


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


@pytest.fixture
def deployed_room(aws: None, config_dir: Path) -> DeployedRoom:
    settings = room_settings()
    write_room(config_dir, settings)
    outputs = create_room_resources(settings.region, settings.name)
    write_deployment(config_dir, settings.name, outputs)
    return DeployedRoom(settings, outputs)


@functools.cache
def aws_client(service: str, region: str = REGION) -> Any:
    """One client per service for the tests' own calls (moto intercepts it in every test)."""
    return boto3.client(service, region_name=region)


def table_client() -> Any:
    return aws_client("dynamodb")


def read_item(table: str, pk: str) -> dict[str, Any] | None:
    return get_item(table_client(), table, pk)


def put_item(table: str, item: dict[str, Any]) -> None:
    table_client().put_item(TableName=table, Item={k: to_attribute(v) for k, v in item.items()})
