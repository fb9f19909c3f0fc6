"""Capacity mode's templates (/client sessions, /enter, /polling's capacity answers), rendered
with the local renderer: their requests are core/sessions.py's, whatever comes in. (/leave is
the producer's route: tests/functional/pipeline/test_leaving.py.)"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beekeeper.apigateway.velocity.renderer import Rendered, RenderInput, render, render_response
from beekeeper.core import polling, schedule, sessions
from beekeeper.core.datamodel import (
    CLIENT_REDEEM_PARAMETER,
    CLIENT_REDEEM_VALUE,
    COOKIE_NAME,
    QUEUE_RETENTION_SECONDS,
    REDEEMED_ATTRIBUTE,
    TOKEN_HEADER,
    status_copy_for,
    status_key,
    visitor_key,
)
from beekeeper.core.routes import CAPACITY
from beekeeper.core.routes import route as registered
from beekeeper.vtl import (
    BAD_REQUEST_STATUS,
    ERROR_STATUS,
    NO_VISITOR_KEY,
    REDEEM_WITHOUT_TOKEN_ANSWER,
    REFUSED_STATUS,
    load_template,
    template_values,
)
from tests.support.hostile_requests import HEADERS, QUERIES, redeem_state

ORIGIN = "https://shop.example/sale"
TABLE = "beekeeper-test"
SESSION_SECONDS = 900
TOKEN_ID = "Ab0_-" + "x" * 17
TOKEN = f"{TOKEN_ID}.1234"
OTHER_ID = "Zz9" + "q" * 19
NOW_MS = 1_763_780_000_456
NOW_S = NOW_MS // 1000
VALUES = template_values(
    table_name=TABLE, origin=ORIGIN, mode=CAPACITY, session_seconds=SESSION_SECONDS
)
RATE_VALUES = template_values(table_name=TABLE, origin=ORIGIN)


def refusal(name: str) -> str:
    """The refusal template of route `name` (the registry's)."""
    found = registered(name).vtl.refusal_template
    assert found is not None
    return found


def cookie(value: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE_NAME}={value}"}


def rendered_request(
    route: str,
    headers: dict[str, str],
    query: dict[str, str] | None = None,
    request_time: object = NOW_MS,
) -> dict[str, Any]:
    text = render(
        load_template(registered(route).vtl.request_template(CAPACITY), VALUES),
        RenderInput(headers=headers, query=query or {}, context={"requestTimeEpoch": request_time}),
    )
    request: dict[str, Any] = json.loads(text)
    return request


def answer(
    name: str, body: dict[str, Any], headers: dict[str, str], query: dict[str, str] | None = None
) -> Rendered:
    data = RenderInput(
        body=json.dumps(body),
        headers=headers,
        query=query or {},
        context={"requestTimeEpoch": NOW_MS},
    )
    return render_response(load_template(name, VALUES), data)


# -- the requests are the Python owner's ----------------------------------------------------


@pytest.mark.parametrize("route", ["client", "enter"])
def test_a_session_check_renews_exactly_as_core_sessions_says(route: str) -> None:
    expected = sessions.session_request(TABLE, TOKEN_ID, now=NOW_S, session_seconds=SESSION_SECONDS)
    assert rendered_request(route, cookie(TOKEN)) == expected
    # ?token= wins over the cookie, as on /client in rate mode.
    assert rendered_request(route, cookie(f"{OTHER_ID}.5"), {"token": TOKEN}) == expected
    # The request time may come as text.
    assert rendered_request(route, cookie(TOKEN), request_time=str(NOW_MS)) == expected


def test_a_leavers_mark_outlives_their_place() -> None:
    # POST /leave is the producer's (room/leaving.py); its write is core/sessions.py's, and
    # a leaver's mark outlives their place: a pre-queue place for a start a year ahead too.
    expected = sessions.leave_request(TABLE, TOKEN_ID, now=NOW_S)
    ttl = int(expected["ExpressionAttributeValues"][":ttl"]["N"])
    assert ttl == NOW_S + schedule.MAX_SECONDS_AHEAD + QUEUE_RETENTION_SECONDS


@pytest.mark.parametrize("request_time", [None, "", "12a", "-5", "1" * 16, "1.5e12"])
def test_an_unreadable_request_time_renews_nobody(request_time: object) -> None:
    for route in ("client", "enter"):
        request = rendered_request(route, cookie(TOKEN), request_time=request_time)
        assert request["Key"] == {"pk": {"S": NO_VISITOR_KEY}}


@pytest.mark.parametrize("headers", [{}, cookie("bad"), cookie(f"{TOKEN_ID}.")])
def test_no_usable_token_renews_nobody(headers: dict[str, str]) -> None:
    session = rendered_request("client", headers)
    assert session["Key"] == {"pk": {"S": NO_VISITOR_KEY}}
    assert session["ConditionExpression"] == sessions.SESSION_CONDITION  # fails: no item


@settings(max_examples=80, deadline=None)
@given(headers=HEADERS, query=QUERIES)
def test_any_request_renders_one_of_the_owners_requests(headers, query) -> None:
    for route in ("client", "enter"):
        request = rendered_request(route, headers, query)
        key = request["Key"]["pk"]["S"]
        assert key == NO_VISITOR_KEY or re.fullmatch(r"v#[A-Za-z0-9_-]{22}", key)
        token_id = key.removeprefix("v#")
        # Only /client reads `redeem`: 1 with the token in the query redeems; any other value
        # (or the name in another case), or 1 without the token in the query, reaches nobody.
        state = redeem_state(query) if route == "client" else "none"
        refused = state in ("malformed", "without_token")
        assert key == NO_VISITOR_KEY or not refused
        expected = sessions.session_request(
            TABLE,
            token_id,
            now=0 if refused else NOW_S,
            session_seconds=SESSION_SECONDS,
            redeem=state == "redeem",
        )
        assert request == expected


# -- the answers ----------------------------------------------------------------------------

CONDITION_FAILED = {
    "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
    "message": "The conditional request failed",
}
THROTTLED = [
    {"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"},
    {"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException"},
    {"__type": "com.amazonaws.dynamodb.v20120810#RequestLimitExceeded"},
    {},
]


def test_success_answers() -> None:
    client = answer(registered("client").vtl.response_template, {}, cookie(TOKEN))
    assert (json.loads(client.text), client.status) == ({"allow": True}, None)


@pytest.mark.parametrize(("route", "field"), [("client", "allow")])
def test_a_failed_condition_is_a_no_and_anything_else_the_rooms_trouble(
    route: str, field: str
) -> None:
    refused = answer(refusal(route), CONDITION_FAILED, cookie(TOKEN))
    # DynamoDB's 400 has an integration response of its own (400): the template says 200.
    assert (json.loads(refused.text), refused.status) == ({field: False}, REFUSED_STATUS)
    for body in THROTTLED:
        trouble = answer(refusal(route), body, cookie(TOKEN))
        assert (json.loads(trouble.text), trouble.status) == ({field: False}, ERROR_STATUS)


@pytest.mark.parametrize(
    ("headers", "query", "location"),
    [
        (cookie(TOKEN), {}, f"{ORIGIN}?beekeeper_token={TOKEN}"),
        (cookie("junk"), {"token": TOKEN}, f"{ORIGIN}?beekeeper_token={TOKEN}"),
        ({}, {}, ORIGIN),
        (cookie("x$context.requestId#set($a=1)"), {}, ORIGIN),
    ],
)
def test_enter_always_sends_the_visitor_to_the_shop(
    headers: dict[str, str], query: dict[str, str], location: str
) -> None:
    for body in ({}, CONDITION_FAILED, THROTTLED[0]):
        rendered = answer("enter-response.vtl", body, headers, query)
        assert rendered.headers == {"Location": location}


@settings(max_examples=60, deadline=None)
@given(headers=HEADERS, query=QUERIES)
def test_enter_redirects_only_to_the_origin(headers, query) -> None:
    for body in ({}, {"Attributes": {"ticket": {"S": TICKET}}}):
        location = answer("enter-response.vtl", body, headers, query).headers["Location"]
        assert location == ORIGIN or re.fullmatch(
            re.escape(ORIGIN)
            + r"\?beekeeper_token=[A-Za-z0-9_-]{22}\.[0-9]{1,12}(&beekeeper_ticket="
            + re.escape(TICKET)
            + ")?",
            location,
        )


# -- /enter: only the room's own page sends its visitor through -----------------------------

FROM_ANOTHER_PAGE = [
    {"Sec-Fetch-Site": "same-site"},  # an <img> or a fetch of another page of the room's site
    {"Sec-Fetch-Site": "cross-site"},  # another site's link or script
    {"sec-fetch-site": " Cross-Site "},
    {"SEC-FETCH-SITE": "SAME-SITE"},
]
TAKEN = [
    {},  # a server, or a browser without Fetch Metadata
    {"Sec-Fetch-Site": "same-origin"},  # the room's own page
    {"Sec-Fetch-Site": "none"},  # an address typed or bookmarked
    {"Sec-Fetch-Site": "cross-origin"},  # no such value: not another page by the header's word
]


@pytest.mark.parametrize("fetch_site", FROM_ANOTHER_PAGE)
def test_enter_from_another_page_records_nothing_and_hands_the_shop_no_ticket(
    fetch_site: dict[str, str],
) -> None:
    """A page of the room's site could otherwise load /enter as an image: the browser would
    follow the 302 and hand the shop the visitor's ticket behind the visitor's back."""
    headers = cookie(TOKEN) | fetch_site
    assert rendered_request("enter", headers)["Key"] == {"pk": {"S": NO_VISITOR_KEY}}
    assert rendered_request("enter", headers, {"token": TOKEN})["Key"] == {
        "pk": {"S": NO_VISITOR_KEY}
    }
    item = visitor("inside") | {"ticket": {"S": TICKET}}
    for body in ({"Attributes": item}, CONDITION_FAILED):
        assert answer("enter-response.vtl", body, headers).headers == {"Location": ORIGIN}


@pytest.mark.parametrize("fetch_site", TAKEN)
def test_enter_from_the_rooms_own_page_or_a_server_starts_the_session(
    fetch_site: dict[str, str],
) -> None:
    renew = sessions.session_request(TABLE, TOKEN_ID, now=NOW_S, session_seconds=SESSION_SECONDS)
    assert rendered_request("enter", cookie(TOKEN) | fetch_site) == renew
    item = visitor("inside") | {"ticket": {"S": TICKET}}
    rendered = answer("enter-response.vtl", {"Attributes": item}, cookie(TOKEN) | fetch_site)
    location = f"{ORIGIN}?beekeeper_token={TOKEN}&beekeeper_ticket={TICKET}"
    assert rendered.headers == {"Location": location}


@pytest.mark.parametrize("fetch_site", FROM_ANOTHER_PAGE)
def test_the_fetch_site_rule_is_enters_alone(fetch_site: dict[str, str]) -> None:
    """A shop's page checks with the cookie from another site, and the presence script beats
    from the shop's pages: neither is refused for the header."""
    renew = sessions.session_request(TABLE, TOKEN_ID, now=NOW_S, session_seconds=SESSION_SECONDS)
    assert rendered_request("client", cookie(TOKEN) | fetch_site) == renew


# -- the one-time redeem and the ticket through /enter --------------------------------------

TICKET = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
REDEEM = {CLIENT_REDEEM_PARAMETER: CLIENT_REDEEM_VALUE}


def test_a_client_redeem_is_core_sessions_redeem_and_enter_never_redeems() -> None:
    redeem = sessions.session_request(
        TABLE, TOKEN_ID, now=NOW_S, session_seconds=SESSION_SECONDS, redeem=True
    )
    assert rendered_request("client", {}, {"token": TOKEN, **REDEEM}) == redeem
    assert rendered_request("client", cookie(f"{TOKEN_ID}.9"), {"token": TOKEN, **REDEEM}) == redeem
    renew = sessions.session_request(TABLE, TOKEN_ID, now=NOW_S, session_seconds=SESSION_SECONDS)
    assert rendered_request("enter", cookie(TOKEN), REDEEM) == renew
    assert rendered_request("enter", cookie(TOKEN), {CLIENT_REDEEM_PARAMETER: "x"}) == renew
    # A malformed redeem on /client, or one with the cookie alone, renews and redeems nobody.
    for query in ({CLIENT_REDEEM_PARAMETER: "yes"}, REDEEM):
        assert rendered_request("client", cookie(TOKEN), query)["Key"] == {
            "pk": {"S": NO_VISITOR_KEY}
        }


def test_a_redeem_with_the_cookie_alone_is_refused_with_what_to_send() -> None:
    for body in (CONDITION_FAILED, CONDITION_FAILED | {"Item": visitor("inside")}):
        refused = answer(refusal("client"), body, cookie(TOKEN), REDEEM)
        assert (json.loads(refused.text), refused.status) == (
            REDEEM_WITHOUT_TOKEN_ANSWER,
            BAD_REQUEST_STATUS,
        )


def test_a_refused_redeem_says_redeemed_only_for_a_redeemed_admission() -> None:
    was = {"Item": {**visitor("inside"), REDEEMED_ATTRIBUTE: {"N": str(NOW_S - 5)}}}
    redeemed = answer(refusal("client"), CONDITION_FAILED | was, {}, {"token": TOKEN, **REDEEM})
    assert json.loads(redeemed.text) == {"allow": False, "state": "redeemed"}
    # A check is unaffected by the redeem; an admission never redeemed is a plain no.
    checked = answer(refusal("client"), CONDITION_FAILED | was, cookie(TOKEN))
    assert json.loads(checked.text) == {"allow": False}
    never = {"Item": visitor("left")}
    for body in (CONDITION_FAILED | never, CONDITION_FAILED):
        refused = answer(refusal("client"), body, {}, {"token": TOKEN, **REDEEM})
        assert (json.loads(refused.text), refused.status) == ({"allow": False}, REFUSED_STATUS)


@pytest.mark.parametrize(
    ("ticket", "location"),
    [
        (TICKET, f"{ORIGIN}?beekeeper_token={TOKEN}&beekeeper_ticket={TICKET}"),
        ('x"}&evil=1', f"{ORIGIN}?beekeeper_token={TOKEN}"),  # never a stored non-JWS
        (None, f"{ORIGIN}?beekeeper_token={TOKEN}"),
    ],
)
def test_enter_carries_the_renewed_items_ticket_to_the_shop(
    ticket: str | None, location: str
) -> None:
    item = visitor("inside") | ({"ticket": {"S": ticket}} if ticket is not None else {})
    rendered = answer("enter-response.vtl", {"Attributes": item}, cookie(TOKEN))
    assert rendered.headers == {"Location": location}
    # A refused arrival sends the token only: the shop's /client check says no.
    refused = answer("enter-response.vtl", CONDITION_FAILED | {"Item": item}, cookie(TOKEN))
    assert refused.headers == {"Location": f"{ORIGIN}?beekeeper_token={TOKEN}"}


# -- /polling in capacity mode --------------------------------------------------------------


def visitor(state: str | None, expires_at: int = NOW_S + 60) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": {"S": visitor_key(TOKEN_ID)},
        "expires_at": {"N": str(expires_at)},
    }
    if state is not None:
        item["state"] = {"S": state}
    return item


def status(**numbers: int) -> dict[str, Any]:
    fields = {"admitted_total": 1000, "arrivals_total": 5000, "rate": 60, "updated_at": NOW_S - 3}
    item: dict[str, Any] = {"pk": {"S": status_key(status_copy_for(1234))}}
    for name, value in (fields | numbers).items():
        item[name] = {"N": str(value)}
    return item | {"enabled": {"BOOL": True}, "slowed": {"BOOL": False}}


def poll(
    items: list[dict[str, Any]],
    values: dict[str, str] = VALUES,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    data = RenderInput(
        body=json.dumps({"Responses": {TABLE: items}}),
        headers=cookie(TOKEN) if headers is None else headers,
        context={"requestTimeEpoch": NOW_MS},
    )
    result: dict[str, Any] = json.loads(render(load_template("polling-response.vtl", values), data))
    return result


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (visitor("left"), {"allow": False, "state": "left"}),
        (visitor("left", NOW_S - 5), {"allow": False, "state": "left"}),
        (visitor("ended"), {"allow": False, "state": "expired"}),
        (visitor("admitted", NOW_S - 1), {"allow": False, "state": "expired"}),
        (
            visitor("inside"),
            {"allow": True, "origin": f"{ORIGIN}?beekeeper_token={TOKEN}", "via": "enter"},
        ),
        (
            visitor("admitted"),
            {"allow": True, "origin": f"{ORIGIN}?beekeeper_token={TOKEN}", "via": "enter"},
        ),
    ],
)
def test_polling_says_where_a_capacity_visitor_is(
    item: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert poll([status(), item]) == expected


@pytest.mark.parametrize("values", [VALUES, RATE_VALUES], ids=["capacity", "rate"])
def test_an_app_gets_its_token_and_ticket_in_the_answer_never_in_a_url(
    values: dict[str, str],
) -> None:
    """An app asks /polling with its Beekeeper-Token header (docs/apps.md): the admission
    carries the token and ticket as fields, and the shop's bare origin; no /enter detour."""
    admitted = visitor("admitted") | {"ticket": {"S": TICKET}}
    app = {TOKEN_HEADER: TOKEN, "Cookie": f"{COOKIE_NAME}={OTHER_ID}.7"}
    assert poll([status(), admitted], values, app) == {
        "allow": True,
        "token": TOKEN,
        "origin": ORIGIN,
        "ticket": TICKET,
    }
    # A ticket that is not a compact JWS is never passed on; without one, the token alone.
    odd = visitor("admitted") | {"ticket": {"S": 'x"}&evil=1'}}
    expected = {"allow": True, "token": TOKEN, "origin": ORIGIN}
    assert poll([status(), odd], values, app) == expected
    # The header is read by the cookie's rules: a malformed one is 'malformed', whatever the
    # cookie holds.
    bad = {TOKEN_HEADER: TOKEN + "x", "Cookie": f"{COOKIE_NAME}={TOKEN}"}
    assert poll([status(), admitted], values, bad) == {"allow": False, "state": "malformed"}
    waiting = poll([status()], values, {TOKEN_HEADER.lower(): f" {TOKEN} "})
    assert waiting["state"] == "waiting" and waiting["position"] == 234


def test_an_apps_origin_is_the_shops_as_configured_even_an_international_one() -> None:
    shop = "https://bücher.example/sale?from=app"
    values = template_values(table_name=TABLE, origin=shop)
    answer = poll([status(), visitor(None)], values, {TOKEN_HEADER: TOKEN})
    assert answer == {"allow": True, "token": TOKEN, "origin": shop}


def test_a_rate_room_sends_the_admitted_straight_to_the_shop() -> None:
    assert poll([status(), visitor(None)], RATE_VALUES) == {
        "allow": True,
        "origin": f"{ORIGIN}?beekeeper_token={TOKEN}",
    }


def test_a_rate_status_copy_gives_the_rate_answer_exactly() -> None:
    answer = poll([status()])
    assert set(answer) == {
        "allow", "state", "position", "turn", "eta_seconds", "poll_after", "rate", "slowed",
        "updated_at",
    }  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    rate=st.integers(1, 300_000),
    max_inside=st.integers(1, 1_000_000),
    inside=st.integers(0, 1_000_001),
    turnover=st.integers(0, 400_000),
    admitted_total=st.integers(0, 1233),
    claim_seconds=st.integers(0, 3_600),
)
def test_capacity_answers_follow_the_python_flow(
    rate: int, max_inside: int, inside: int, turnover: int, admitted_total: int, claim_seconds: int
) -> None:
    answer = poll(
        [
            status(
                rate=rate,
                max_inside=max_inside,
                inside=inside,
                turnover=turnover,
                admitted_total=admitted_total,
                claim_seconds=claim_seconds,
            )
        ]
    )
    position = polling.position(1234, admitted_total)
    flow = polling.admission_flow(rate, max_inside=max_inside, inside=inside, turnover=turnover)
    assert answer == {
        "allow": False,
        "state": "waiting",
        "position": position,
        "turn": 1234,
        "eta_seconds": polling.eta_seconds(position, flow),
        "poll_after": polling.poll_after_seconds(position, flow, claim_seconds=claim_seconds),
        "rate": rate,
        "slowed": False,
        "updated_at": NOW_S - 3,
        "max_inside": max_inside,
        "inside": inside,
        "turnover": turnover,
        "full": inside >= max_inside,
    }


def test_a_waiting_page_polls_twice_per_claim_window_however_slow_the_line() -> None:
    # 500 ahead at one a minute: the estimate alone would wait the longest poll, 300 s.
    slow = {"rate": 600, "max_inside": 100, "inside": 100, "turnover": 1, "admitted_total": 734}
    assert poll([status(**slow)])["poll_after"] == polling.POLL_AFTER_MAX_SECONDS
    assert poll([status(**slow, claim_seconds=120)])["poll_after"] == 60
    assert poll([status(**slow, claim_seconds=3)])["poll_after"] == polling.POLL_AFTER_MIN_SECONDS
    # A rate-mode copy never carries a claim window; a stray one changes nothing there.
    rate_mode = {"rate": 1, "admitted_total": 734, "claim_seconds": 120}
    assert poll([status(**rate_mode)])["poll_after"] == polling.POLL_AFTER_MAX_SECONDS


def test_a_full_shop_estimates_from_the_turnover() -> None:
    full = poll([status(rate=600, max_inside=100, inside=100, turnover=30, admitted_total=1224)])
    assert (full["position"], full["eta_seconds"], full["full"]) == (10, 20, True)  # 10 at 30/min
    room = poll([status(rate=600, max_inside=100, inside=99, turnover=30, admitted_total=1224)])
    assert (room["eta_seconds"], room["full"]) == (1, False)  # at the rate: 10 at 600/min
