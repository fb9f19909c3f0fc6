"""One request as API Gateway runs it (beekeeper.apigateway.runtime), on the room's own API
definition: the semantics docs/vtl.md settles from AWS's documentation, each held here."""

from __future__ import annotations

import json
from typing import Any

import pytest

from beekeeper.apigateway.http import HttpRequest, HttpResponse
from beekeeper.apigateway.model import RestApi, load
from beekeeper.apigateway.runtime import (
    MISSING_ROUTE,
    UnsupportedConfiguration,
    gateway_response,
    invoke,
    media_type,
)
from beekeeper.core.headers import PAGE_HEADERS, PRESENCE_SCRIPT_HEADERS, browser_origin
from beekeeper.core.routes import CAPACITY, PER_VISITOR, Caller, Kind, Route, Vtl
from beekeeper.stacks.rest_api import definition, local_references
from beekeeper.vtl.methods import DYNAMODB_CONTENT_TYPE, route_method
from beekeeper.waiting_room_site import presence
from tests.support.stack_testkit import CHANGED_ROOM

SETTINGS = CHANGED_ROOM  # a capacity room
PAGE = "<!doctype html><title>in line</title><p>é</p>"
REFS = local_references("beekeeper-test")
NOW_MS = 1_763_780_000_000
CONDITION_FAILED = {"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"}
# A templated POST a page's sendBeacon, a form and a server may all call: /client's templates
# (a session renewal), under three request Content-Types. No route of the room is one since
# /leave became the producer's; API Gateway's rules for one are held here all the same.
BEACON = Route(
    "beacon",
    "/beacon",
    Kind.TEMPLATE,
    ("POST",),
    (CAPACITY,),
    (Caller.SHOP_PAGES,),
    edge=PER_VISITOR,
    cors=True,
    vtl=Vtl(
        "UpdateItem",
        {CAPACITY: "client-session-request.vtl"},
        "client-response.vtl",
        refusal_template="client-refused.vtl",
        error_body='{"allow": false}',
        request_content_types=(
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
        ),
        reads_token=True,
    ),
)


def room_api() -> RestApi:
    api = definition(SETTINGS, REFS, page_html=PAGE)
    beacon = route_method(
        BEACON,
        mode=CAPACITY,
        table_name=REFS.table_name,
        origin=SETTINGS.origin,
        session_seconds=SETTINGS.session_seconds,
        credentials=REFS.integration_role_arn,
        region=REFS.region,
        partition=REFS.partition,
    )
    return load({**api.methods, ("/beacon", "POST"): beacon}, api.gateway_responses)


API = room_api()
SHOP = browser_origin(SETTINGS.origin)


class Table:
    """A DynamoDbTarget (our own interface) answering every request alike, keeping them."""

    def __init__(self, status: int = 200, body: dict[str, Any] | None = None) -> None:
        self.answer = (status, json.dumps(body if body is not None else {"Attributes": {}}))
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, action: str, body: str) -> tuple[int, str]:
        self.requests.append((action, json.loads(body)))
        return self.answer


def send(
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    table: Table | None = None,
    body: str = "",
) -> HttpResponse:
    found = API.method(path, method)
    if found is None:
        return gateway_response(API, *MISSING_ROUTE)
    request = HttpRequest(method, path, {}, headers or {}, body)
    return invoke(API, found, request, dynamodb=table or Table(), request_time_ms=NOW_MS)


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain;charset=UTF-8",  # navigator.sendBeacon with a string
        "text/plain",
        "application/x-www-form-urlencoded",  # a form, sendBeacon with URLSearchParams
        "application/json; charset=utf-8",
        None,  # no Content-Type: application/json
    ],
)
def test_a_post_selects_its_request_template_by_the_mime_type(content_type: str | None) -> None:
    table = Table()
    headers = {"Content-Type": content_type} if content_type else {}
    answer = send("POST", "/beacon", headers, table, body="ignored=1")
    assert (answer.status, json.loads(answer.body)) == (200, {"allow": True})
    ((action, request),) = table.requests
    assert action == "UpdateItem" and request["TableName"] == "beekeeper-test"


@pytest.mark.parametrize(
    "content_type",
    [
        "application/xml",
        "multipart/form-data; boundary=x",
        "Text/Plain",  # AWS does not say it folds case: nothing is folded
    ],
)
def test_a_media_type_without_a_template_is_415_with_the_gateway_response(
    content_type: str,
) -> None:
    table = Table()
    answer = send("POST", "/beacon", {"Content-Type": content_type}, table)
    assert table.requests == []
    assert answer.status == 415
    assert json.loads(answer.body) == {"error": "Unsupported Media Type"}
    # DEFAULT_4XX's headers: JSON never cached, readable by the shop's pages.
    assert answer.headers["Access-Control-Allow-Origin"] == SHOP
    assert answer.headers["Cache-Control"] == "no-store"


def test_a_get_with_a_text_body_type_is_415_too() -> None:
    assert send("GET", "/client", {"Content-Type": "text/plain"}).status == 415


def test_dynamodb_gets_its_own_media_type_whatever_the_client_sent() -> None:
    for (path, verb), method in API.methods.items():
        integration = method.integration
        if integration.type == "AWS":
            assert integration.request_parameters == {
                "integration.request.header.Content-Type": f"'{DYNAMODB_CONTENT_TYPE}'"
            }, (path, verb)


def test_a_dynamodb_method_without_its_media_type_is_not_run() -> None:
    api = definition(SETTINGS, REFS, page_html=PAGE)
    client = api.methods[("/client", "GET")]
    client["Integration"].pop("RequestParameters")
    loose = load({("/client", "GET"): client}, validate=False)
    method = loose.method("/client", "GET")
    assert method is not None
    with pytest.raises(UnsupportedConfiguration, match="Content-Type None"):
        invoke(
            loose,
            method,
            HttpRequest("GET", "/client", {}, {}),
            dynamodb=Table(),
            request_time_ms=NOW_MS,
        )


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/nothing"), ("HEAD", "/polling"), ("POST", "/client"), ("GET", "/leave")],
)
def test_an_unknown_route_or_method_is_the_missing_token_gateway_response(
    method: str, path: str
) -> None:
    answer = send(method, path)
    assert answer.status == 403
    assert json.loads(answer.body) == {"error": "Missing Authentication Token"}
    assert answer.headers == {
        "Content-Type": "application/json",
        "Cache-Control": "no-store",
        "Access-Control-Allow-Origin": SHOP,
        "Access-Control-Allow-Credentials": "true",
        "Vary": "Origin",
    }


def test_without_gateway_responses_api_gateway_answers_its_own_message() -> None:
    bare = load({})
    answer = gateway_response(bare, *MISSING_ROUTE)
    assert (answer.status, answer.body) == (403, '{"message":"Missing Authentication Token"}')


def test_the_page_is_chosen_for_any_accept_header_and_carries_its_headers() -> None:
    for accept in (None, "text/html,application/xhtml+xml;q=0.9", "image/png"):
        answer = send("GET", "/room", {"Accept": accept} if accept else {})
        assert answer.status == 200
        assert answer.body == PAGE
        assert dict(answer.headers) == PAGE_HEADERS


@pytest.mark.parametrize("accept", [None, "*/*", "application/javascript", "text/html"])
def test_the_presence_script_is_served_byte_for_byte_for_any_accept_header(
    accept: str | None,
) -> None:
    answer = send("GET", "/presence.js", {"Accept": accept} if accept else {})
    assert answer.status == 200
    assert answer.body.encode("utf-8") == presence.script_bytes()
    assert dict(answer.headers) == PRESENCE_SCRIPT_HEADERS


@pytest.mark.parametrize("content_type", [None, "text/plain;charset=UTF-8"])
def test_a_heartbeat_is_a_simple_request_answered_for_the_shop(content_type: str | None) -> None:
    # fetch(url, {method: "POST"}) without a body sends no Content-Type; a beacon text/plain:
    # both are CORS simple requests, which a browser sends without a preflight, and the
    # answer lets the shop's page read it.
    table = Table()
    headers = {"Content-Type": content_type} if content_type else {}
    answer = send("POST", "/presence", headers, table)
    assert answer.status == 200
    assert json.loads(answer.body)["present"] is True
    assert answer.headers["Access-Control-Allow-Origin"] == SHOP
    assert answer.headers["Cache-Control"] == "no-store"
    ((action, _),) = table.requests
    assert action == "UpdateItem"


def test_the_preflight_is_a_mock_answer_of_204() -> None:
    answer = send("OPTIONS", "/leave")
    assert answer.status == 204 and answer.body == ""
    assert answer.headers["Access-Control-Allow-Methods"] == "POST"
    assert answer.headers["Access-Control-Allow-Origin"] == SHOP


def test_a_refusal_takes_its_own_integration_response_and_says_200() -> None:
    refused = send("GET", "/client", table=Table(400, CONDITION_FAILED))
    assert (refused.status, json.loads(refused.body)) == (200, {"allow": False})
    throttled = send(
        "GET",
        "/client",
        table=Table(400, {"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException"}),
    )
    assert (throttled.status, json.loads(throttled.body)) == (503, {"allow": False})
    assert refused.headers == throttled.headers
    unavailable = send("GET", "/client", table=Table(500, {"__type": "InternalServerError"}))
    assert unavailable.status == 503 and unavailable.headers["Retry-After"] == "5"


def test_an_override_header_the_method_response_does_not_declare_is_not_sent() -> None:
    api = definition(SETTINGS, REFS, page_html=PAGE)
    enter = api.methods[("/enter", "GET")]
    (declared,) = enter["MethodResponses"]
    declared["ResponseParameters"].pop("method.response.header.Location")
    loose = load({("/enter", "GET"): enter}, validate=False)
    method = loose.method("/enter", "GET")
    assert method is not None
    answer = invoke(
        loose,
        method,
        HttpRequest("GET", "/enter", {}, {}),
        dynamodb=Table(),
        request_time_ms=NOW_MS,
    )
    assert answer.status == 302 and "Location" not in answer.headers


def test_the_mime_type_is_the_part_before_its_parameters() -> None:
    assert media_type("text/plain;charset=UTF-8") == "text/plain"
    assert media_type(" application/json ; charset=utf-8") == "application/json"
    assert media_type("Text/Plain") == "Text/Plain"
