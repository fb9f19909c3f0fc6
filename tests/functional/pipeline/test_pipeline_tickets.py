"""Tickets through the real pipeline on moto: the consumer signs each admission from the room's
secret, the item keeps the ticket, /polling and a returning visitor's redirect carry it."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import jwt
import pytest

from beekeeper.apigateway.room import Boto3DynamoDb, HttpRequest, run_integration
from beekeeper.core import tickets as facts
from beekeeper.core.datamodel import TICKET_ATTRIBUTE, Token, visitor_key
from beekeeper.core.headers import browser_origin
from beekeeper.core.routes import JWKS
from beekeeper.room.consumer import ConsumerReport, run_consumer
from beekeeper.room.pacing import minute_span
from beekeeper.room.ticket_keys import TicketKeyStore
from beekeeper.room.tickets import TicketIssuer, secret_reader
from tests.support.pipeline import Aws, FakeClock, LongPollsOnTheClock, producer, room

ISSUER = "https://abc123.execute-api.us-east-1.amazonaws.com/shop"


@pytest.fixture
def keyed(aws: Aws) -> tuple[Aws, str]:
    """The room's secret, empty as the stack makes it, then its first key (as a deploy does)."""
    secrets = boto3.client("secretsmanager", region_name="us-east-1")
    arn = secrets.create_secret(Name="shop-ticket-keys", SecretString='{"keys": []}')["ARN"]
    TicketKeyStore(
        secretsmanager=secrets,
        secret_id=arn,
        dynamodb=aws.dynamodb,
        table=aws.table,
        clock=time.time,
    ).ensure_first_key(issuer=ISSUER)
    return aws, arn


def jwks(aws: Aws) -> dict[str, Any]:
    answer = run_integration(
        JWKS.name,
        HttpRequest("GET", "/jwks.json", {}, {}),
        dynamodb=Boto3DynamoDb(aws.dynamodb),
        table_name=aws.table,
        origin=room().origin,
        request_time_ms=int(time.time() * 1000),
    )
    keys: dict[str, Any] = json.loads(answer.body)
    return keys


def verify(aws: Aws, ticket: str, *, at: float) -> dict[str, Any]:
    """The ticket's claims, verified as a shop would at the moment `at` (the simulated clock's)."""
    kid = jwt.get_unverified_header(ticket)["kid"]
    (key,) = (k for k in jwks(aws)["keys"] if k["kid"] == kid)
    claims: dict[str, Any] = jwt.decode(
        ticket,
        jwt.PyJWK(key),
        algorithms=["ES256"],
        audience=browser_origin(room().origin),
        issuer=ISSUER,
        options={"require": list(facts.CLAIMS)},
        # PyJWT reads the real clock; the consumer signed on the simulated one, which its
        # paced minute may have run a little ahead of it.
        leeway=max(0.0, at - time.time()),
    )
    return claims


def consume_minute(aws: Aws, clock: FakeClock, tickets: TicketIssuer) -> ConsumerReport:
    """One consumer running a whole minute at 60/min, with `tickets`: the current minute, or
    the next one once too little of the current one's span is left to admit in (the clock
    starts at the real time, anywhere in its minute; past the span's end the consumer would
    admit nobody)."""
    minute = int(clock() // 60)
    if minute_span(minute, 60)[1] - clock() < 10:
        minute += 1
    start, deadline = minute_span(minute, 60)
    clock.now = max(clock.now, start)
    assignment = {"minute": int(clock() // 60), "index": 0, "consumers": 1, "rate": 60}
    return run_consumer(
        {**assignment, "start": start, "deadline": deadline},
        settings=room(),
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=LongPollsOnTheClock(aws.sqs, clock, aws.queue_url),
        clock=clock,
        sleep=clock.sleep,
        pauses=clock.pauses(),
        tickets=tickets,
    )


def test_the_consumer_signs_each_admission_and_the_redirects_carry_the_ticket(
    keyed: tuple[Aws, str],
) -> None:
    aws, secret = keyed
    clock = FakeClock(time.time())  # tickets are checked against the real clock by PyJWT
    visitors = [Token(f"{i:022d}", i) for i in range(1, 4)]
    aws.send(*(str(t) for t in visitors))
    secrets = boto3.client("secretsmanager", region_name="us-east-1")
    reads = {"n": 0}
    read_secret = secret_reader(secrets, secret)

    def counted_read() -> str:
        reads["n"] += 1
        return read_secret()

    report = consume_minute(
        aws, clock, TicketIssuer(read_ring=counted_read, settings=room(), clock=clock)
    )
    assert report.admitted == 3
    assert reads["n"] <= 2  # once a minute per container, not once per admission
    subjects = set()
    for token in visitors:
        item = aws.item(visitor_key(token.id))
        assert item is not None
        claims = verify(aws, item[TICKET_ATTRIBUTE]["S"], at=clock())
        assert (claims["iat"], claims["exp"]) == (
            int(item["admitted_at"]["N"]),
            int(item["expires_at"]["N"]),
        )
        assert claims["room"] == "shop" and token.id not in json.dumps(claims)
        subjects.add(claims["sub"])

        polled = run_integration(
            "polling",
            HttpRequest("GET", "/polling", {}, {"Cookie": f"beekeeper_token={token}"}),
            dynamodb=Boto3DynamoDb(aws.dynamodb),
            table_name=aws.table,
            origin=room().origin,
            request_time_ms=int(clock() * 1000),
        )
        answer = json.loads(polled.body)
        assert answer["allow"] is True
        query = parse_qs(urlsplit(answer["origin"]).query)
        assert query["beekeeper_token"] == [str(token)]
        assert query["beekeeper_ticket"] == [item[TICKET_ATTRIBUTE]["S"]]
        assert answer["origin"].startswith("https://shop.example.com/sale?beekeeper_token=")
    assert len(subjects) == 3

    # A returning admitted visitor is sent to the shop with the same ticket.
    back = producer(aws, clock).handle(
        {
            "httpMethod": "GET",
            "path": "/beekeeper",
            "headers": {"Cookie": f"beekeeper_token={visitors[0]}"},
            "requestContext": {"path": "/prod/beekeeper"},
        }
    )
    location = back["headers"]["Location"]
    stored = aws.item(visitor_key(visitors[0].id))
    assert stored is not None
    assert parse_qs(urlsplit(location).query)["beekeeper_ticket"] == [stored[TICKET_ATTRIBUTE]["S"]]


def test_a_stored_value_that_is_not_a_ticket_never_reaches_a_redirect(aws: Aws) -> None:
    token = Token("Q" * 22, 5)
    aws.dynamodb.put_item(
        TableName=aws.table,
        Item={
            "pk": {"S": visitor_key(token.id)},
            "expires_at": {"N": str(int(time.time()) + 60)},
            "ordinal": {"N": "5"},
            TICKET_ATTRIBUTE: {"S": 'x"}, "allow": true, "y": "'},
        },
    )
    polled = run_integration(
        "polling",
        HttpRequest("GET", "/polling", {}, {"Cookie": f"beekeeper_token={token}"}),
        dynamodb=Boto3DynamoDb(aws.dynamodb),
        table_name=aws.table,
        origin=room().origin,
        request_time_ms=int(time.time() * 1000),
    )
    answer = json.loads(polled.body)
    assert answer == {
        "allow": True,
        "origin": f"https://shop.example.com/sale?beekeeper_token={token}",
    }


def test_a_room_without_keys_admits_without_tickets(aws: Aws) -> None:
    clock = FakeClock()
    aws.send(str(Token("Z" * 22, 1)))
    issuer = TicketIssuer(read_ring=lambda: '{"keys": []}', settings=room(), clock=clock)
    report = consume_minute(aws, clock, issuer)
    assert report.admitted == 1  # nobody waits for a key
    item = aws.item(visitor_key("Z" * 22))
    assert item is not None and TICKET_ATTRIBUTE not in item
