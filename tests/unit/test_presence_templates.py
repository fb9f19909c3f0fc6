"""The heartbeat's templates (/presence), rendered with the local renderer: its request is
core/sessions.py's session request holding the place for core/presence.py's hold, whatever
comes in, and its answers are core/presence.py's."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beekeeper.apigateway.velocity.renderer import RenderInput, render, render_response
from beekeeper.core import sessions
from beekeeper.core.datamodel import CLIENT_REDEEM_PARAMETER, CLIENT_REDEEM_VALUE, COOKIE_NAME
from beekeeper.core.presence import Presence
from beekeeper.core.routes import CAPACITY
from beekeeper.core.routes import route as registered
from beekeeper.vtl import (
    ERROR_STATUS,
    NO_VISITOR_KEY,
    REFUSED_STATUS,
    load_template,
    template_values,
)
from tests.support.hostile_requests import HEADERS, QUERIES

TABLE = "beekeeper-test"
ORIGIN = "https://shop.example/sale"
SESSION_SECONDS = 900
GRACE = 45
TOKEN_ID = "Pr3_-" + "s" * 17
TOKEN = f"{TOKEN_ID}.77"
NOW_MS = 1_763_780_000_999
NOW_S = NOW_MS // 1000
PRESENCE = Presence(grace_seconds=GRACE, idle_seconds=300)
ROUTE = registered("presence")
CONDITION_FAILED = {"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"}
THROTTLED = {"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException"}


def values(presence: Presence = PRESENCE) -> dict[str, str]:
    return template_values(
        table_name=TABLE,
        origin=ORIGIN,
        mode=CAPACITY,
        session_seconds=SESSION_SECONDS,
        presence=presence,
    )


def heartbeat(
    query: dict[str, str],
    headers: dict[str, str] | None = None,
    presence: Presence = PRESENCE,
    request_time: object = NOW_MS,
) -> dict[str, Any]:
    text = render(
        load_template(ROUTE.vtl.request_template(CAPACITY), values(presence)),
        RenderInput(headers=headers or {}, query=query, context={"requestTimeEpoch": request_time}),
    )
    request: dict[str, Any] = json.loads(text)
    return request


def test_a_heartbeat_holds_the_place_for_the_grace_exactly_as_core_sessions_says() -> None:
    expected = sessions.session_request(TABLE, TOKEN_ID, now=NOW_S, session_seconds=GRACE)
    assert heartbeat({"token": TOKEN}) == expected
    assert heartbeat({"token": TOKEN}, request_time=str(NOW_MS)) == expected
    # Without presence it holds the place for a session, as a /client check does.
    session = sessions.session_request(TABLE, TOKEN_ID, now=NOW_S, session_seconds=SESSION_SECONDS)
    assert heartbeat({"token": TOKEN}, presence=Presence(0, 300)) == session


def test_a_heartbeat_never_redeems() -> None:
    redeem = {CLIENT_REDEEM_PARAMETER: CLIENT_REDEEM_VALUE}
    request = heartbeat({"token": TOKEN, **redeem})
    assert request == sessions.session_request(TABLE, TOKEN_ID, now=NOW_S, session_seconds=GRACE)


@pytest.mark.parametrize(
    ("query", "headers", "request_time"),
    [
        ({}, {}, NOW_MS),
        ({"token": "junk"}, {}, NOW_MS),
        ({"token": f"{TOKEN_ID}."}, {}, NOW_MS),
        ({"token": TOKEN}, {}, ""),
        ({"token": TOKEN}, {}, "-5"),
    ],
)
def test_no_usable_token_or_time_holds_nobody(
    query: dict[str, str], headers: dict[str, str], request_time: object
) -> None:
    request = heartbeat(query, headers, request_time=request_time)
    assert request["Key"] == {"pk": {"S": NO_VISITOR_KEY}}
    assert request["ConditionExpression"] == sessions.SESSION_CONDITION  # fails: no item


def test_only_the_query_holds_a_place_never_the_cookie() -> None:
    """The script sends ?token= and no cookie; a heartbeat riding on the room's cookie could
    come only from another page of the room's site, which would keep a gone visitor's place."""
    expected = sessions.session_request(TABLE, TOKEN_ID, now=NOW_S, session_seconds=GRACE)
    room_cookie = {"Cookie": f"{COOKIE_NAME}={TOKEN}"}
    assert heartbeat({}, room_cookie)["Key"] == {"pk": {"S": NO_VISITOR_KEY}}
    assert heartbeat({}, {"cookie": f"a=1; {COOKIE_NAME}={TOKEN}"})["Key"] == {
        "pk": {"S": NO_VISITOR_KEY}
    }
    other = "Zz9" + "q" * 19 + ".5"
    assert heartbeat({"token": TOKEN}, {"Cookie": f"{COOKIE_NAME}={other}"}) == expected


@settings(max_examples=80, deadline=None)
@given(headers=HEADERS, query=QUERIES, grace=st.sampled_from([0, 5, 30, 600]))
def test_any_request_renders_one_of_the_owners_requests(headers, query, grace) -> None:
    presence = Presence(grace, 60)
    request = heartbeat(query, headers, presence)
    assert request == heartbeat(query, {}, presence)  # the headers never matter
    key = request["Key"]["pk"]["S"]
    assert key == NO_VISITOR_KEY or re.fullmatch(r"v#[A-Za-z0-9_-]{22}", key)
    assert request == sessions.session_request(
        TABLE,
        key.removeprefix("v#"),
        now=NOW_S,
        session_seconds=presence.hold_seconds(SESSION_SECONDS),
    )


def answered(name: str, body: dict[str, Any], presence: Presence = PRESENCE) -> Any:
    data = RenderInput(body=json.dumps(body), query={"token": TOKEN})
    return render_response(load_template(name, values(presence)), data)


@pytest.mark.parametrize("presence", [PRESENCE, Presence(0, 600), Presence(5, 60)])
def test_a_held_place_is_told_how_often_to_beat_and_when_its_visitor_is_idle(
    presence: Presence,
) -> None:
    rendered = answered(ROUTE.vtl.response_template, {"Attributes": {}}, presence)
    assert rendered.status is None
    assert json.loads(rendered.text) == presence.answer(SESSION_SECONDS)
    beat = presence.beat_seconds(SESSION_SECONDS)
    # At least three heartbeats per hold: two lost in a row do not lose the place.
    assert 3 * beat <= presence.hold_seconds(SESSION_SECONDS)


def test_a_place_gone_is_a_no_and_the_rooms_trouble_a_503() -> None:
    assert ROUTE.vtl.refusal_template is not None
    refused = answered(ROUTE.vtl.refusal_template, CONDITION_FAILED)
    assert (json.loads(refused.text), refused.status) == ({"present": False}, REFUSED_STATUS)
    trouble = answered(ROUTE.vtl.refusal_template, THROTTLED)
    assert (json.loads(trouble.text), trouble.status) == ({"present": False}, ERROR_STATUS)
