"""The JSON join (issue 28.4), against moto: an app that asks the marketing link for
`application/json` gets the link's decisions as JSON, the challenge first, its ticket in the
answer and never in a URL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.stub import Stubber

from beekeeper.core.datamodel import (
    COOKIE_NAME,
    TICKET_ATTRIBUTE,
    TOKEN_HEADER,
    Token,
    visitor_key,
)
from beekeeper.core.join_work import Challenge, solve
from beekeeper.core.polling import POLL_AFTER_MIN_SECONDS
from beekeeper.room.producer import Producer
from beekeeper.room.room_state import write_config
from tests.support.pipeline import Aws, FakeClock, producer, room

JSON = "application/json"
TICKET = "eyJhbGciOiJFUzI1NiJ9.eyJqdGkiOiJ4In0.c2lnbmF0dXJl"


def app(accept: str = JSON, work: str | None = None, token: str | None = None) -> dict[str, Any]:
    headers = {"Accept": accept}
    if token:
        headers[TOKEN_HEADER] = token
    return {
        "httpMethod": "GET",
        "path": "/beekeeper",
        "headers": headers,
        "queryStringParameters": {"work": work} if work else None,
        "requestContext": {"path": "/prod/beekeeper"},
    }


def body(response: dict[str, Any]) -> dict[str, Any]:
    assert response["headers"]["Content-Type"] == JSON
    assert response["headers"]["Cache-Control"] == "no-store"
    answer: dict[str, Any] = json.loads(response["body"])
    return answer


def working(aws: Aws, clock: FakeClock, **settings: Any) -> Producer:
    return producer(aws, clock, gate=aws.gate(), join_work=10, **settings)


def test_an_app_gets_the_challenge_then_its_place_as_json(aws: Aws, clock: FakeClock) -> None:
    p = working(aws, clock)
    first = p.handle(app())
    assert first["statusCode"] == 200 and "Set-Cookie" not in first["headers"]
    challenge = body(first)
    assert challenge["state"] == "work" and challenge["parameter"] == "work"
    issued = Challenge.parse(challenge["challenge"])
    assert issued is not None
    assert (challenge["subpuzzles"], challenge["target"]) == (issued.count, issued.target)
    assert challenge["expires_at"] == issued.expires_at

    joined = p.handle(app(work=str(solve(issued))))
    assert joined["statusCode"] == 200
    place = body(joined)
    token = Token.parse(place["token"])
    assert token is not None and aws.queue_bodies() == [place["token"]]
    assert place == {
        "state": "waiting",
        "token": place["token"],
        "token_header": TOKEN_HEADER,
        "poll": "polling",
        "poll_after": POLL_AFTER_MIN_SECONDS,
        "position": 1,
    }
    # The cookie too, for a client that keeps cookies.
    assert joined["headers"]["Set-Cookie"].startswith(f"{COOKIE_NAME}={place['token']};")


def test_a_refused_solution_says_why_with_a_fresh_challenge(aws: Aws, clock: FakeClock) -> None:
    p = working(aws, clock)
    solution = str(solve(Challenge.parse(body(p.handle(app()))["challenge"])))  # type: ignore[arg-type]
    assert p.handle(app(work=solution))["statusCode"] == 200
    replay = p.handle(app(work=solution))
    assert replay["statusCode"] == 400
    answer = body(replay)
    assert (answer["state"], answer["refused"]) == ("work", "used")
    assert "solve the one in this answer" in answer["message"]
    assert Challenge.parse(answer["challenge"]) is not None
    nonsense = body(p.handle(app(work="<script>")))
    assert (nonsense["refused"], nonsense["state"]) == ("malformed", "work")
    assert len(aws.queue_bodies()) == 1


def test_without_work_an_app_joins_at_once(aws: Aws, clock: FakeClock) -> None:
    place = body(producer(aws, clock, join_work=0).handle(app()))
    assert place["state"] == "waiting" and Token.parse(place["token"]) is not None


def test_an_app_asking_again_with_its_header_keeps_its_place_then_gets_its_ticket(
    aws: Aws, clock: FakeClock
) -> None:
    p = producer(aws, clock, join_work=0)
    token = body(p.handle(app()))["token"]
    again = body(p.handle(app(token=token)))
    assert (again["state"], again["token"]) == ("waiting", token)
    assert aws.queue_bodies() == [token]
    parsed = Token.parse(token)
    assert parsed is not None
    aws.dynamodb.put_item(
        TableName=aws.table,
        Item={
            "pk": {"S": visitor_key(parsed.id)},
            "expires_at": {"N": str(int(clock() + 60))},
            "ordinal": {"N": str(parsed.ordinal)},
            TICKET_ATTRIBUTE: {"S": TICKET},
        },
    )
    admitted = p.handle(app(token=token))
    assert body(admitted) == {
        "state": "admitted",
        "token": token,
        "origin": room().origin,
        "ticket": TICKET,
    }
    assert "Location" not in admitted["headers"]


def test_room_off_closed_and_a_busy_room_as_json(aws: Aws, clock: FakeClock) -> None:
    # Off: a place all the same, let in with a ticket moments later (docs/apps.md).
    write_config(aws.dynamodb, aws.table, room(), now=clock(), enabled=False)
    assert body(producer(aws, clock).handle(app()))["state"] == "waiting"
    write_config(
        aws.dynamodb, aws.table, room(), now=clock(), enabled=True, closed=True, message="Sold out"
    )
    assert body(producer(aws, clock).handle(app())) == {"state": "closed", "message": "Sold out"}
    write_config(aws.dynamodb, aws.table, room(), now=clock(), closed=False)
    stubber = Stubber(aws.sqs)
    stubber.add_client_error("send_message", "ServiceUnavailable", http_status_code=503)
    with stubber:
        busy = producer(aws, clock).handle(app())
    assert busy["statusCode"] == 503 and busy["headers"]["Retry-After"] == "30"
    assert body(busy) == {"state": "unavailable", "retry_after": 30}


@pytest.mark.parametrize(
    ("accept", "as_json"),
    [
        (JSON, True),
        ("Application/JSON; charset=utf-8", True),
        ("text/html, application/json;q=0.9", True),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", False),
        ("*/*", False),
        ("application/jsonp", False),
    ],
)
def test_json_only_for_a_client_that_lists_application_json(
    aws: Aws, clock: FakeClock, accept: str, as_json: bool
) -> None:
    response = producer(aws, clock, join_work=0).handle(app(accept=accept))
    if as_json:
        assert response["statusCode"] == 200 and body(response)["state"] == "waiting"
    else:
        assert response["statusCode"] == 302 and response["headers"]["Location"].startswith(
            "room#turn="
        )


def test_another_method_is_a_json_405_for_an_app(aws: Aws, clock: FakeClock) -> None:
    response = producer(aws, clock).handle({**app(), "httpMethod": "POST"})
    assert response["statusCode"] == 405 and response["headers"]["Allow"] == "GET"
    assert "GET" in body(response)["error"]
