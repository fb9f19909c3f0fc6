"""The marketing link against moto: new, returning and refused visitors."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import Stubber

from beekeeper.core.datamodel import TOKEN_PATTERN, Token
from beekeeper.core.polling import eta_seconds
from beekeeper.lambdas.producer import CONFIG_TTL_SECONDS
from beekeeper.lambdas.room_state import write_config
from tests.support.pipeline import Aws, FakeClock, producer, room

VALID = "A" * 22 + ".42"


def event(
    method: str = "GET",
    headers: dict[str, str] | None = None,
    multi: dict[str, list[str]] | None = None,
    stage_path: str = "/prod/beekeeper",
) -> dict[str, Any]:
    return {
        "httpMethod": method,
        "path": "/beekeeper",
        "headers": headers or {"Host": "abc.execute-api.us-east-1.amazonaws.com"},
        "multiValueHeaders": multi,
        "requestContext": {"path": stage_path},
    }


def cookie_attributes(response: dict[str, Any]) -> dict[str, str]:
    parts = [p.strip() for p in response["headers"]["Set-Cookie"].split(";")]
    attributes = {}
    for part in parts[1:]:
        name, _, value = part.partition("=")
        attributes[name] = value
    attributes["value"] = parts[0].partition("=")[2]
    return attributes


def test_new_visitor_gets_a_token_a_message_and_a_redirect(aws: Aws, clock: FakeClock) -> None:
    response = producer(aws, clock).handle(event())
    assert response["statusCode"] == 302
    assert response["headers"]["Location"] == "room"
    assert response["headers"]["Cache-Control"] == "no-store"
    cookie = cookie_attributes(response)
    assert TOKEN_PATTERN.fullmatch(cookie["value"])
    assert {"HttpOnly", "Secure"} <= set(cookie)
    assert cookie["SameSite"] == "Lax"
    assert cookie["Path"] == "/prod"
    ordinal = Token.parse(cookie["value"]).ordinal  # type: ignore[union-attr]
    assert 1 <= ordinal <= 8  # first arrival on one of the 8 shards
    # No config yet: rate 60/min, so position p waits p seconds; + 60 min validity + 30 min slack.
    assert int(cookie["Max-Age"]) == ordinal + 3600 + 1800
    # The wait is the one formula the template and `beekeeper status` use (core/polling.py).
    assert int(cookie["Max-Age"]) == eta_seconds(ordinal, 60) + 3600 + 1800
    assert aws.queue_bodies() == [cookie["value"]]


def test_ordinals_interleave_the_shards_without_repeats(aws: Aws, clock: FakeClock) -> None:
    p = producer(aws, clock, arrival_shards=4)
    ordinals = []
    for _ in range(40):
        value = cookie_attributes(p.handle(event()))["value"]
        ordinals.append(Token.parse(value).ordinal)  # type: ignore[union-attr]
    assert len(set(ordinals)) == 40
    assert max(ordinals) <= 40 + 4 * 3  # balanced shards keep ordinals close to arrivals
    counts = [int(aws.item(f"arrivals#{k}")["n"]["N"]) for k in range(4)]  # type: ignore[index]
    assert sum(counts) == 40 and max(counts) - min(counts) <= 3


def test_a_new_visitor_costs_two_aws_calls_once_the_config_is_cached(
    aws: Aws, clock: FakeClock
) -> None:
    p = producer(aws, clock)
    p.handle(event())  # first request reads the config
    calls: list[str] = []
    for client in (aws.dynamodb, aws.sqs):
        client.meta.events.register("before-call.*.*", lambda model, **_: calls.append(model.name))
    for _ in range(5):
        p.handle(event())
    assert calls == ["UpdateItem", "SendMessage"] * 5


def test_returning_visitor_keeps_their_place(aws: Aws, clock: FakeClock) -> None:
    cookies = [
        f"beekeeper_token={VALID}",
        f"theme=dark; beekeeper_token={VALID}; other=1",
        f"beekeeper_token=junk; beekeeper_token={VALID}",
        f"beekeeper_token={VALID}\n",  # trimmed as /polling trims it (Java's trim)
    ]
    p = producer(aws, clock)
    for header in cookies:
        response = p.handle(event(headers={"cookie": header}))
        assert response["statusCode"] == 302 and response["headers"]["Location"] == "room"
        assert "Set-Cookie" not in response["headers"]
    multi = p.handle(event(multi={"Cookie": ["a=1", f"beekeeper_token={VALID}"]}))
    assert "Set-Cookie" not in multi["headers"]
    assert aws.queue_bodies() == []


@pytest.mark.parametrize(
    "header",
    [
        "beekeeper_token=",
        "beekeeper_token=short.1",
        f'beekeeper_token="{VALID}"',  # /polling calls a quoted value malformed, and so do we
        f"my_beekeeper_token={VALID}",
        f"beekeeper_token_old={VALID}",
        f"beekeeper_token={VALID}x",
        "session=abc",
        "beekeeper_token",
    ],
)
def test_missing_or_malformed_cookie_gets_a_new_place(
    aws: Aws, clock: FakeClock, header: str
) -> None:
    response = producer(aws, clock).handle(event(headers={"Cookie": header}))
    assert response["statusCode"] == 302
    assert cookie_attributes(response)["value"] != VALID
    assert len(aws.queue_bodies()) == 1


def test_room_off_sends_straight_to_the_origin(aws: Aws, clock: FakeClock) -> None:
    settings = room()
    write_config(aws.dynamodb, aws.table, settings, now=clock(), enabled=False)
    response = producer(aws, clock).handle(event())
    assert response["statusCode"] == 302
    assert response["headers"]["Location"] == settings.origin
    assert "Set-Cookie" not in response["headers"]
    assert aws.queue_bodies() == []


def test_switching_off_takes_effect_after_the_cache_expires(aws: Aws, clock: FakeClock) -> None:
    p = producer(aws, clock)
    assert "Set-Cookie" in p.handle(event())["headers"]
    write_config(aws.dynamodb, aws.table, room(), now=clock(), enabled=False)
    clock.now += CONFIG_TTL_SECONDS
    assert p.handle(event())["headers"]["Location"] == room().origin


def test_other_methods_are_refused(aws: Aws, clock: FakeClock) -> None:
    response = producer(aws, clock).handle(event(method="POST"))
    assert response["statusCode"] == 405
    assert response["headers"]["Allow"] == "GET"
    assert aws.queue_bodies() == []


@pytest.mark.parametrize("bad", [{}, {"httpMethod": None}, [], "GET"])
def test_an_event_that_is_not_a_request_gets_400(aws: Aws, clock: FakeClock, bad: Any) -> None:
    assert producer(aws, clock).handle(bad)["statusCode"] == 400


def test_plain_http_loopback_leaves_secure_out(aws: Aws, clock: FakeClock) -> None:
    p = producer(aws, clock)
    local = event(
        headers={"Host": "127.0.0.1:8080", "X-Forwarded-Proto": "http"}, stage_path="/beekeeper"
    )
    cookie = cookie_attributes(p.handle(local))
    assert "Secure" not in cookie and cookie["Path"] == "/"
    remote = event(headers={"Host": "shop.example.com", "X-Forwarded-Proto": "http"})
    assert "Secure" in cookie_attributes(p.handle(remote))


def _queue_down(aws: Aws) -> Stubber:
    stubber = Stubber(aws.sqs)
    stubber.add_client_error("send_message", "ServiceUnavailable", http_status_code=503)
    stubber.activate()
    return stubber


def test_queue_unavailable_gives_503_without_a_cookie(
    aws: Aws, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    p = producer(aws, clock)
    with _queue_down(aws):
        response = p.handle(event())
    assert response["statusCode"] == 503
    assert response["headers"]["Retry-After"] == "30"
    assert "Set-Cookie" not in response["headers"]
    assert "<h1>" in response["body"]
    assert any("place in line" in r.message for r in caplog.records)


def test_fail_open_sends_to_the_origin_when_the_queue_is_down(aws: Aws, clock: FakeClock) -> None:
    p = producer(aws, clock, fail_open=True)
    with _queue_down(aws):
        response = p.handle(event())
    assert response["statusCode"] == 302
    assert response["headers"]["Location"] == room().origin
    assert "Set-Cookie" not in response["headers"]


def test_table_unavailable_on_first_read_gives_503(aws: Aws, clock: FakeClock) -> None:
    stubber = Stubber(aws.dynamodb)
    stubber.add_client_error("batch_get_item", "InternalServerError", http_status_code=500)
    with stubber:
        response = producer(aws, clock).handle(event())
    assert response["statusCode"] == 503
