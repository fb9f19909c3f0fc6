"""The marketing link against moto: new, returning and refused visitors."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import Stubber

from beekeeper.core.datamodel import CONFIG_FRESH_SECONDS, TOKEN_PATTERN, Token
from beekeeper.core.polling import eta_seconds
from beekeeper.room.producer import Producer
from beekeeper.room.room_state import write_config
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
    assert response["headers"]["Cache-Control"] == "no-store"
    cookie = cookie_attributes(response)
    # The page learns its turn (the ordinal) from the fragment: it can not read the cookie.
    assert response["headers"]["Location"] == f"room#turn={Token.parse(cookie['value']).ordinal}"  # type: ignore[union-attr]
    assert TOKEN_PATTERN.fullmatch(cookie["value"])
    assert {"HttpOnly", "Secure"} <= set(cookie)
    assert cookie["SameSite"] == "Lax"
    # The public address's root, though the API's stage (/prod) is in the origin's path.
    assert cookie["Path"] == "/"
    assert Token.parse(cookie["value"]).ordinal == 1  # type: ignore[union-attr]
    # No config yet: rate 60/min, so position 1 waits a second; + 60 min validity + 30 min slack.
    assert int(cookie["Max-Age"]) == 1 + 3600 + 1800
    # The wait is the one formula the template and `beekeeper status` use (core/polling.py).
    assert int(cookie["Max-Age"]) == eta_seconds(1, 60) + 3600 + 1800
    assert aws.queue_bodies() == [cookie["value"]]


def join(p: Producer) -> int:
    return Token.parse(cookie_attributes(p.handle(event()))["value"]).ordinal  # type: ignore[union-attr]


def test_in_a_quiet_room_ordinals_follow_the_arrival_order_exactly(
    aws: Aws, clock: FakeClock
) -> None:
    first, second = producer(aws, clock, arrival_shards=4), producer(aws, clock, arrival_shards=4)
    ordinals = []
    for i in range(40):
        clock.now += 0.5  # two visitors a second, served by two containers in turn
        ordinals.append(join(first if i % 3 else second))
    assert ordinals == list(range(1, 41))
    counts = [int(aws.item(f"arrivals#{k}")["n"]["N"]) for k in range(4)]  # type: ignore[index]
    assert counts == [10, 10, 10, 10]


def test_a_crowd_spreads_over_the_shards_without_repeats(aws: Aws, clock: FakeClock) -> None:
    p = producer(aws, clock, arrival_shards=4, rate=6000)
    ordinals = [join(p) for _ in range(60)]  # 60 in the same instant: a crowd
    assert len(set(ordinals)) == 60
    assert max(ordinals) <= 60 + 4 * 3  # balanced shards keep ordinals close to arrivals
    counts = [int(aws.item(f"arrivals#{k}")["n"]["N"]) for k in range(4)]  # type: ignore[index]
    assert sum(counts) == 60 and max(counts) - min(counts) <= 3


def record_calls(aws: Aws) -> list[str]:
    calls: list[str] = []
    for client in (aws.dynamodb, aws.sqs):
        client.meta.events.register("before-call.*.*", lambda model, **_: calls.append(model.name))
    return calls


def test_a_new_visitor_in_a_busy_room_costs_two_aws_calls(aws: Aws, clock: FakeClock) -> None:
    p = producer(aws, clock, rate=6000)
    for _ in range(30):
        join(p)  # 30 in a second: busy
    calls = record_calls(aws)
    for _ in range(5):
        p.handle(event())
    assert calls == ["UpdateItem", "SendMessage"] * 5


def test_a_crowd_in_a_slow_room_gets_exact_places(aws: Aws, clock: FakeClock) -> None:
    """A room admitting 20 a second or fewer: a place is seconds of its line, and a crowd's
    ordinals spread over the shards would be a few rounds of shards out of arrival order."""
    p = producer(aws, clock, arrival_shards=4, rate=60)
    assert [join(p) for _ in range(60)] == list(range(1, 61))  # 60 in the same instant


def test_a_new_visitor_in_a_quiet_room_costs_three_for_an_exact_place(
    aws: Aws, clock: FakeClock
) -> None:
    p = producer(aws, clock)
    join(p)  # reads the config
    calls = record_calls(aws)
    for _ in range(3):
        clock.now += 1
        p.handle(event())
    assert calls == ["BatchGetItem", "UpdateItem", "SendMessage"] * 3


def test_a_visitor_who_joins_a_minute_without_consumers_wakes_one(
    aws: Aws, clock: FakeClock
) -> None:
    minute = int(clock() // 60)
    aws.dynamodb.put_item(
        TableName=aws.table,
        Item={"pk": {"S": f"minute#{minute}"}, "consumers": {"N": "0"}, "claimed_at": {"N": "1"}},
    )
    woken: list[dict[str, Any]] = []
    p = producer(aws, clock)
    p.invoke_consumer = woken.append
    clock.now += 0.2
    join(p)
    join(p)
    other = producer(aws, clock)
    other.invoke_consumer = woken.append
    join(other)  # another container: the minute already has its consumer
    assert len(woken) == 1
    assert woken[0]["minute"] == minute and woken[0]["consumers"] == 1 and woken[0]["woken"]
    assert aws.item(f"minute#{minute}")["woken_at"]  # type: ignore[index]


def test_a_minute_whose_trigger_started_consumers_wakes_none(aws: Aws, clock: FakeClock) -> None:
    minute = int(clock() // 60)
    aws.dynamodb.put_item(
        TableName=aws.table,
        Item={"pk": {"S": f"minute#{minute}"}, "consumers": {"N": "2"}, "claimed_at": {"N": "1"}},
    )
    woken: list[dict[str, Any]] = []
    p = producer(aws, clock)
    p.invoke_consumer = woken.append
    join(p)
    assert woken == []


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
        assert response["statusCode"] == 302
        assert response["headers"]["Location"] == f"room#turn={Token.parse(VALID).ordinal}"  # type: ignore[union-attr]
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


def test_room_off_gives_a_place_without_work_that_the_line_lets_in_with_a_ticket(
    aws: Aws, clock: FakeClock
) -> None:
    """Off: nobody reaches the shop without a ticket (a shop that checks them would refuse
    the visitor); a new visitor gets a place at once, no work asked, and the consumers let the
    line in unpaced, so the page takes them on to the shop with their ticket moments later."""
    settings = room(join_work=1000)
    write_config(aws.dynamodb, aws.table, settings, now=clock(), enabled=False)
    p = producer(aws, clock, join_work=1000, gate=aws.gate())
    response = p.handle(event())
    assert response["statusCode"] == 302
    assert response["headers"]["Location"].startswith("room#turn=")
    assert "Set-Cookie" in response["headers"]
    assert len(aws.queue_bodies()) == 1


def test_switching_off_takes_effect_after_the_cache_expires(aws: Aws, clock: FakeClock) -> None:
    p = producer(aws, clock, join_work=1000, gate=aws.gate())
    assert p.handle(event())["headers"]["Location"].startswith("work#")  # the work first
    write_config(aws.dynamodb, aws.table, room(), now=clock(), enabled=False)
    clock.now += CONFIG_FRESH_SECONDS
    assert p.handle(event())["headers"]["Location"].startswith("room#turn=")


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


def test_a_closed_event_is_told_in_the_rooms_own_look(aws: Aws, clock: FakeClock) -> None:
    p = producer(aws, clock, display_name="Autumn Drop", accent_colour="#7a1f5f")
    write_config(aws.dynamodb, aws.table, p.settings, now=clock(), closed=True, message="Sold out")
    response = p.handle(event())
    assert response["statusCode"] == 200 and "Set-Cookie" not in response["headers"]
    body = response["body"]
    assert "<h1>Autumn Drop</h1>" in body and "--accent:#7a1f5f" in body
    assert "<h2>This event is over</h2>" in body and "<p>Sold out</p>" in body
