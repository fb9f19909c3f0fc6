"""The /polling and /client templates, rendered with the local renderer (no AWS, no moto).

/client is a conditional write: DynamoDB's condition decides, so its answers are tested with
the request sent to the local store (store/dynamodb.py, held to moto by
tests/functional/store) and the answer template chosen by the status, as API Gateway does."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beekeeper.apigateway.velocity.renderer import RenderInput, render, render_response
from beekeeper.core import client_check, polling
from beekeeper.core.datamodel import (
    CHECKED_ATTRIBUTE,
    CLIENT_REDEEM_PARAMETER,
    CLIENT_REDEEM_VALUE,
    CLIENT_TOKEN_PARAMETER,
    COOKIE_NAME,
    REDEEMED_ATTRIBUTE,
    TOKEN_HEADER,
    TOKEN_PATTERN,
    status_copy_for,
    status_key,
    table_definition,
    visitor_key,
)
from beekeeper.core.paths import VTL_DIR
from beekeeper.core.routes import RATE, template_files, visitor_routes
from beekeeper.core.routes import route as registered
from beekeeper.room import cookies
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.timing import RealTime
from beekeeper.store.wire import TemplateTarget
from beekeeper.vtl import (
    BAD_REQUEST_STATUS,
    ERROR_STATUS,
    MALFORMED_REDEEM_ANSWER,
    NO_VISITOR_KEY,
    REDEEM_WITHOUT_TOKEN_ANSWER,
    load_template,
    template_values,
)
from tests.support.hostile_requests import (
    COOKIE_VALUES,
    HEADERS,
    QUERIES,
    VALID_TOKENS,
    redeem_state,
)

ORIGIN = "https://shop.example/sale"
TABLE = "beekeeper-test"
TOKEN_ID = "Ab0_-" + "x" * 17
TOKEN = f"{TOKEN_ID}.1234"
OTHER_ID = "Zz9" + "q" * 19
NOW_MS = 1_763_780_000_000
VALUES = template_values(table_name=TABLE, origin=ORIGIN)
VISITOR_ROUTES = visitor_routes(RATE)


def refusal(name: str) -> str:
    """The refusal template of route `name` (the registry's)."""
    found = registered(name).vtl.refusal_template
    assert found is not None
    return found


def template(name: str) -> str:
    return load_template(name, VALUES)


def request_keys(route: str, headers: dict[str, str], query: dict[str, str] | None = None) -> list:
    rendered = render(
        template(registered(route).vtl.request_template(RATE)),
        RenderInput(headers=headers, query=query or {}, context={"requestTimeEpoch": NOW_MS}),
    )
    request = json.loads(rendered)
    if route == "client":
        assert request["TableName"] == TABLE
        return [request["Key"]["pk"]["S"]]
    assert list(request["RequestItems"]) == [TABLE]
    return [key["pk"]["S"] for key in request["RequestItems"][TABLE]["Keys"]]


class Store:
    """The local store's table, as /client's integration reaches it."""

    def __init__(self, *items: dict[str, Any]) -> None:
        self.database = DynamoDb(RealTime())
        self.database.create_table_as_defined(table_definition(TABLE))
        self.target = TemplateTarget(self.database)
        for item in items:
            self.database.handle("PutItem", {"TableName": TABLE, "Item": item})

    def item(self, token_id: str) -> dict[str, Any] | None:
        answer = self.database.handle(
            "GetItem", {"TableName": TABLE, "Key": {"pk": {"S": visitor_key(token_id)}}}
        )
        found: dict[str, Any] | None = answer.get("Item")
        return found

    def client(
        self,
        headers: dict[str, str],
        query: dict[str, str] | None = None,
        request_time: object = NOW_MS,
    ) -> tuple[int, Any]:
        """(status, answer) of GET /client: the request template's request sent to the store,
        then the answer template API Gateway takes for the store's status."""
        data = RenderInput(
            headers=headers, query=query or {}, context={"requestTimeEpoch": request_time}
        )
        client = registered("client")
        status, body = self.target(
            client.vtl.action, render(template(client.vtl.request_template(RATE)), data)
        )
        assert status in (200, 400), body
        name = client.vtl.response_template if status == 200 else refusal("client")
        answer = render_response(
            template(name),
            RenderInput(body=body, headers=headers, query=query or {}, context=data.context),
        )
        # DynamoDB's 400 reaches the refusal template through an integration response of
        # status 400 (vtl/methods.py): the template sets the status the visitor sees.
        assert status == 200 or answer.status is not None
        return answer.status or 200, json.loads(answer.text)


def client_answer(
    store: Store, headers: dict[str, str], query: dict[str, str] | None = None, **kwargs: Any
) -> Any:
    status, answer = store.client(headers, query, **kwargs)
    assert status == 200
    return answer


def respond(
    route: str,
    body: dict[str, Any],
    headers: dict[str, str],
    now_ms: int = NOW_MS,
    query: dict[str, str] | None = None,
) -> Any:
    data = RenderInput(
        body=json.dumps(body),
        headers=headers,
        query=query or {},
        context={"requestTimeEpoch": now_ms},
    )
    return json.loads(render(template(registered(route).vtl.response_template), data))


def cookie(value: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE_NAME}={value}"}


# -- the token check ------------------------------------------------------------------------

MANY_HEADERS = [(f"X-{i}", "1") for i in range(1000)]
COOKIE_CASES = [
    # (name, headers, expected token or the state when there is none)
    ("only ours", {"Cookie": f"beekeeper_token={TOKEN}"}, TOKEN),
    ("several, ours last", {"Cookie": f"a=1; b=2; beekeeper_token={TOKEN}"}, TOKEN),
    ("several, ours first", {"Cookie": f"beekeeper_token={TOKEN}; a=1"}, TOKEN),
    ("no spaces", {"Cookie": f"a=1;beekeeper_token={TOKEN};b=2"}, TOKEN),
    ("extra spaces", {"Cookie": f"  a=1 ;   beekeeper_token = {TOKEN}  ;"}, TOKEN),
    ("lower-case header", {"cookie": f"beekeeper_token={TOKEN}"}, TOKEN),
    ("odd-case header", {"CoOkIe": f"beekeeper_token={TOKEN}"}, TOKEN),
    ("split over two headers", {"Cookie": "a=1", "cookie": f"beekeeper_token={TOKEN}"}, TOKEN),
    ("ours as a suffix", {"Cookie": f"xbeekeeper_token={TOKEN}"}, "no_token"),
    ("ours as a prefix", {"Cookie": f"beekeeper_token_old={TOKEN}"}, "no_token"),
    ("in a value only", {"Cookie": f"a=beekeeper_token={TOKEN}"}, "no_token"),
    ("substring names around", {"Cookie": f"my_beekeeper_token=1; beekeeper_token={TOKEN}"}, TOKEN),
    ("duplicates, first good", {"Cookie": f"beekeeper_token={TOKEN}; beekeeper_token=bad"}, TOKEN),
    ("duplicates, last good", {"Cookie": f"beekeeper_token=bad; beekeeper_token={TOKEN}"}, TOKEN),
    (
        "duplicates, two good",
        {"Cookie": f"beekeeper_token={TOKEN}; beekeeper_token={OTHER_ID}.5"},
        TOKEN,
    ),
    ("absent", {}, "no_token"),
    ("other header only", {"X-Cookie": f"beekeeper_token={TOKEN}"}, "no_token"),
    ("empty", {"Cookie": ""}, "no_token"),
    # The join starts at the first value that is not empty (docs/vtl.md): an empty header
    # before ours adds no part; one after it an empty part, which names no cookie.
    ("empty first header", {"Cookie": "", "cookie": f"beekeeper_token={TOKEN}"}, TOKEN),
    ("empty last header", {"cookie": f"beekeeper_token={TOKEN}", "Cookie": ""}, TOKEN),
    (
        "empty header between",
        {"COOKIE": "a=1", "Cookie": "", "cookie": f"beekeeper_token={TOKEN}"},
        TOKEN,
    ),
    ("no value", {"Cookie": "beekeeper_token="}, "malformed"),
    ("no equals sign", {"Cookie": "beekeeper_token"}, "no_token"),
    ("quoted", {"Cookie": f'beekeeper_token="{TOKEN}"'}, "malformed"),
    ("backslashes", {"Cookie": f"beekeeper_token={TOKEN}\\"}, "malformed"),
    ("json fragment", {"Cookie": 'beekeeper_token=x"}]}, {"pk": {"S": "config"}}'}, "malformed"),
    ("velocity in value", {"Cookie": "beekeeper_token=$context.requestId#set($a=1)"}, "malformed"),
    ("unicode id", {"Cookie": f"beekeeper_token={'é' * 22}.1"}, "malformed"),
    ("trailing newline", {"Cookie": f"beekeeper_token={TOKEN}\n"}, TOKEN),  # trim removes it
    ("newline inside", {"Cookie": f"beekeeper_token={TOKEN_ID}\n.1"}, "malformed"),
    ("id too short", {"Cookie": f"beekeeper_token={TOKEN_ID[:-1]}.1"}, "malformed"),
    ("ordinal too long", {"Cookie": f"beekeeper_token={TOKEN_ID}.{'1' * 13}"}, "malformed"),
    ("ordinal missing", {"Cookie": f"beekeeper_token={TOKEN_ID}."}, "malformed"),
    ("very long", {"Cookie": "a=" + "x" * 8000 + f"; beekeeper_token={TOKEN}"}, TOKEN),
    (
        "many cookies",
        {"Cookie": "; ".join(f"c{i}={i}" for i in range(300)) + f"; beekeeper_token={TOKEN}"},
        TOKEN,
    ),
    ("ours as cookie 999", {"Cookie": "a=1;" * 998 + f"beekeeper_token={TOKEN}"}, TOKEN),
    (
        "ours as cookie 999 of 2000",
        {"Cookie": "a=1;" * 998 + f"beekeeper_token={TOKEN}" + ";a=1" * 1001},
        TOKEN,
    ),
    ("ours as the last of 1000", {"Cookie": "a=1;" * 999 + f"beekeeper_token={TOKEN}"}, TOKEN),
    (
        "ours as cookie 1000 of 1001",
        {"Cookie": "a=1;" * 999 + f"beekeeper_token={TOKEN};a=1"},
        "malformed",
    ),
    (
        "ours as the last of 1001",
        {"Cookie": "a=1;" * 1000 + f"beekeeper_token={TOKEN}"},
        "no_token",
    ),
    (
        "999 over two headers",
        {"Cookie": "a=1;" * 499 + "a=1", "cookie": "b=2;" * 498 + f"beekeeper_token={TOKEN};c=3"},
        TOKEN,
    ),
    ("many separators", {"Cookie": ";" * 5000 + f"beekeeper_token={TOKEN}"}, "no_token"),
    ("1000 headers", dict(MANY_HEADERS[:999]) | cookie(TOKEN), TOKEN),
    ("1001 headers", dict(MANY_HEADERS) | cookie(TOKEN), "no_token"),
]


@pytest.mark.parametrize(
    ("case", "headers", "expected"), COOKIE_CASES, ids=[case[0] for case in COOKIE_CASES]
)
@pytest.mark.parametrize("route", VISITOR_ROUTES)
def test_request_template_reads_the_cookie(
    route: str, case: str, headers: dict[str, str], expected: str
) -> None:
    keys = request_keys(route, headers)
    if TOKEN_PATTERN.fullmatch(expected):
        token_id, ordinal = expected.split(".")
        # The keys the data model's owner names (core/datamodel.py), built by the template.
        assert keys[0] == visitor_key(token_id) == f"v#{token_id}"
        if route == "polling":
            assert keys[1] == status_key(status_copy_for(int(ordinal))) == f"status#{ordinal[-1]}"
    else:
        assert keys == [NO_VISITOR_KEY]
        if route == "polling":
            assert respond(route, {"Responses": {TABLE: []}}, headers) == {
                "allow": False,
                "state": expected,
            }


@pytest.mark.parametrize(
    ("query", "headers", "expected_key"),
    [
        ({"token": TOKEN}, {}, f"v#{TOKEN_ID}"),
        ({"token": TOKEN}, cookie(f"{OTHER_ID}.1"), f"v#{TOKEN_ID}"),  # the parameter wins
        ({"token": "bad"}, cookie(TOKEN), NO_VISITOR_KEY),  # ... even when malformed
        ({"Token": TOKEN}, {}, NO_VISITOR_KEY),  # query names are case-sensitive
        ({}, cookie(TOKEN), f"v#{TOKEN_ID}"),
        ({"token": ""}, {}, NO_VISITOR_KEY),
    ],
)
def test_client_takes_the_token_query_parameter(
    query: dict[str, str], headers: dict[str, str], expected_key: str
) -> None:
    assert request_keys("client", headers, query) == [expected_key]


def test_polling_ignores_the_token_query_parameter() -> None:
    assert request_keys("polling", {}, {"token": TOKEN}) == [NO_VISITOR_KEY]


def test_the_client_query_parameter_and_cookie_are_the_data_models() -> None:
    assert request_keys("client", {}, {CLIENT_TOKEN_PARAMETER: TOKEN}) == [visitor_key(TOKEN_ID)]
    assert request_keys("client", {"Cookie": f"{COOKIE_NAME}={TOKEN}"}) == [visitor_key(TOKEN_ID)]


def test_templates_check_exactly_the_data_models_token_pattern() -> None:
    fragment = (VTL_DIR / "_read-token.vtl").read_text(encoding="utf-8")
    patterns = re.findall(r"#set\(\$tokenPattern = '([^']*)'\)", fragment)
    assert patterns == [TOKEN_PATTERN.pattern]
    assert f"'{NO_VISITOR_KEY[:2]}'" in fragment and '"${visitorKeyPrefix}!"' in fragment
    # Every request template that reaches a visitor's item, and /polling's answer (which needs
    # the ordinal), read the token through the one fragment; /client's answers never read it.
    readers = {registered(route).vtl.request_template(RATE) for route in VISITOR_ROUTES} | {
        registered("polling").vtl.response_template
    }
    for name in readers:
        assert "{{READ_TOKEN}}" in (VTL_DIR / name).read_text(encoding="utf-8")
    for name in (registered("client").vtl.response_template, refusal("client")):
        assert "READ_TOKEN" not in (VTL_DIR / name).read_text(encoding="utf-8")


def test_every_placeholder_is_filled_and_fragments_are_not_templates() -> None:
    from beekeeper.vtl import template_names

    assert template_names() == sorted(template_files())
    for name in template_names():
        assert "{{" not in template(name)


def test_template_values_refuse_an_origin_that_could_break_out_of_the_template() -> None:
    with pytest.raises(ValueError, match="quotes"):
        template_values(table_name=TABLE, origin="https://shop.example/it's")
    values = template_values(table_name=TABLE, origin="https://shop.example/?a=1")
    assert values["ORIGIN_TOKEN_PREFIX"] == "https://shop.example/?a=1&beekeeper_token="


# -- the answers ----------------------------------------------------------------------------


def visitor_item(token_id: str, expires_at: int) -> dict[str, Any]:
    return {
        "pk": {"S": f"v#{token_id}"},
        "admitted_at": {"N": str(expires_at - 3600)},
        "expires_at": {"N": str(expires_at)},
        "ordinal": {"N": "1234"},
    }


def status_item(copy: str = "4", **numbers: Any) -> dict[str, Any]:
    fields = {"admitted_total": 1000, "arrivals_total": 5000, "rate": 60}
    fields["updated_at"] = 1_763_779_990
    fields |= numbers
    item: dict[str, Any] = {"pk": {"S": f"status#{copy}"}}
    for name, value in fields.items():
        item[name] = {"BOOL": value} if isinstance(value, bool) else {"N": str(value)}
    item.setdefault("enabled", {"BOOL": True})
    item.setdefault("slowed", {"BOOL": False})
    return item


def polling_answer(items: list[dict[str, Any]], token: str = TOKEN, now_ms: int = NOW_MS):
    return respond("polling", {"Responses": {TABLE: items}}, cookie(token), now_ms)


NOW_S = NOW_MS // 1000


@pytest.mark.parametrize(
    ("ordinal", "admitted", "arrivals", "position"),
    [
        (6, 0, 1, 6),  # joined after the status was published: five are ahead
        (6, 0, 9, 6),
        (1234, 1000, 1100, 234),
        (900, 1000, 5000, 1),  # passed, not yet admitted: next
    ],
)
def test_position_counts_everyone_ahead_not_yet_admitted(
    ordinal: int, admitted: int, arrivals: int, position: int
) -> None:
    token = f"{TOKEN_ID}.{ordinal}"
    copy = str(ordinal % 10)
    items = [status_item(copy, admitted_total=admitted, arrivals_total=arrivals)]
    assert polling_answer(items, token=token)["position"] == position
    assert polling.position(ordinal, admitted) == position


@pytest.mark.parametrize(
    ("expires_at", "allowed"),
    [(NOW_S + 1, True), (NOW_S, False), (NOW_S - 1, False), (NOW_S + 3600, True)],
)
def test_admission_expires_at_the_request_time(expires_at: int, allowed: bool) -> None:
    items = [status_item(), visitor_item(TOKEN_ID, expires_at)]
    answer = polling_answer(items)
    if allowed:
        assert answer == {"allow": True, "origin": f"{ORIGIN}?beekeeper_token={TOKEN}"}
    else:
        assert answer == {"allow": False, "state": "expired"}
    store = Store(visitor_item(TOKEN_ID, expires_at))
    assert client_answer(store, cookie(TOKEN)) == {"allow": allowed}
    assert client_answer(store, {}) == {"allow": False}
    redeem = {CLIENT_TOKEN_PARAMETER: TOKEN, CLIENT_REDEEM_PARAMETER: CLIENT_REDEEM_VALUE}
    assert client_answer(store, {}, redeem) == {"allow": allowed}
    # An expired admission is not redeemed by asking: it stays "not admitted", not "redeemed".
    assert (REDEEMED_ATTRIBUTE in (store.item(TOKEN_ID) or {})) is allowed


def test_expiry_edge_at_millisecond_resolution() -> None:
    items = [visitor_item(TOKEN_ID, NOW_S + 1)]
    assert polling_answer(items, now_ms=NOW_MS + 999)["allow"] is True  # 1 ms before expiry
    assert polling_answer(items, now_ms=NOW_MS + 1000)["allow"] is False
    store = Store(*items)
    assert client_answer(store, cookie(TOKEN), request_time=NOW_MS + 999) == {"allow": True}
    assert client_answer(store, cookie(TOKEN), request_time=NOW_MS + 1000) == {"allow": False}


def test_an_item_for_another_visitor_is_never_taken_for_ours() -> None:
    items = [status_item(), visitor_item(OTHER_ID, NOW_S + 3600)]
    assert polling_answer(items)["state"] == "waiting"
    store = Store(visitor_item(OTHER_ID, NOW_S + 60))
    assert client_answer(store, cookie(TOKEN)) == {"allow": False}
    assert store.item(TOKEN_ID) is None  # a refused check creates nothing


# -- /client: the check and the one-time redeem ---------------------------------------------

REDEEM = {CLIENT_REDEEM_PARAMETER: CLIENT_REDEEM_VALUE}
REDEEMED = {"allow": False, "state": "redeemed"}


def redeem_of(token: str) -> dict[str, str]:
    """A shop server's redeem of `token`: the token and redeem=1 in the query."""
    return {CLIENT_TOKEN_PARAMETER: token, **REDEEM}


def test_the_client_requests_are_core_client_checks() -> None:
    context = {"requestTimeEpoch": NOW_MS}

    def rendered(headers: dict[str, str], query: dict[str, str]) -> Any:
        data = RenderInput(headers=headers, query=query, context=context)
        return json.loads(render(template(registered("client").vtl.request_template(RATE)), data))

    check = client_check.check_request(TABLE, TOKEN_ID, now=NOW_S, redeem=False)
    redeem = client_check.check_request(TABLE, TOKEN_ID, now=NOW_S, redeem=True)
    assert rendered(cookie(TOKEN), {}) == check
    assert rendered({}, {"token": TOKEN}) == check
    assert rendered({}, redeem_of(TOKEN)) == redeem
    # The query's token wins over the cookie's, in a redeem as in a check.
    assert rendered(cookie(f"{OTHER_ID}.5"), redeem_of(TOKEN)) == redeem
    # A malformed redeem, and a redeem with the cookie alone, reach no visitor's item, at no
    # time: neither can be refused as "redeemed", nor redeem, nor pass for a plain check.
    nobody = client_check.check_request(TABLE, "!", now=0, redeem=False)
    assert nobody["Key"] == {"pk": {"S": NO_VISITOR_KEY}}
    assert rendered(cookie(TOKEN), {CLIENT_REDEEM_PARAMETER: "true"}) == nobody
    assert rendered(cookie(TOKEN), REDEEM) == nobody


def test_a_redeem_admits_once_and_a_check_is_unaffected() -> None:
    store = Store(visitor_item(TOKEN_ID, NOW_S + 60), visitor_item(OTHER_ID, NOW_S + 60))
    assert client_answer(store, cookie(TOKEN)) == {"allow": True}  # a check redeems nothing
    assert client_answer(store, {}, redeem_of(TOKEN)) == {"allow": True}
    assert client_answer(store, {}, redeem_of(TOKEN)) == REDEEMED
    assert client_answer(store, cookie(TOKEN), redeem_of(TOKEN)) == REDEEMED
    # A check after the redeem still says yes while the admission is valid.
    assert client_answer(store, cookie(TOKEN)) == {"allow": True}
    assert client_answer(store, cookie(TOKEN), request_time=(NOW_S + 60) * 1000) == {"allow": False}
    redeemed = store.item(TOKEN_ID)
    assert redeemed is not None and redeemed[REDEEMED_ATTRIBUTE] == {"N": str(NOW_S)}
    # Another visitor's admission is untouched by ours.
    assert client_answer(store, cookie(TOKEN), redeem_of(f"{OTHER_ID}.9")) == {"allow": True}
    # Once redeemed, the refusal says so even after the admission expired.
    late = (NOW_S + 61) * 1000
    assert client_answer(store, {}, redeem_of(TOKEN), request_time=late) == REDEEMED


@pytest.mark.parametrize("token", ["", "junk", f"{TOKEN_ID}.", f"{TOKEN_ID}\n.1"])
def test_an_unknown_or_unusable_token_is_a_plain_no(token: str) -> None:
    store = Store(visitor_item(TOKEN_ID, NOW_S + 60))
    assert client_answer(store, cookie(token)) == {"allow": False}
    assert client_answer(store, {}, {CLIENT_TOKEN_PARAMETER: token}) == {"allow": False}
    assert client_answer(store, cookie(TOKEN), redeem_of(token)) == {"allow": False}
    assert client_answer(store, {}, redeem_of(f"{OTHER_ID}.5")) == {"allow": False}
    assert REDEEMED_ATTRIBUTE not in (store.item(TOKEN_ID) or {})


COOKIE_ONLY_REDEEMS = [
    # (case, headers, query): redeem=1 without `token` in the query, as a page's navigation or
    # <img> sends it with the visitor's cookie.
    ("the cookie", cookie(TOKEN), REDEEM),
    ("the cookie and other parameters", cookie(TOKEN), {**REDEEM, "utm_source": "mail"}),
    ("a token parameter in another case", cookie(TOKEN), {**REDEEM, "Token": TOKEN}),
    ("the beekeeper_token parameter", cookie(TOKEN), {**REDEEM, "beekeeper_token": TOKEN}),
    ("an app's token header", {TOKEN_HEADER: TOKEN}, REDEEM),
    ("nothing", {}, REDEEM),
]


@pytest.mark.parametrize(
    ("case", "headers", "query"), COOKIE_ONLY_REDEEMS, ids=[c[0] for c in COOKIE_ONLY_REDEEMS]
)
def test_a_redeem_without_the_token_in_the_query_writes_nothing_and_says_to_send_it(
    case: str, headers: dict[str, str], query: dict[str, str]
) -> None:
    """The cookie rides on any page's navigation (and a same-site page's <img>): a redeem it
    could make would let any page spend the visitor's one redeem before the shop does."""
    store = Store(visitor_item(TOKEN_ID, NOW_S + 60))
    before = store.item(TOKEN_ID)
    for _ in range(2):
        status, answer = store.client(headers, query)
        assert (status, answer) == (BAD_REQUEST_STATUS, REDEEM_WITHOUT_TOKEN_ANSWER)
    assert f"{CLIENT_TOKEN_PARAMETER}=<token>&redeem=1" in answer["message"]
    assert store.item(TOKEN_ID) == before  # not redeemed, not even checked
    # The shop's own redeem afterwards is the first.
    assert client_answer(store, {}, redeem_of(TOKEN)) == {"allow": True}
    assert client_answer(store, {}, redeem_of(TOKEN)) == REDEEMED


def test_the_plain_check_keeps_reading_the_cookie() -> None:
    """A shop's page checks the room's cookie with fetch(url, {credentials: "include"})."""
    store = Store(visitor_item(TOKEN_ID, NOW_S + 60))
    assert client_answer(store, cookie(TOKEN)) == {"allow": True}
    item = store.item(TOKEN_ID)
    assert item is not None and item[CHECKED_ATTRIBUTE] == {"N": str(NOW_S)}
    assert REDEEMED_ATTRIBUTE not in item


@pytest.mark.parametrize(
    "value", ["", "0", "2", "true", "yes", " 1", "1 ", "01", "1\n", "1,1", '1"}', "$x#set"]
)
def test_a_malformed_redeem_is_refused_with_what_to_send_and_redeems_nothing(value: str) -> None:
    store = Store(visitor_item(TOKEN_ID, NOW_S + 60))
    for headers, query in (
        ({}, {CLIENT_TOKEN_PARAMETER: TOKEN, CLIENT_REDEEM_PARAMETER: value}),
        (cookie(TOKEN), {CLIENT_REDEEM_PARAMETER: value}),
    ):
        status, answer = store.client(headers, query)
        assert (status, answer) == (BAD_REQUEST_STATUS, MALFORMED_REDEEM_ANSWER)
        assert "redeem=1" in answer["message"]
    assert REDEEMED_ATTRIBUTE not in (store.item(TOKEN_ID) or {})
    # The one good value still redeems afterwards: nothing was spent.
    assert client_answer(store, {}, redeem_of(TOKEN)) == {"allow": True}


def casings(name: str) -> set[str]:
    """Every spelling of `name` in upper and lower case letters."""
    return {"".join(c) for c in itertools.product(*[(ch.lower(), ch.upper()) for ch in name])}


def test_the_redeem_template_lists_every_other_casing_of_the_parameter() -> None:
    loop = template("_read-redeem.vtl").split("#foreach")[1]
    listed = re.findall(r"'([A-Za-z]+)'", loop[loop.index("[") : loop.index("]")])
    assert len(listed) == len(set(listed))
    assert set(listed) == casings(CLIENT_REDEEM_PARAMETER) - {CLIENT_REDEEM_PARAMETER}


@pytest.mark.parametrize(
    "name", sorted(casings(CLIENT_REDEEM_PARAMETER) - {CLIENT_REDEEM_PARAMETER})
)
def test_a_redeem_parameter_in_another_case_is_refused_not_taken_for_a_check(name: str) -> None:
    """`REDEEM=1` is neither a redeem (query names are case-sensitive) nor a plain check,
    which would allow every time: a 400 saying what to send, and nothing written."""
    store = Store(visitor_item(TOKEN_ID, NOW_S + 60))
    for query in ({name: CLIENT_REDEEM_VALUE}, {name: CLIENT_REDEEM_VALUE, **REDEEM}):
        status, answer = store.client({}, {CLIENT_TOKEN_PARAMETER: TOKEN, **query})
        assert (status, answer) == (BAD_REQUEST_STATUS, MALFORMED_REDEEM_ANSWER)
        assert "redeem=1" in answer["message"]
    assert CHECKED_ATTRIBUTE not in (store.item(TOKEN_ID) or {})
    assert REDEEMED_ATTRIBUTE not in (store.item(TOKEN_ID) or {})
    assert client_answer(store, {}, redeem_of(TOKEN)) == {"allow": True}  # nothing was spent


def test_other_parameters_leave_the_check_alone() -> None:
    store = Store(visitor_item(TOKEN_ID, NOW_S + 60))
    query = {"redeemed": "1", "redeem_": "1", "xredeem": "1", "utm_source": "mail"}
    assert client_answer(store, cookie(TOKEN), query) == {"allow": True}
    assert client_answer(store, {}, {**query, **redeem_of(TOKEN)}) == {"allow": True}
    assert client_answer(store, {}, {**query, **redeem_of(TOKEN)}) == REDEEMED


def test_a_throttled_client_check_is_the_rooms_trouble() -> None:
    for query in ({}, redeem_of(TOKEN)):
        for kind in ("ProvisionedThroughputExceededException", "ThrottlingException"):
            body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{kind}"})
            data = RenderInput(body=body, headers=cookie(TOKEN), query=query)
            answer = render_response(template(refusal("client")), data)
            assert (answer.status, json.loads(answer.text)) == (ERROR_STATUS, {"allow": False})


def test_waiting_answer_has_the_contracts_fields_and_types() -> None:
    answer = polling_answer([status_item(admitted_total=1000, rate=60, slowed=True)])
    assert answer == {
        "allow": False,
        "state": "waiting",
        "turn": 1234,  # the ordinal: the serving number at which the visitor's turn comes
        "position": 234,
        "eta_seconds": 234,
        "poll_after": 116,
        "rate": 60,
        "slowed": True,
        "updated_at": 1_763_779_990,
    }


@pytest.mark.parametrize(
    ("ordinal", "admitted_total", "rate"),
    [
        (1234, 1000, 60),
        (1234, 1234, 60),  # our turn: position stays at least 1
        (1234, 1300, 60),  # passed a little (queue reordering): still waiting, position 1
        (1, 0, 1),
        (999_999_999_999, 0, 300_000),
        (5_000_000, 1, 30_000),
        (10_009, 10_000, 100_000),
    ],
)
def test_waiting_numbers_follow_the_python_rule(
    ordinal: int, admitted_total: int, rate: int
) -> None:
    token = f"{TOKEN_ID}.{ordinal}"
    item = status_item(
        str(ordinal % 10), admitted_total=admitted_total, rate=rate, arrivals_total=ordinal + 1
    )
    answer = polling_answer([item], token)
    position = polling.position(ordinal, admitted_total)
    eta = polling.eta_seconds(position, rate)
    assert answer["position"] == position
    assert answer["eta_seconds"] == eta
    assert answer["poll_after"] == polling.poll_after_seconds(position, rate)
    assert answer["poll_after"] <= 5 or eta > 10
    assert answer["poll_after"] >= 120 or eta < 240


def test_poll_after_bounds() -> None:
    assert polling.poll_after_seconds(1, 60) == polling.POLL_AFTER_MIN_SECONDS <= 5
    assert polling.poll_after_seconds(10, 60) <= 5
    assert polling.poll_after_seconds(3600, 60) == polling.POLL_AFTER_MAX_SECONDS >= 120
    # At the front, however slow the rate, a visitor polls every few seconds: the next slot
    # may be theirs.
    assert polling.poll_after_seconds(1, 1) == polling.POLL_AFTER_MIN_SECONDS
    assert polling.poll_after_seconds(2, 1) == 30


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        (
            [status_item(enabled=False)],
            {
                "allow": False,
                "state": "room_off",
                "poll_after": polling.POLL_AFTER_ROOM_OFF_SECONDS,
            },
        ),
        ([status_item(admitted_total=1234 + 1001, rate=60)], {"allow": False, "state": "unknown"}),
        ([status_item(admitted_total=1234 + 3001, rate=200)], {"allow": False, "state": "unknown"}),
        ([status_item(admitted_total=1234 + 3000, rate=200)], None),  # 15 minutes' margin
    ],
)
def test_room_off_and_unknown(items: list[dict[str, Any]], expected: dict | None) -> None:
    answer = polling_answer(items)
    if expected is None:
        assert answer["state"] == "waiting" and answer["position"] == 1
    else:
        assert answer == expected


def test_without_a_status_item_the_visitor_waits_with_no_estimate() -> None:
    answer = polling_answer([])
    assert answer == {
        "allow": False,
        "state": "waiting",
        "turn": 1234,
        "position": 1234,
        "eta_seconds": 0,
        "poll_after": polling.POLL_AFTER_WITHOUT_RATE_SECONDS,
        "rate": 0,
        "slowed": False,
        "updated_at": 0,
    }
    # docs/vtl.md says the same.
    docs = " ".join((VTL_DIR.parent / "docs" / "vtl.md").read_text(encoding="utf-8").split())
    assert f"and `poll_after: {polling.POLL_AFTER_WITHOUT_RATE_SECONDS}`" in docs


def test_admitted_visitor_is_let_through_even_when_the_room_is_off() -> None:
    items = [status_item(enabled=False), visitor_item(TOKEN_ID, NOW_S + 60)]
    assert polling_answer(items)["allow"] is True


def test_status_with_missing_or_fractional_numbers_still_answers() -> None:
    item = status_item(rate=37.5)
    del item["updated_at"]
    answer = polling_answer([item])
    assert answer["rate"] == 37 and answer["updated_at"] == 0
    no_rate = status_item()
    del no_rate["rate"]
    assert polling_answer([no_rate])["poll_after"] == polling.POLL_AFTER_WITHOUT_RATE_SECONDS


# -- properties over arbitrary input --------------------------------------------------------


def _token_from_key(key: str) -> bool:
    return key == NO_VISITOR_KEY or re.fullmatch(r"v#[A-Za-z0-9_-]{22}", key) is not None


@settings(max_examples=80, deadline=None)
@given(headers=HEADERS, query=QUERIES)
def test_any_request_renders_a_well_formed_dynamodb_request(headers, query) -> None:
    for route in VISITOR_ROUTES:
        keys = request_keys(route, headers, query)
        assert _token_from_key(keys[0])
        if len(keys) == 2:
            assert re.fullmatch(r"status#[0-9]", keys[1])


@settings(max_examples=80, deadline=None)
@given(
    headers=HEADERS,
    query=QUERIES,
    expires_offset=st.integers(-5, 5),
    admitted_id=st.sampled_from([TOKEN_ID, OTHER_ID]),
)
def test_any_request_gets_a_json_answer_and_allow_only_when_admitted(
    headers, query, expires_offset, admitted_id
) -> None:
    expires_at = NOW_S + expires_offset
    item = visitor_item(admitted_id, expires_at)
    keys = request_keys("polling", headers, query)
    found = keys[0] == f"v#{admitted_id}"
    copy = keys[1][-1] if len(keys) == 2 else "0"
    body = {"Responses": {TABLE: ([item] if found else []) + [status_item(copy)]}}
    answer = respond("polling", body, headers, query=query)
    assert isinstance(answer["allow"], bool)
    assert answer["allow"] is (found and expires_at > NOW_S)
    # /client: a check, a redeem (twice: the second is refused) or a malformed redeem.
    store = Store(item)
    found = request_keys("client", headers, query)[0] == f"v#{admitted_id}"
    valid = found and expires_at > NOW_S
    state = redeem_state(query)
    for attempt in range(2):
        status, answer = store.client(headers, query)
        if state == "malformed":
            assert (status, answer) == (BAD_REQUEST_STATUS, MALFORMED_REDEEM_ANSWER)
        elif state == "without_token":
            assert (status, answer) == (BAD_REQUEST_STATUS, REDEEM_WITHOUT_TOKEN_ANSWER)
        elif state == "redeem" and attempt == 1 and valid:
            assert (status, answer) == (200, REDEEMED)
        else:
            assert (status, answer) == (200, {"allow": valid})


def test_request_time_may_come_as_a_number_or_as_text() -> None:
    store = Store(visitor_item(TOKEN_ID, NOW_S + 1))
    for now in (NOW_MS, str(NOW_MS)):
        assert client_answer(store, cookie(TOKEN), request_time=now) == {"allow": True}


def test_the_front_of_the_line_waits_at_most_one_slot_and_polls_often() -> None:
    # The visitor's own ordinal is 1234: with 1233 admitted nobody is ahead of them.
    answer = polling_answer([status_item(admitted_total=1233, rate=600)])
    assert answer["position"] == 1 and answer["eta_seconds"] == 1
    assert answer["poll_after"] == polling.POLL_AFTER_MIN_SECONDS
    slow = polling_answer([status_item(admitted_total=1233, rate=1)])
    assert slow["eta_seconds"] == 60 and slow["poll_after"] == polling.POLL_AFTER_MIN_SECONDS


UNREADABLE_REQUEST_TIMES = [
    None,  # null: $!context renders nothing
    "",
    "abc",
    f"{NOW_MS}abc",
    f"abc{NOW_MS}",
    "-1",
    "1.7e12",
    f" {NOW_MS}",
    f"{NOW_MS}.5",
    "1" * 16,  # more digits than any request time until the year 33658
]


@pytest.mark.parametrize("request_time", UNREADABLE_REQUEST_TIMES)
def test_an_unreadable_request_time_makes_every_admission_expired(request_time: object) -> None:
    # Far in the future: with the old rule any time parsed as 0 and this would be allowed.
    item = visitor_item(TOKEN_ID, NOW_S + 10 * 365 * 86400)
    body = {"Responses": {TABLE: [status_item(), item]}}
    data = RenderInput(
        body=json.dumps(body), headers=cookie(TOKEN), context={"requestTimeEpoch": request_time}
    )
    answer = json.loads(render(template(registered("polling").vtl.response_template), data))
    assert answer == {"allow": False, "state": "expired"}
    store = Store(item)
    for query in ({}, redeem_of(TOKEN)):
        answer = client_answer(store, cookie(TOKEN), query, request_time=request_time)
        assert answer == {"allow": False}, (query, request_time)
    assert REDEEMED_ATTRIBUTE not in (store.item(TOKEN_ID) or {})


@settings(max_examples=150, deadline=None)
@given(
    request_time=st.one_of(
        st.none(),
        st.text(max_size=20),
        st.integers(-(10**16), 10**16),
        st.integers(0, 10**16).map(str),
    ),
    expires_at=st.integers(0, 10**12),
)
def test_allow_only_for_an_all_digit_request_time_before_expiry(
    request_time: object, expires_at: int
) -> None:
    text = "" if request_time is None else str(request_time)
    readable = re.fullmatch(r"[0-9]{1,15}", text) is not None
    expected = readable and expires_at * 1000 > int(text)
    store = Store(visitor_item(TOKEN_ID, expires_at))
    assert client_answer(store, cookie(TOKEN), request_time=request_time) == {"allow": expected}


# -- one definition of a well-formed cookie, one rule for "unknown" ---------------------------


def template_reading(headers: dict[str, str]) -> tuple[str, str | None]:
    """(state, token) as the /polling templates read the request's cookies."""
    (key, *_) = request_keys("polling", headers)
    if key == NO_VISITOR_KEY:
        return respond("polling", {"Responses": {TABLE: []}}, headers)["state"], None
    item = visitor_item(key.removeprefix("v#"), NOW_S + 60)
    answer = respond("polling", {"Responses": {TABLE: [item]}}, headers)
    if "token" in answer:  # an app's header: the token in the answer, not in the URL
        return "ok", answer["token"]
    return "ok", answer["origin"].rsplit("beekeeper_token=", 1)[1]


def python_reading(headers: dict[str, str]) -> tuple[str, str | None]:
    cookie_headers = [value for name, value in headers.items() if name.lower() == "cookie"]
    token_headers = [v for name, v in headers.items() if name.lower() == TOKEN_HEADER.lower()]
    reading = cookies.read_token(cookie_headers, len(headers), token_headers)
    return reading.state, None if reading.token is None else str(reading.token)


@pytest.mark.parametrize(
    ("case", "headers", "expected"), COOKIE_CASES, ids=[case[0] for case in COOKIE_CASES]
)
def test_the_marketing_link_reads_every_cookie_case_as_polling_does(
    case: str, headers: dict[str, str], expected: str
) -> None:
    state, token = python_reading(headers)
    assert (token if state == "ok" else state) == expected
    assert (state, token) == template_reading(headers)


ODD_TEXT = st.text(alphabet='ab=; \t\n\x0b\x1f"\\', max_size=12)
COOKIE_PART = st.one_of(
    st.tuples(st.sampled_from([COOKIE_NAME, f" {COOKIE_NAME}\t", "x", ""]), COOKIE_VALUES).map(
        lambda pair: f"{pair[0]}={pair[1]}"
    ),
    VALID_TOKENS.map(lambda t: f'{COOKIE_NAME}="{t}"'),
    VALID_TOKENS.map(lambda t: f"{COOKIE_NAME}= {t}\x0b"),
    ODD_TEXT,
)
ODD_HEADERS = st.dictionaries(
    st.sampled_from(["Cookie", "cookie", "COOKIE", "X-Other"]),
    st.lists(COOKIE_PART, max_size=5).map(";".join),
    max_size=3,
)
# An app's header beside any cookies: well-formed, padded, or not a token at all.
APP_HEADERS = st.tuples(
    st.one_of(HEADERS, ODD_HEADERS),
    st.sampled_from([TOKEN_HEADER, TOKEN_HEADER.lower(), TOKEN_HEADER.upper()]),
    st.one_of(VALID_TOKENS, VALID_TOKENS.map(lambda t: f" {t}\t"), COOKIE_VALUES, ODD_TEXT),
).map(lambda parts: {**parts[0], parts[1]: parts[2]})


@settings(max_examples=150, deadline=None)
@given(headers=st.one_of(HEADERS, ODD_HEADERS, APP_HEADERS))
def test_the_marketing_link_and_polling_agree_on_any_cookie(headers: dict[str, str]) -> None:
    assert python_reading(headers) == template_reading(headers)


def test_the_templates_limits_are_the_cookie_rules() -> None:
    fragment = (VTL_DIR / "_read-token.vtl").read_text(encoding="utf-8")
    assert f"#if($requestParams.header.size() <= {cookies.MAX_HEADERS})" in fragment
    assert f"$cookieHeader.split(';', {cookies.MAX_COOKIE_PARTS})" in fragment
    assert f".trim() == '{COOKIE_NAME}')" in fragment
    assert f"$headerName.toLowerCase() == '{TOKEN_HEADER.lower()}'" in fragment


@settings(max_examples=150, deadline=None)
@given(
    ordinal=st.integers(1, 10**7),
    behind=st.integers(-(10**6), 5 * 10**6),
    rate=st.one_of(st.integers(0, 300_000), st.sampled_from([0, 1, 66, 67, 300_000])),
)
def test_polling_calls_a_token_unknown_by_the_one_rule(
    ordinal: int, behind: int, rate: int
) -> None:
    admitted_total = max(0, ordinal + behind)
    token = f"{TOKEN_ID}.{ordinal}"
    status = status_item(
        str(ordinal % 10),
        admitted_total=admitted_total,
        arrivals_total=admitted_total + 10,
        rate=rate,
    )
    answer = polling_answer([status], token=token)
    assert (answer["state"] == "unknown") is polling.is_unknown(ordinal, admitted_total, rate)


# -- /jwks.json -----------------------------------------------------------------------------

JWK = '{"alg":"ES256","crv":"P-256","kid":"K1","kty":"EC","use":"sig","x":"AAA","y":"BBB"}'


def jwks_answer(entries: list[tuple[str, int]], now: object = NOW_MS) -> Any:
    item = {
        "pk": {"S": "ticket-keys"},
        "published": {
            "L": [
                {"M": {"kid": {"S": str(i)}, "jwk": {"S": jwk}, "retire_at": {"N": str(retire)}}}
                for i, (jwk, retire) in enumerate(entries)
            ]
        },
    }
    data = RenderInput(body=json.dumps({"Item": item}), context={"requestTimeEpoch": now})
    return json.loads(render(template(registered("jwks").vtl.response_template), data))


def test_jwks_publishes_current_keys_and_retires_them_by_the_request_time() -> None:
    later = JWK.replace("K1", "K2")
    answer = jwks_answer([(JWK, 0), (later, NOW_S + 1), (JWK.replace("K1", "K3"), NOW_S)])
    assert [key["kid"] for key in answer["keys"]] == ["K1", "K2"]  # K3 retired at NOW_S
    # A request time that can not be read publishes every key: never refuse valid tickets.
    assert len(jwks_answer([(JWK, 0), (later, NOW_S)], now="")["keys"]) == 2


@pytest.mark.parametrize(
    "stored", ['{"kid":"x"}, {"evil": true}', '{"kid": "spaced"}', 'x"}]}', "", "[]"]
)
def test_jwks_publishes_nothing_that_is_not_a_plain_public_jwk(stored: str) -> None:
    answer = jwks_answer([(stored, 0), (JWK, 0)])
    assert answer == {"keys": [json.loads(JWK)]}


def test_jwks_without_an_item_is_an_empty_key_set() -> None:
    data = RenderInput(body="{}", context={"requestTimeEpoch": NOW_MS})
    assert json.loads(render(template(registered("jwks").vtl.response_template), data)) == {
        "keys": []
    }
