"""POST /leave, the producer's route (issue 27.3), on moto: a leave writes only for a token the
room issued; forged leaves, however many, write nothing and can not stall the warden."""

from __future__ import annotations

import base64
import json
import secrets
from typing import Any

import pytest
from botocore.stub import Stubber

from beekeeper.core.datamodel import (
    COOKIE_NAME,
    LEAVING_ATTRIBUTE,
    TOKEN_HEADER,
    Token,
    visitor_key,
)
from beekeeper.room import places
from beekeeper.room.producer import Producer
from tests.support.pipeline import Aws, FakeClock, issued_token, producer, room

CAPACITY = {"max_inside": 2, "session_minutes": 5, "claim_minutes": 2}
SHOP = "https://shop.example.com"


def leave(
    p: Producer,
    *,
    query: str | None = None,
    cookie: str | None = None,
    header: str | None = None,
    method: str = "POST",
) -> tuple[int, dict[str, Any], dict[str, str]]:
    headers = {"Content-Type": "text/plain;charset=UTF-8"}
    if cookie is not None:
        headers["Cookie"] = f"{COOKIE_NAME}={cookie}"
    if header is not None:
        headers[TOKEN_HEADER] = header
    event = {
        "resource": "/leave",
        "path": "/leave",
        "httpMethod": method,
        "headers": headers,
        "queryStringParameters": {"token": query} if query is not None else None,
        "body": "",
    }
    answered = p.handle(event)
    return answered["statusCode"], json.loads(answered["body"]), answered["headers"]


def room_producer(aws: Aws, clock: FakeClock) -> Producer:
    return producer(aws, clock, gate=aws.gate(), **CAPACITY)


def items(aws: Aws) -> list[dict[str, Any]]:
    return list(aws.dynamodb.scan(TableName=aws.table)["Items"])


def forged(ordinal: int = 7) -> Token:
    """A well-formed token the room never issued: random bytes where its mark would be."""
    raw = secrets.token_bytes(16)
    return Token(base64.urlsafe_b64encode(raw).rstrip(b"=").decode(), ordinal)


def test_a_real_waiting_visitor_leaves_once_by_cookie_header_or_query(
    aws: Aws, clock: FakeClock
) -> None:
    p = room_producer(aws, clock)
    for n, way in enumerate(("cookie", "header", "query"), start=1):
        token = str(issued_token(n))
        first = leave(p, **{way: token})
        assert first[:2] == (200, {"left": True}), way
        assert leave(p, **{way: token})[:2] == (200, {"left": False}), way
        item = aws.item(visitor_key(issued_token(n).id))
        assert item is not None and item["state"]["S"] == "left"
    # Every answer carries the shop's CORS headers and is never cached.
    _, _, headers = leave(p, query=str(issued_token(9)))
    assert headers["Access-Control-Allow-Origin"] == SHOP
    assert headers["Access-Control-Allow-Credentials"] == "true"
    assert headers["Cache-Control"] == "no-store"


def test_a_token_the_room_never_issued_is_answered_as_before_and_writes_nothing(
    aws: Aws, clock: FakeClock
) -> None:
    p = room_producer(aws, clock)
    real = issued_token(5)
    other_room = issued_token(5, key=b"another room's key, 32 bytes lo")
    retitled = Token(real.id, real.ordinal + 1)  # its ordinal edited: the mark no longer fits
    last = real.id[-1]
    # The same 16 bytes spelled with the last character's two spare bits set: not the room's id.
    alias = Token(real.id[:-1] + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"[(ord(last) % 4) + 1], 5)
    for token in (forged(), other_room, retitled, alias):
        assert leave(p, query=str(token))[:2] == (200, {"left": True}), token
        assert leave(p, cookie=str(token))[:2] == (200, {"left": True}), token
    assert items(aws) == []


@pytest.mark.parametrize("token", [None, "", "short.1", "A" * 22 + ".x", '"' + "A" * 22 + '.1"'])
def test_no_usable_token_leaves_nobody(aws: Aws, clock: FakeClock, token: str | None) -> None:
    p = room_producer(aws, clock)
    assert leave(p, query=token)[:2] == (200, {"left": False})
    assert leave(p, cookie=token or None)[:2] == (200, {"left": False})
    # ?token= is read by the token's exact pattern: a trailing newline is not a token.
    assert leave(p, query=f"{issued_token(1)}\n")[:2] == (200, {"left": False})
    assert items(aws) == []


def test_the_query_wins_over_the_cookie_as_on_client(aws: Aws, clock: FakeClock) -> None:
    p = room_producer(aws, clock)
    assert leave(p, query="junk", cookie=str(issued_token(1)))[:2] == (200, {"left": False})
    assert aws.item(visitor_key(issued_token(1).id)) is None


def test_a_throttled_table_is_a_503_to_send_again(aws: Aws, clock: FakeClock) -> None:
    p = room_producer(aws, clock)
    p.gate.keys()  # type: ignore[union-attr] # read before the table is stubbed
    stubber = Stubber(aws.dynamodb)
    stubber.add_client_error("update_item", "ThrottlingException", http_status_code=400)
    with stubber:
        status, body, headers = leave(p, query=str(issued_token(1)))
    assert (status, body, headers["Retry-After"]) == (503, {"left": False}, "5")


def test_only_a_post_leaves(aws: Aws, clock: FakeClock) -> None:
    status, body, headers = leave(room_producer(aws, clock), query="x", method="GET")
    assert (status, body, headers["Allow"]) == (405, {"left": False}, "POST")


def test_ten_thousand_forged_leaves_leave_the_table_empty_and_the_warden_free(
    aws: Aws, clock: FakeClock
) -> None:
    """The flood issue 27 measured (7,109 fake leaves stalled the line for 28.6 s): now they
    write nothing, and the real leaver's place is freed by the warden's next run."""
    p = room_producer(aws, clock)
    settings = room(**CAPACITY)
    holder = issued_token(1)
    assert places.admit(
        aws.dynamodb, aws.table, [holder], now=clock(), settings=settings, max_inside=2
    ).written
    leaving = p.leaving()
    for _ in range(10_000):
        assert leaving.leave(forged()).left
    assert leave(p, query=str(holder))[:2] == (200, {"left": True})
    stored = [item["pk"]["S"] for item in items(aws)]
    assert visitor_key(holder.id) in stored and len(stored) == 3  # holder, inside, a deadline
    report = places.Warden(aws.dynamodb, aws.table, clock, pauses=clock.pauses()).run()
    assert report.left == 1
    assert places.read_inside(aws.dynamodb, aws.table) == 0
    freed = aws.item(visitor_key(holder.id))
    assert freed is not None and LEAVING_ATTRIBUTE not in freed


ROOM_ORIGIN = "https://abc.execute-api.eu-west-1.amazonaws.com"


def browser_leave(
    aws: Aws, clock: FakeClock, token: Token, headers: dict[str, str], query: bool = False
) -> tuple[int, dict[str, Any]]:
    """A cookie's leave with the headers a browser (or a crafted request) sends."""
    p = producer(aws, clock, gate=aws.gate(), **CAPACITY)
    p.room_origin = ROOM_ORIGIN
    event = {
        "resource": "/leave",
        "httpMethod": "POST",
        "headers": {"Cookie": f"{COOKIE_NAME}={token}", **headers},
        "queryStringParameters": {"token": str(token)} if query else None,
    }
    answered = p.handle(event)
    return answered["statusCode"], json.loads(answered["body"])


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": SHOP, "Sec-Fetch-Site": "cross-site"},  # the shop's page
        {"Origin": ROOM_ORIGIN, "Sec-Fetch-Site": "same-origin"},
        {"origin": ROOM_ORIGIN.upper()},  # as compared by its browser form, any casing of name
        # The room's page sends no referrer: its beacon's Origin is "null", Sec-Fetch-Site
        # says it is the room's own.
        {"Origin": "null", "Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "same-origin"},
        # The room's page on the edge's cloudfront.net name, which the producer is not told:
        # the browser's same-origin says it is the room's own.
        {"Origin": "https://d111111abcdef8.cloudfront.net", "Sec-Fetch-Site": "same-origin"},
        {},  # neither: no browser sent it (every browser puts Origin on a POST)
    ],
)
def test_a_cookies_leave_from_the_rooms_page_or_the_shops_is_taken(
    aws: Aws, clock: FakeClock, headers: dict[str, str]
) -> None:
    token = issued_token(3)
    assert browser_leave(aws, clock, token, headers) == (200, {"left": True})
    assert aws.item(visitor_key(token.id)) is not None


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
        # A page of the same site on another host or port: Lax cookies ride along.
        {
            "Origin": "https://other.execute-api.eu-west-1.amazonaws.com",
            "Sec-Fetch-Site": "same-site",
        },
        {"Origin": "https://shop.example.com:8443", "Sec-Fetch-Site": "same-site"},
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},  # a sandboxed foreign frame
        {"Origin": "null"},  # a null origin without the browser's word for it
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_cookies_leave_from_a_foreign_page_is_403_and_writes_nothing(
    aws: Aws, clock: FakeClock, headers: dict[str, str]
) -> None:
    token = issued_token(4)
    status, body = browser_leave(aws, clock, token, headers)
    assert status == 403 and body["left"] is False
    assert "POST /leave?token=" in body["message"]
    assert items(aws) == []
    # A shop's server to server leave carries its token in the query: no page check, as before.
    assert browser_leave(aws, clock, token, headers, query=True) == (200, {"left": True})
