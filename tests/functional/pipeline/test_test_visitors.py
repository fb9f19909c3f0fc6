"""Test visitors (`beekeeper check`) through the room's own code on moto: a pass only the
operator writes gives place 0, which no counter, metric, slot or wait counts; the consumer
flags the item and signs the `test` claim; a refused pass gives no place at all."""

from __future__ import annotations

import time
from typing import Any

import boto3
import jwt

from beekeeper.cli.check.operator_side import OperatorSide
from beekeeper.cli.rooms import Deployment
from beekeeper.core import telemetry
from beekeeper.core import tickets as facts
from beekeeper.core.datamodel import (
    ADMITTED_COUNTER_KEY,
    TEST_ATTRIBUTE,
    TEST_ORDINAL,
    TEST_PASS_PARAMETER,
    TEST_PASS_SECONDS,
    TICKET_ATTRIBUTE,
    Token,
    arrival_shard_key,
    check_pass_key,
    minute_key,
    visitor_key,
)
from beekeeper.core.names import QUEUE_URL_OUTPUT, TABLE_NAME_OUTPUT
from beekeeper.core.telemetry import Metric
from beekeeper.room.places import Warden
from beekeeper.room.push import NO_PUBLISHER
from beekeeper.room.test_visitors import Pass, take_pass
from beekeeper.room.tickets import TicketIssuer, secret_reader
from tests.functional.pipeline.test_pipeline_tickets import consume_minute, keyed, verify
from tests.support.pipeline import Aws, FakeClock, admit_with_places, issued_token, producer, room

__all__ = ["keyed"]  # the fixture, found by name


class Recorded:
    """Our MetricSink, recording what the room counts."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def count(self, metric: Metric, value: int = 1) -> None:
        self.counts[metric.name] = self.counts.get(metric.name, 0) + value

    def level(self, metric: Metric, value: float) -> None:
        pass

    def sample(self, metric: Metric, value: float) -> None:
        self.counts[metric.name] = self.counts.get(metric.name, 0) + 1

    def flush_ended(self) -> None:
        pass

    def flush(self) -> None:
        pass


def operator(aws: Aws, clock: FakeClock) -> OperatorSide:
    return OperatorSide(
        settings=room(),
        deployment=Deployment({TABLE_NAME_OUTPUT: aws.table, QUEUE_URL_OUTPUT: aws.queue_url}),
        dynamodb=aws.dynamodb,
        sqs=aws.sqs,
        clock=clock,
        pauses=clock.pauses(),
        token_bytes=lambda n: b"p" * n,
        publisher=NO_PUBLISHER,
    )


def join(aws: Aws, clock: FakeClock, metrics: Recorded, pass_id: str | None) -> dict[str, Any]:
    query = {TEST_PASS_PARAMETER: pass_id} if pass_id is not None else None
    answer: dict[str, Any] = producer(aws, clock, metrics=metrics).handle(
        {
            "httpMethod": "GET",
            "path": "/beekeeper",
            "headers": {},
            "queryStringParameters": query,
            "requestContext": {"path": "/prod/beekeeper"},
        }
    )
    return answer


def cookie_token(answer: dict[str, Any]) -> Token:
    token = Token.parse(answer["headers"]["Set-Cookie"].split(";")[0].partition("=")[2])
    assert token is not None
    return token


def test_a_pass_gives_place_0_which_no_counter_or_metric_counts(aws: Aws, clock: FakeClock) -> None:
    pass_id = operator(aws, clock).issue_pass(visitors=1)
    metrics = Recorded()
    answer = join(aws, clock, metrics, pass_id)
    assert answer["statusCode"] == 302
    assert answer["headers"]["Location"] == f"room#turn={TEST_ORDINAL}"
    token = cookie_token(answer)
    assert token.is_test
    assert aws.queue_bodies() == [str(token)]  # in the line like anyone
    assert metrics.counts.get(telemetry.ARRIVALS.name) is None
    assert all(aws.item(arrival_shard_key(k)) is None for k in range(8))
    # A real visitor after it still holds place 1.
    real = cookie_token(join(aws, clock, metrics, None))
    assert (real.ordinal, real.is_test) == (1, False)
    assert metrics.counts[telemetry.ARRIVALS.name] == 1


def test_a_used_up_expired_unknown_or_malformed_pass_gives_no_place(
    aws: Aws, clock: FakeClock
) -> None:
    side = operator(aws, clock)
    pass_id = side.issue_pass(visitors=1)
    metrics = Recorded()
    assert cookie_token(join(aws, clock, metrics, pass_id)).is_test
    for refused in (pass_id, "A" * 22, "not a pass", ""):
        answer = join(aws, clock, metrics, refused)
        assert answer["statusCode"] == 403, refused
        assert "Set-Cookie" not in answer["headers"]
        assert "test pass" in answer["body"]
    clock.now += TEST_PASS_SECONDS
    side.dynamodb.delete_item(TableName=aws.table, Key={"pk": {"S": check_pass_key(pass_id)}})
    late = side.issue_pass(visitors=1)
    clock.now += TEST_PASS_SECONDS
    assert take_pass(aws.dynamodb, aws.table, late, now=clock()) is Pass.REFUSED
    assert len(aws.queue_bodies()) == 1  # the one test visitor, nobody else


def test_a_test_visitor_is_admitted_flagged_and_signed_as_one_and_counted_nowhere(
    keyed: tuple[Aws, str],
) -> None:
    aws, secret = keyed
    clock = FakeClock(time.time())
    test, real = issued_token(TEST_ORDINAL), issued_token(1)
    assert test.is_test and not real.is_test
    aws.send(str(test), str(real))
    secrets = boto3.client("secretsmanager", region_name="us-east-1")
    issuer = TicketIssuer(read_ring=secret_reader(secrets, secret), settings=room(), clock=clock)
    report = consume_minute(aws, clock, issuer)
    assert (report.admitted, report.tests, len(report.waits)) == (1, 1, 1)
    counter = aws.item(ADMITTED_COUNTER_KEY)
    assert counter is not None and counter["n"] == {"N": "1"}
    minutes = [
        aws.item(minute_key(m)) for m in range(int(clock() // 60) - 2, int(clock() // 60) + 1)
    ]
    assert sum(int(item["admitted"]["N"]) for item in minutes if item) == 1
    tested, admitted = aws.item(visitor_key(test.id)), aws.item(visitor_key(real.id))
    assert tested is not None and admitted is not None
    assert tested[TEST_ATTRIBUTE] == {"BOOL": True} and TEST_ATTRIBUTE not in admitted
    test_claims = verify(aws, tested[TICKET_ATTRIBUTE]["S"], at=clock())
    real_claims = verify(aws, admitted[TICKET_ATTRIBUTE]["S"], at=clock())
    assert test_claims[facts.TEST_CLAIM] is True and facts.TEST_CLAIM not in real_claims
    assert jwt.get_unverified_header(tested[TICKET_ATTRIBUTE]["S"])["alg"] == "ES256"


def test_a_test_visitor_s_place_is_freed_and_counted_nowhere(aws: Aws, clock: FakeClock) -> None:
    settings = room(max_inside=2, session_minutes=1, claim_minutes=1)
    test, real = issued_token(TEST_ORDINAL), issued_token(1)
    assert admit_with_places(aws, clock, settings, test, real).written == [test.id, real.id]
    tested = aws.item(visitor_key(test.id))
    assert tested is not None and tested[TEST_ATTRIBUTE] == {"BOOL": True}
    for token in (test, real):  # both left, as /leave marks a leaver
        aws.dynamodb.update_item(
            TableName=aws.table,
            Key={"pk": {"S": visitor_key(token.id)}},
            UpdateExpression="SET #state = :left, leaving = :one, left_at = :now",
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues={
                ":left": {"S": "left"},
                ":one": {"S": "1"},
                ":now": {"N": str(int(clock()))},
            },
        )
    report = Warden(aws.dynamodb, aws.table, clock, pauses=clock.pauses()).run()
    assert report.left == 1  # the real visitor's leave; the test visitor's counts nowhere
    inside = aws.item("inside")
    assert inside is not None and inside["n"] == {"N": "0"}  # both places freed
