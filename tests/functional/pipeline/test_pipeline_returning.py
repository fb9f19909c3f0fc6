"""A returning visitor at the marketing link, against moto: the shop, their place, or a new one.

The same cases over HTTP in a local room: tests/integration/test_local_returning_visitors.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import Stubber

from beekeeper.core import polling, telemetry
from beekeeper.core.datamodel import ADMITTED_COUNTER_KEY, Token, visitor_key
from beekeeper.room.producer import Producer
from beekeeper.room.returning import Way, classify
from beekeeper.room.room_state import RoomConfig, RoomSnapshot, write_config
from tests.support.pipeline import Aws, FakeClock, producer, room

TOKEN = Token("R" * 22, 1234)


class Counted:
    """A MetricSink double recording what the producer counted."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def count(self, metric: telemetry.Metric, value: int = 1) -> None:
        self.counts[metric.name] = self.counts.get(metric.name, 0) + value

    def level(self, metric: telemetry.Metric, value: float) -> None:
        raise AssertionError("the producer records no levels")

    def sample(self, metric: telemetry.Metric, value: float) -> None:
        raise AssertionError("the producer records no distribution")

    def flush_ended(self) -> None:
        pass

    def flush(self) -> None:
        pass


def click(p: Producer, token: Token | str) -> dict[str, Any]:
    return p.handle(
        {
            "httpMethod": "GET",
            "path": "/beekeeper",
            "headers": {"Cookie": f"theme=dark; beekeeper_token={token}"},
            "requestContext": {"path": "/prod/beekeeper"},
        }
    )


def admit(aws: Aws, token: Token, expires_at: float) -> None:
    aws.dynamodb.put_item(
        TableName=aws.table,
        Item={
            "pk": {"S": visitor_key(token.id)},
            "expires_at": {"N": str(int(expires_at))},
            "ordinal": {"N": str(token.ordinal)},
        },
    )


def new_cookie(response: dict[str, Any]) -> str | None:
    header = response["headers"].get("Set-Cookie")
    return header.split(";")[0].partition("=")[2] if header else None


def test_an_admitted_visitor_goes_straight_to_the_shop(aws: Aws, clock: FakeClock) -> None:
    admit(aws, TOKEN, clock() + 60)
    metrics = Counted()
    response = click(producer(aws, clock, metrics=metrics, rate=60), TOKEN)
    assert response["statusCode"] == 302
    assert response["headers"]["Location"] == (
        f"https://shop.example.com/sale?beekeeper_token={TOKEN}"
    )
    assert new_cookie(response) is None and aws.queue_bodies() == []
    assert metrics.counts == {}


def test_an_expired_admission_gets_a_new_place(aws: Aws, clock: FakeClock) -> None:
    admit(aws, TOKEN, clock())  # expires_at equal to now is expired, as /polling says
    metrics = Counted()
    response = click(producer(aws, clock, metrics=metrics, rate=60), TOKEN)
    fresh = new_cookie(response)
    assert fresh is not None and fresh != str(TOKEN)
    assert response["headers"]["Location"] == f"room#turn={Token.parse(fresh).ordinal}"  # type: ignore[union-attr]
    assert aws.queue_bodies() == [fresh]
    assert metrics.counts == {"Arrivals": 1, "Rejoined": 1}


def test_a_token_the_line_passed_long_ago_gets_a_new_place(aws: Aws, clock: FakeClock) -> None:
    margin = polling.unknown_margin(60)
    aws.dynamodb.put_item(
        TableName=aws.table,
        Item={"pk": {"S": ADMITTED_COUNTER_KEY}, "n": {"N": str(TOKEN.ordinal + margin + 1)}},
    )
    metrics = Counted()
    response = click(producer(aws, clock, metrics=metrics, rate=60), TOKEN)
    assert new_cookie(response) not in (None, str(TOKEN))
    assert metrics.counts == {"Arrivals": 1, "Rejoined": 1}


def test_a_place_from_before_the_last_reset_gets_a_new_place(aws: Aws, clock: FakeClock) -> None:
    """`beekeeper reset` took the place: the link gives a new one rather than the page, which
    /polling would tell the place is gone (a loop between the two otherwise)."""
    write_config(aws.dynamodb, aws.table, room(), now=clock(), reset_ordinal=TOKEN.ordinal)
    metrics = Counted()
    response = click(producer(aws, clock, metrics=metrics, rate=60), TOKEN)
    fresh = new_cookie(response)
    assert fresh not in (None, str(TOKEN))
    assert metrics.counts == {"Arrivals": 1, "Rejoined": 1}


def test_a_reset_newer_than_the_producers_cached_config_gives_a_new_place(
    aws: Aws, clock: FakeClock
) -> None:
    """The page shows a reset as soon as /polling sees it and sends the visitor to the link:
    the producer's snapshot, read before the reset and fresh for seconds yet, must not send
    them back to the page whose place is gone."""
    metrics = Counted()
    p = producer(aws, clock, metrics=metrics, rate=60)
    p.handle({"httpMethod": "GET", "path": "/beekeeper", "headers": {}})  # config cached
    aws.queue_bodies()
    write_config(aws.dynamodb, aws.table, room(), now=clock(), reset_ordinal=TOKEN.ordinal)
    response = click(p, TOKEN)  # the same moment: the cached snapshot is still fresh
    fresh = new_cookie(response)
    assert fresh is not None and fresh != str(TOKEN)
    assert response["headers"]["Location"] == f"room#turn={Token.parse(fresh).ordinal}"  # type: ignore[union-attr]
    assert metrics.counts == {"Arrivals": 2, "Rejoined": 1}


def test_a_visitor_still_in_line_keeps_their_place(aws: Aws, clock: FakeClock) -> None:
    margin = polling.unknown_margin(60)
    aws.dynamodb.put_item(
        TableName=aws.table,
        Item={"pk": {"S": ADMITTED_COUNTER_KEY}, "n": {"N": str(TOKEN.ordinal + margin)}},
    )
    metrics = Counted()
    response = click(producer(aws, clock, metrics=metrics, rate=60), TOKEN)
    assert response["headers"]["Location"] == f"room#turn={TOKEN.ordinal}"
    assert new_cookie(response) is None and aws.queue_bodies() == []
    assert metrics.counts == {}


@pytest.mark.parametrize(
    ("read_before", "logged"),
    [
        (0, "they keep their place"),  # the visitor's item
        (1, "a returning visitor keeps the place"),  # the config, for a visitor still in line
    ],
    ids=["visitor", "config"],
)
def test_a_failed_read_keeps_the_visitors_place(
    aws: Aws, clock: FakeClock, caplog: pytest.LogCaptureFixture, read_before: int, logged: str
) -> None:
    p = producer(aws, clock, metrics=Counted(), rate=60)
    p.handle({"httpMethod": "GET", "path": "/beekeeper", "headers": {}})  # config cached
    aws.queue_bodies()
    with Stubber(aws.dynamodb) as stubber:
        for _ in range(read_before):
            stubber.add_response("get_item", {})  # the visitor's item: none, still in line
        stubber.add_client_error("get_item", "ProvisionedThroughputExceededException")
        response = click(p, TOKEN)
        stubber.assert_no_pending_responses()
    assert response["headers"]["Location"] == f"room#turn={TOKEN.ordinal}"
    assert new_cookie(response) is None
    assert any(logged in r.message for r in caplog.records)


@pytest.mark.parametrize(
    ("item", "admitted_total", "way", "reason"),
    [
        ({"expires_at": {"N": "1001"}}, 0, Way.SHOP, "admitted"),
        ({"expires_at": {"N": "1000"}}, 0, Way.NEW_PLACE, "expired"),
        ({"expires_at": {"N": "junk"}}, 0, Way.NEW_PLACE, "expired"),  # unreadable: not valid
        ({"pk": {"S": "v#x"}}, 0, Way.NEW_PLACE, "expired"),  # no expiry at all: not valid
        (None, 1234 + 900, Way.KEEP_PLACE, "waiting"),  # 15 min at 60/min is below the floor
        (None, 1234 + 1000, Way.KEEP_PLACE, "waiting"),
        (None, 1234 + 1001, Way.NEW_PLACE, "unknown"),
        (None, 0, Way.KEEP_PLACE, "waiting"),  # ahead of everyone admitted
        # Capacity mode: a visitor who left, or whose place was freed, starts again.
        ({"state": {"S": "left"}, "expires_at": {"N": "2000"}}, 0, Way.NEW_PLACE, "left"),
        ({"state": {"S": "left"}}, 0, Way.NEW_PLACE, "left"),  # left while waiting
        ({"state": {"S": "ended"}, "expires_at": {"N": "2000"}}, 0, Way.NEW_PLACE, "expired"),
        ({"state": {"S": "inside"}, "expires_at": {"N": "2000"}}, 0, Way.SHOP, "admitted"),
    ],
)
def test_classification(item: Any, admitted_total: int, way: Way, reason: str) -> None:
    config = RoomConfig(enabled=True, operator_rate=60, rate=60, version=1, updated_at=0)
    snapshot = RoomSnapshot(config, (0,), admitted_total)
    visit = classify(TOKEN, item, snapshot, now=1000.0)
    assert (visit.way, visit.reason, visit.token) == (way, reason, TOKEN)


def test_visitors_passed_over_count_towards_unknown() -> None:
    """/polling's status copy counts admitted and passed-over visitors as the line's progress;
    the marketing link judges "unknown" by the same total."""
    config = RoomConfig(enabled=True, operator_rate=60, rate=60, version=1, updated_at=0)
    waiting = RoomSnapshot(config, (0,), admitted_total=1234 + 1000, skipped=0)
    gone = RoomSnapshot(config, (0,), admitted_total=1234 + 1000, skipped=1)
    assert classify(TOKEN, None, waiting, now=1000.0).reason == "waiting"
    assert classify(TOKEN, None, gone, now=1000.0).reason == "unknown"
