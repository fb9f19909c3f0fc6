"""/polling and /client end to end: request template, moto's DynamoDB, response template;
and /client's one-time redeem, raced."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from beekeeper.apigateway.room import Boto3DynamoDb, HttpRequest, HttpResponse, run_integration
from beekeeper.core.datamodel import (
    CLIENT_REDEEM_PARAMETER,
    CLIENT_REDEEM_VALUE,
    COOKIE_NAME,
    status_key,
    visitor_key,
)
from beekeeper.core.headers import browser_origin
from beekeeper.core.routes import RATE, templated, visitor_routes
from beekeeper.local.store_transport import StoreTransport
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from beekeeper.store.wire import JsonProtocol
from beekeeper.vtl import (
    BAD_REQUEST_STATUS,
    MALFORMED_REDEEM_ANSWER,
    REDEEM_WITHOUT_TOKEN_ANSWER,
)
from beekeeper.vtl.methods import response_headers
from tests.support.dynamodb_local import dynamodb_local

# The session fixture, for the races DynamoDB Local decides.
__all__ = ["dynamodb_local"]

TABLE = "beekeeper-functional"
ORIGIN = "https://Shop.Example:443/sale?ref=queue"
TOKEN_ID = "Qw3_-" + "k" * 17
ROUTES = templated(RATE)
VISITOR_ROUTES = visitor_routes(RATE)
NOW_S = 1_763_780_000
NOW_MS = NOW_S * 1000 + 250


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield client


def admit(client: Any, token_id: str, *, expires_at: int, ordinal: int = 7) -> None:
    client.put_item(
        TableName=TABLE,
        Item={
            "pk": {"S": visitor_key(token_id)},
            "admitted_at": {"N": str(expires_at - 3600)},
            "expires_at": {"N": str(expires_at)},
            "ordinal": {"N": str(ordinal)},
            "ttl": {"N": str(expires_at + 86400)},
        },
    )


def publish_status(client: Any, *, admitted_total: int, rate: int, enabled: bool = True) -> None:
    for copy in range(10):
        client.put_item(
            TableName=TABLE,
            Item={
                "pk": {"S": status_key(copy)},
                "admitted_total": {"N": str(admitted_total)},
                "arrivals_total": {"N": str(admitted_total + 10_000)},
                "rate": {"N": str(rate)},
                "operator_rate": {"N": str(rate)},
                "enabled": {"BOOL": enabled},
                "slowed": {"BOOL": False},
                "updated_at": {"N": str(NOW_S - 2)},
            },
        )


def call(
    client: Any,
    route: str,
    *,
    headers: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    now_ms: int = NOW_MS,
    table: str = TABLE,
    method: str = "GET",
) -> HttpResponse:
    request = HttpRequest(method, ROUTES[route].path, query or {}, headers or {})
    return run_integration(
        route,
        request,
        dynamodb=Boto3DynamoDb(client),
        table_name=table,
        origin=ORIGIN,
        request_time_ms=now_ms,
    )


def answer(response: HttpResponse) -> dict[str, Any]:
    assert response.status == 200
    return json.loads(response.body)


def cookie(token: str, extra: str = "theme=dark; ") -> dict[str, str]:
    return {"Cookie": f"{extra}{COOKIE_NAME}={token}"}


@pytest.mark.parametrize(
    ("expires_at", "now_ms", "allowed"),
    [
        (NOW_S + 1, NOW_S * 1000, True),  # one second left
        (NOW_S, NOW_S * 1000, False),  # expires_at == request time: expired
        (NOW_S, NOW_S * 1000 - 1, True),  # a millisecond before
        (NOW_S - 1, NOW_S * 1000, False),  # a second after
    ],
)
def test_admitted_visitor_until_expiry(
    dynamodb: Any, expires_at: int, now_ms: int, allowed: bool
) -> None:
    token_id = f"exp{expires_at - NOW_S + 5}".ljust(22, "A")
    admit(dynamodb, token_id, expires_at=expires_at)
    token = f"{token_id}.7"
    polling = answer(call(dynamodb, "polling", headers=cookie(token), now_ms=now_ms))
    if allowed:
        assert polling == {
            "allow": True,
            "origin": f"{ORIGIN}&beekeeper_token={token}",
        }
    else:
        assert polling == {"allow": False, "state": "expired"}
    assert answer(call(dynamodb, "client", headers=cookie(token), now_ms=now_ms)) == {
        "allow": allowed
    }
    assert answer(call(dynamodb, "client", query={"token": token}, now_ms=now_ms)) == {
        "allow": allowed
    }


def test_waiting_visitor_reads_its_status_copy(dynamodb: Any) -> None:
    publish_status(dynamodb, admitted_total=1000, rate=600)
    body = answer(call(dynamodb, "polling", headers=cookie("W" * 22 + ".1600")))
    assert body == {
        "allow": False,
        "state": "waiting",
        "position": 600,
        "turn": 1600,
        "eta_seconds": 60,
        "poll_after": 29,  # half of the earliest admission, 599 ahead at 10 a second
        "rate": 600,
        "slowed": False,
        "updated_at": NOW_S - 2,
    }
    assert answer(call(dynamodb, "client", headers=cookie("W" * 22 + ".1600"))) == {"allow": False}


def test_room_off_and_unknown_token(dynamodb: Any) -> None:
    publish_status(dynamodb, admitted_total=50_000, rate=60, enabled=False)
    off = answer(call(dynamodb, "polling", headers=cookie("R" * 22 + ".60000")))
    assert off["state"] == "room_off"
    publish_status(dynamodb, admitted_total=50_000, rate=60)
    unknown = answer(call(dynamodb, "polling", headers=cookie("U" * 22 + ".5")))
    assert unknown == {"allow": False, "state": "unknown"}


@pytest.mark.parametrize(
    ("headers", "state"),
    [
        ({}, "no_token"),
        ({"Cookie": "theme=dark"}, "no_token"),
        ({"Cookie": f"{COOKIE_NAME}=not-a-token"}, "malformed"),
        ({"Cookie": f'{COOKIE_NAME}=x"}}, "Keys": [{{"pk": {{"S": "config"}}}}]'}, "malformed"),
        ({"COOKIE": f"{COOKIE_NAME}=" + "\\" * 5000}, "malformed"),
    ],
)
def test_no_usable_token_is_a_200_with_the_reason(
    dynamodb: Any, headers: dict[str, str], state: str
) -> None:
    assert answer(call(dynamodb, "polling", headers=headers)) == {"allow": False, "state": state}
    assert answer(call(dynamodb, "client", headers=headers)) == {"allow": False}


def test_headers_of_each_route() -> None:
    assert browser_origin(ORIGIN) == "https://shop.example"
    assert browser_origin("http://127.0.0.1:8080/x") == "http://127.0.0.1:8080"
    assert browser_origin("https://bücher.example:8443") == "https://xn--bcher-kva.example:8443"
    assert response_headers(ROUTES["polling"], ORIGIN) == {
        "Content-Type": "application/json",
        "Cache-Control": "no-store",
    }
    assert response_headers(ROUTES["client"], ORIGIN) == {
        "Content-Type": "application/json",
        "Cache-Control": "no-store",
        "Access-Control-Allow-Origin": "https://shop.example",
        "Access-Control-Allow-Credentials": "true",
        "Vary": "Origin",
    }


def test_answers_carry_the_route_headers(dynamodb: Any) -> None:
    for route in ROUTES:
        response = call(dynamodb, route)
        assert dict(response.headers) == response_headers(ROUTES[route], ORIGIN)


def test_dynamodb_failure_is_the_static_unavailable_answer(dynamodb: Any) -> None:
    for route in ROUTES:
        response = call(dynamodb, route, headers=cookie("M" * 22 + ".3"), table="no-such-table")
        assert response.status == 503
        assert json.loads(response.body) == json.loads(ROUTES[route].vtl.error_body or "")
        assert response.headers["Content-Type"] == "application/json"
        if ROUTES[route].vtl.refusal_template:
            # DynamoDB's 400 (here: no such table) reaches the refusal template, which says
            # 503 for anything but a failed condition, with the route's headers.
            assert dict(response.headers) == response_headers(ROUTES[route], ORIGIN)
        else:
            assert response.headers["Retry-After"] == "5"


def test_malformed_rendered_json_is_what_dynamodb_answers(dynamodb: Any) -> None:
    target = Boto3DynamoDb(dynamodb)
    assert target("GetItem", '{"TableName": ')[0] == 400
    assert target("GetItem", "[]")[0] == 400
    assert target("GetItem", '{"TableName": "x", "Bogus": 1}')[0] == 400


def test_other_methods_and_media_types_are_refused_with_4xx(dynamodb: Any) -> None:
    assert call(dynamodb, "polling", method="POST").status == 403
    headers = {"Content-Type": "text/plain", **cookie("M" * 22 + ".3")}
    assert call(dynamodb, "client", headers=headers).status == 415
    json_type = {"Content-Type": "application/json; charset=utf-8"}
    assert call(dynamodb, "client", headers=json_type).status == 200


def test_a_redeem_admits_once_and_leaves_checks_as_they_were(dynamodb: Any) -> None:
    token_id = "Rd" + "e" * 20
    admit(dynamodb, token_id, expires_at=NOW_S + 600)
    token = f"{token_id}.7"
    redeem = {"token": token, CLIENT_REDEEM_PARAMETER: CLIENT_REDEEM_VALUE}
    assert answer(call(dynamodb, "client", query={"token": token})) == {"allow": True}
    assert answer(call(dynamodb, "client", query=redeem)) == {"allow": True}
    assert answer(call(dynamodb, "client", query=redeem)) == {"allow": False, "state": "redeemed"}
    assert answer(call(dynamodb, "client", headers=cookie(token))) == {"allow": True}
    bad = call(dynamodb, "client", query={"token": token, CLIENT_REDEEM_PARAMETER: "true"})
    assert (bad.status, json.loads(bad.body)) == (BAD_REQUEST_STATUS, MALFORMED_REDEEM_ANSWER)
    assert dict(bad.headers) == response_headers(ROUTES["client"], ORIGIN)
    gone = {"token": "Un" + "k" * 20 + ".1", CLIENT_REDEEM_PARAMETER: CLIENT_REDEEM_VALUE}
    assert answer(call(dynamodb, "client", query=gone)) == {"allow": False}


def test_a_redeem_with_the_cookie_alone_writes_nothing_and_says_to_send_the_token(
    dynamodb: Any,
) -> None:
    """What a foreign page's navigation or a same-site <img> sends: refused before DynamoDB
    sees the visitor's key, so the shop's own redeem afterwards is the first."""
    token_id = "Ck" + "o" * 20
    admit(dynamodb, token_id, expires_at=NOW_S + 600)
    token = f"{token_id}.7"
    before = dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": visitor_key(token_id)}})["Item"]
    redeem = {CLIENT_REDEEM_PARAMETER: CLIENT_REDEEM_VALUE}
    refused = call(dynamodb, "client", headers=cookie(token), query=redeem)
    assert (refused.status, json.loads(refused.body)) == (
        BAD_REQUEST_STATUS,
        REDEEM_WITHOUT_TOKEN_ANSWER,
    )
    assert dict(refused.headers) == response_headers(ROUTES["client"], ORIGIN)
    after = dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": visitor_key(token_id)}})["Item"]
    assert after == before
    shop = {"token": token, **redeem}
    assert answer(call(dynamodb, "client", headers=cookie(token), query=shop)) == {"allow": True}


@pytest.fixture(params=["the store", "DynamoDB Local"])
def racing_dynamodb(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A DynamoDB that applies writes to one item one at a time, as DynamoDB does: the race is
    DynamoDB's to decide. moto does not (its writes are not serialised between threads), so a
    race run on moto tests moto; local mode's store and AWS's own DynamoDB Local decide it."""
    definition = {
        "TableName": TABLE,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if request.param == "the store":
        database = DynamoDb(RealTime())
        database.create_table_as_defined(definition)
        transport = StoreTransport(JsonProtocol(database, Sqs(RealTime())), "http://127.0.0.1:9/r")
        yield transport.client("dynamodb")
        return
    client = request.getfixturevalue("dynamodb_local").client()
    client.create_table(**definition)
    try:
        yield client
    finally:
        client.delete_table(TableName=TABLE)


@pytest.mark.parametrize("racers", [2, 8, 20])
def test_concurrent_redeems_admit_exactly_one(racing_dynamodb: Any, racers: int) -> None:
    token_id = f"Race{racers}".ljust(22, "r")
    admit(racing_dynamodb, token_id, expires_at=NOW_S + 600)
    query = {"token": f"{token_id}.7", CLIENT_REDEEM_PARAMETER: CLIENT_REDEEM_VALUE}
    start = threading.Barrier(racers)

    def redeem(_: int) -> dict[str, Any]:
        start.wait()
        return answer(call(racing_dynamodb, "client", query=query))

    with ThreadPoolExecutor(racers) as pool:
        answers = list(pool.map(redeem, range(racers)))
    assert answers.count({"allow": True}) == 1
    assert answers.count({"allow": False, "state": "redeemed"}) == racers - 1


ADMITTED_ID = "Ad" + "m" * 20
EXPIRED_ID = "Ex" + "p" * 20
TOKENS = st.one_of(
    st.sampled_from([f"{ADMITTED_ID}.1", f"{EXPIRED_ID}.22", f"{'N' * 22}.3"]),
    st.text(max_size=40),
)
COOKIE_HEADERS = st.one_of(
    st.text(),
    st.builds(
        lambda before, token, after: f"{before}{COOKIE_NAME}={token}{after}",
        st.sampled_from(["", "a=1; ", "a=1;", f"{COOKIE_NAME}=bad; "]),
        TOKENS,
        st.sampled_from(["", "; b=2", ";", f"; {COOKIE_NAME}=x"]),
    ),
)


@pytest.fixture(scope="module")
def seeded(dynamodb: Any) -> Any:
    """The shared table with one admitted and one expired visitor, seeded once."""
    admit(dynamodb, ADMITTED_ID, expires_at=NOW_S + 600)
    admit(dynamodb, EXPIRED_ID, expires_at=NOW_S - 600)
    return dynamodb


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cookie_header=COOKIE_HEADERS, header_name=st.sampled_from(["Cookie", "cookie"]))
def test_any_cookie_header_gets_200_json_and_allow_only_when_admitted(
    seeded: Any, cookie_header: str, header_name: str
) -> None:
    headers = {header_name: cookie_header}
    admitted = f"{COOKIE_NAME}={ADMITTED_ID}.1" in cookie_header
    for route in VISITOR_ROUTES:
        body = answer(call(seeded, route, headers=headers))
        assert isinstance(body["allow"], bool)
        if body["allow"]:
            assert admitted
