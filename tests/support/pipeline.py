"""A moto account with the room's table and queue, and helpers to drive the Lambdas."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from beekeeper.apigateway.room import Boto3DynamoDb, HttpRequest, HttpResponse, run_integration
from beekeeper.core.datamodel import (
    QUEUE_MAX_RECEIVE_COUNT,
    QUEUE_VISIBILITY_TIMEOUT_SECONDS,
    Token,
    table_definition,
)
from beekeeper.core.join_work import JoinKeys
from beekeeper.core.presence import Presence
from beekeeper.core.retry import Pauses
from beekeeper.core.routes import route as registered
from beekeeper.core.settings import RoomSettings
from beekeeper.room import places
from beekeeper.room.emf import DISCARD, MetricSink
from beekeeper.room.join_gate import JoinGate
from beekeeper.room.producer import Producer

TABLE = "beekeeper-shop"
# The room's join secret in the moto account, and the token key derived from it.
JOIN_SECRET_VALUE = "j" * 64
TOKEN_KEY = JoinKeys.from_secret(JOIN_SECRET_VALUE).token


def issued_token(ordinal: int, *, key: bytes = TOKEN_KEY) -> Token:
    """A token as the room issues it (its id marked with the room's key), predictable: its
    random part is the ordinal."""
    return Token.issue(ordinal, lambda size: ordinal.to_bytes(size, "big"), key)


def room(**changes: Any) -> RoomSettings:
    base = RoomSettings(
        name="shop",
        display_name="Spring sale",
        region="us-east-1",
        origin="https://shop.example.com/sale",
        rate=60,
    )
    return base.replace(**changes) if changes else base


def producer(
    aws: Aws,
    clock: FakeClock,
    *,
    metrics: MetricSink = DISCARD,
    gate: JoinGate | None = None,
    **settings: Any,
) -> Producer:
    """The marketing link's code on moto, with predictable tokens and shard choices; places
    cost no work unless the test gives a `gate` (and join_work)."""
    counter = iter(range(1, 1_000_000))
    settings.setdefault("join_work", 0)
    return Producer(
        settings=room(**settings),
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=aws.sqs,
        clock=clock,
        token_bytes=lambda n: next(counter).to_bytes(n, "big"),
        rng=random.Random(7),
        metrics=metrics,
        gate=gate,
        pauses=clock.pauses(),
    )


@dataclass
class Aws:
    dynamodb: Any
    sqs: Any
    queue_url: str
    dlq_url: str
    table: str = TABLE
    join_secret: str = ""  # the join secret's ARN in moto's Secrets Manager

    def gate(self, room_name: str = "shop") -> JoinGate:
        """The marketing link's proof of work on moto, reading the room's join secret."""
        secrets = boto3.client("secretsmanager", region_name="us-east-1")
        return JoinGate(
            room=room_name,
            read_secret=lambda: secrets.get_secret_value(SecretId=self.join_secret)["SecretString"],
            dynamodb=self.dynamodb,
            table=self.table,
        )

    def item(self, pk: str) -> dict[str, Any] | None:
        return self.dynamodb.get_item(
            TableName=self.table, Key={"pk": {"S": pk}}, ConsistentRead=True
        ).get("Item")

    def queue_bodies(self) -> list[str]:
        """Every visible message body (made visible again right after reading)."""
        bodies: list[str] = []
        while True:
            response = self.sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0
            )
            messages = response.get("Messages", [])
            new = [m for m in messages if m["Body"] not in bodies]
            if not new:
                return bodies
            bodies += [m["Body"] for m in new]

    def send(self, *bodies: str) -> None:
        for body in bodies:
            self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=body)


@pytest.fixture
def aws() -> Iterator[Aws]:
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        dynamodb.create_table(**table_definition(TABLE))
        sqs = boto3.client("sqs", region_name="us-east-1")
        dlq_url = sqs.create_queue(QueueName="beekeeper-shop-dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        queue_url = sqs.create_queue(
            QueueName="beekeeper-shop",
            Attributes={
                "VisibilityTimeout": str(QUEUE_VISIBILITY_TIMEOUT_SECONDS),
                "RedrivePolicy": (
                    f'{{"deadLetterTargetArn":"{dlq_arn}",'
                    f'"maxReceiveCount":"{QUEUE_MAX_RECEIVE_COUNT}"}}'
                ),
            },
        )["QueueUrl"]
        join_secret = boto3.client("secretsmanager", region_name="us-east-1").create_secret(
            Name="beekeeper-shop-join", SecretString=JOIN_SECRET_VALUE
        )["ARN"]
        yield Aws(
            dynamodb=dynamodb,
            sqs=sqs,
            queue_url=queue_url,
            dlq_url=dlq_url,
            join_secret=join_secret,
        )


class FakeClock:
    """A clock the test moves; sleep moves it too (and records how long was slept), and runs
    what the test scheduled for the time slept through (`at`): a visitor leaving mid-minute."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now
        self.slept: list[float] = []
        self._events: list[tuple[float, int, Callable[[], object]]] = []

    def __call__(self) -> float:
        return self.now

    def at(self, when: float, action: Callable[[], object]) -> None:
        self._events.append((when, len(self._events), action))
        self._events.sort(key=lambda event: event[:2])

    def run_due(self) -> None:
        while self._events and self._events[0][0] <= self.now:
            self._events.pop(0)[2]()

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        self.run_due()

    def pauses(self, seed: int = 1) -> Pauses:
        """The room's retries on this clock (they sleep here too), with seeded jitter."""
        return Pauses(sleep=self.sleep, random=random.Random(seed).random)


class LongPollsOnTheClock:
    """moto's SQS client, with long polls that take their time on the fake clock.

    moto waits WaitTimeSeconds in real time while the consumer's clock stands still, so a
    consumer long-polling an empty queue would loop forever in a test. Here a receive asks moto
    without waiting and, when nothing came, moves the fake clock by the wait, as SQS would.
    """

    def __init__(
        self, sqs: Any, clock: FakeClock, queue_url: str = "", joins: list[tuple[float, str]] = ()
    ) -> None:
        self._sqs = sqs
        self._clock = clock
        self._queue_url = queue_url
        # Visitors who join later: (clock time, token), sent when the clock reaches them.
        self._joins = sorted(joins)

    def _send_due(self) -> None:
        while self._joins and self._joins[0][0] <= self._clock.now:
            _, body = self._joins.pop(0)
            self._sqs.send_message(QueueUrl=self._queue_url, MessageBody=body)

    def receive_message(self, **request: Any) -> dict[str, Any]:
        wait = int(request.pop("WaitTimeSeconds", 0))
        self._send_due()
        response: dict[str, Any] = self._sqs.receive_message(**request, WaitTimeSeconds=0)
        if not response.get("Messages") and wait > 0:
            # Waits until the next visitor joins, or for the whole wait.
            until = self._clock.now + wait
            if self._joins and self._joins[0][0] < until:
                self._clock.now = self._joins[0][0]
                self._send_due()
                self._clock.run_due()
                return self._sqs.receive_message(**request, WaitTimeSeconds=0)  # type: ignore[no-any-return]
            self._clock.now = until
            self._clock.run_due()
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sqs, name)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def visitor_request(
    aws: Aws,
    clock: FakeClock,
    route: str,
    token: Token | None,
    settings: RoomSettings,
    *,
    origin: str = "https://shop.example.com/sale",
) -> HttpResponse:
    """A request to a capacity room's route (its method in the route table) through the
    route's real templates, with `?token=` and no cookie or body: as a shop's server calls
    /client and /leave, and as the presence script sends its heartbeats."""
    return run_integration(
        route,
        HttpRequest(
            method=registered(route).method,
            path=registered(route).path,
            query={"token": str(token)} if token else {},
            headers={},
        ),
        dynamodb=Boto3DynamoDb(aws.dynamodb),
        table_name=aws.table,
        origin=origin,
        request_time_ms=int(clock.now * 1000),
        mode=settings.mode,
        session_seconds=settings.session_seconds,
        presence=Presence.of(settings),
    )


def admit_with_places(
    aws: Aws, clock: FakeClock, settings: RoomSettings, *tokens: Token
) -> places.AdmitOutcome:
    """The consumer's admission of `tokens` into a capacity room, a place each, now."""
    return places.admit(
        aws.dynamodb,
        aws.table,
        list(tokens),
        now=clock.now,
        settings=settings,
        max_inside=settings.max_inside,
    )
