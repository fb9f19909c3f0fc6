"""The push channel's rules (core/push.py) and the publisher's signed request (room/push.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from beekeeper.core import push
from beekeeper.room.push import AppSyncPublisher, PublishError

NOW_MS = 1_800_000_000_000


def told(**fields: Any) -> str:
    """The signal of an open room at 600 a minute, with `fields` changed."""
    document = {"state": "open", "rate": 600, "slowed": False, **fields}
    return push.signal(document)


@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [
        ({}, {"state": "paused"}, push.HOLD),
        ({"state": "paused"}, {}, push.RESUME),
        ({}, {"state": "closed", "message": "Sold out"}, push.CLOSE),
        ({"state": "closed", "message": "Sold out"}, {}, push.RESUME),
        ({"state": "closed", "message": "a"}, {"state": "closed", "message": "b"}, push.CLOSE),
        ({}, {"state": "off"}, push.OFF),
        ({"state": "off"}, {}, push.ON),
        ({"state": "off"}, {"state": "paused"}, push.HOLD),
        ({}, {"rate": 300, "slowed": True}, push.RATE),
        ({}, {"slowed": True}, push.RATE),
        ({}, {"state": "prequeue", "starts_at": 9}, push.PREQUEUE),
        ({"state": "prequeue", "starts_at": 9}, {"state": "prequeue", "starts_at": 99}, "prequeue"),
        ({"state": "prequeue", "starts_at": 9}, {"state": "drawing", "starts_at": 9}, push.DRAW),
        ({"state": "drawing", "starts_at": 9}, {"starts_at": 9, "drawn": True}, push.DRAW),
        ({"starts_at": 9, "drawn": True}, {"starts_at": 9, "drawn": True, "ranked": True}, "draw"),
        ({"max_inside": 50, "full": False}, {"max_inside": 80, "full": False}, push.CAPACITY),
        ({"max_inside": 50, "full": False}, {"max_inside": 50, "full": True}, push.FULL),
        # The line moving again with the state unchanged (its resume's point could not be
        # added to the history then): pages would otherwise extrapolate a line standing still.
        ({"history": "1:2:0:5:0:2:0"}, {"history": "1:2:0:5:0:2:0 9:3:600:4:0:3:0"}, "moving"),
        ({"history": "1:2:600:5:0:2:0"}, {"history": "9:3:0:4:0:3:0"}, push.MOVING),
        # In a capacity room the line stops and moves as the shop fills: as full, once a minute.
        ({"max_inside": 5, "history": "1:2:0"}, {"max_inside": 5, "history": "9:3:4"}, push.FULL),
    ],
)
def test_a_change_is_published_for_what_it_is(
    before: dict[str, Any], after: dict[str, Any], reason: str
) -> None:
    assert push.reason(told(**before), told(**after)) == reason


def test_what_pages_extrapolate_is_no_change() -> None:
    a = {"state": "open", "rate": 600, "serving": 10, "history": "1:2:3", "now": 1, "flow": 600}
    b = {**a, "serving": 900, "history": "4:5:6", "now": 2, "flow": 7, "updated_at": 5}
    assert push.reason(push.signal(a), push.signal(b)) is None


def test_nothing_known_of_the_last_publish_makes_a_resync() -> None:
    assert push.reason("", told()) == push.RESYNC
    assert push.due(push.NEVER, told(), NOW_MS) == push.Due(push.RESYNC, NOW_MS)


def test_a_change_goes_at_most_once_a_second_and_a_resync_every_five_minutes() -> None:
    last = push.Mark(NOW_MS, told())
    # Nothing changed: nothing due until the resync.
    assert push.due(last, told(), NOW_MS + 299_999) is None
    assert push.due(last, told(), NOW_MS + 300_000) == push.Due(push.RESYNC, NOW_MS + 1000)
    # A change: due, but not before a second after the last publish.
    assert push.due(last, told(state="paused"), NOW_MS + 10) == push.Due(push.HOLD, NOW_MS + 1000)
    # A full shop alone: not before a minute after it.
    full = push.Mark(NOW_MS, told(max_inside=5, full=False))
    assert push.due(full, told(max_inside=5, full=True), NOW_MS) == push.Due(
        push.FULL, NOW_MS + 60_000
    )


def test_the_sequence_grows_even_when_a_writers_clock_is_behind() -> None:
    assert push.next_seq(push.NEVER, NOW_MS) == NOW_MS
    assert push.next_seq(push.Mark(NOW_MS + 5_000, ""), NOW_MS) == NOW_MS + 5_001


def test_a_message_carries_the_document_whole_and_stays_one_metered_message() -> None:
    document = {"state": "paused", "serving": 5, "seq": 7, "history": "1:2:3:4:5 " * 23}
    text = push.message(7, push.HOLD, document)
    assert json.loads(text) == {"v": 1, "seq": 7, "reason": "hold", "doc": document}
    with pytest.raises(ValueError, match="reason"):
        push.message(7, "because", document)
    with pytest.raises(ValueError, match="5 KB"):
        push.message(7, push.HOLD, {"history": "x" * push.METERED_MESSAGE_BYTES})


def test_a_rooms_channel_is_its_name_in_the_namespace() -> None:
    assert push.channel_of("spring-sale") == "/room/spring-sale"
    assert push.CHANNEL_PATTERN.fullmatch(push.channel_of("a" * 32))
    with pytest.raises(ValueError):
        push.channel_of("no_underscores")


def test_the_key_expires_on_the_hour_a_day_short_of_a_year() -> None:
    now = 1_800_000_123.0
    expires = push.key_expiry(now)
    assert expires % 3600 == 0
    assert 363 * 86_400 < expires - now <= 364 * 86_400
    assert push.key_days_left(expires, now) == pytest.approx(364, abs=1 / 24)


def test_the_page_is_told_where_to_subscribe_and_what_its_policy_allows() -> None:
    channel = push.PageChannel.of(
        realtime_host="abc.appsync-realtime-api.eu-west-1.amazonaws.com",
        http_host="abc.appsync-api.eu-west-1.amazonaws.com",
        key="da2-key",
        room="sale",
    )
    assert channel.config() == {
        "url": "wss://abc.appsync-realtime-api.eu-west-1.amazonaws.com/event/realtime",
        "host": "abc.appsync-api.eu-west-1.amazonaws.com",
        "key": "da2-key",
        "channel": "/room/sale",
    }
    assert channel.connect_source == "wss://abc.appsync-realtime-api.eu-west-1.amazonaws.com"


class Recorder:
    """The publisher's transport: keeps the request and answers as told."""

    def __init__(self, status: int = 200, body: str = '{"failed": [], "successful": []}'):
        self.status, self.body = status, body
        self.requests: list[AWSRequest] = []

    def __call__(self, request: AWSRequest) -> tuple[int, str]:
        self.requests.append(request)
        return self.status, self.body


CREDENTIALS = Credentials("AKIDEXAMPLE", "secret", "session-token")
URL = "https://abc.appsync-api.eu-west-1.amazonaws.com/event"


def test_a_publish_is_a_sigv4_signed_post_of_the_channel_and_its_events() -> None:
    send = Recorder()
    publisher = AppSyncPublisher(URL, "eu-west-1", lambda: CREDENTIALS, send=send)
    publisher.publish("/room/sale", ['{"v":1}'])
    (request,) = send.requests
    assert (request.method, request.url) == ("POST", URL)
    assert json.loads(request.body) == {"channel": "/room/sale", "events": ['{"v":1}']}
    authorization = request.headers["Authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/appsync/aws4_request" in authorization
    assert request.headers["X-Amz-Security-Token"] == "session-token"
    assert "host" in authorization.split("SignedHeaders=")[1]


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (401, '{"errors":[{"errorType":"UnauthorizedException"}]}', "answered 401"),
        (200, '{"failed":[{"index":0,"code":400}],"successful":[]}', "refused the event"),
    ],
)
def test_a_refused_publish_says_what_the_channel_answered(
    status: int, body: str, said: str
) -> None:
    publisher = AppSyncPublisher(URL, "eu-west-1", lambda: CREDENTIALS, send=Recorder(status, body))
    with pytest.raises(PublishError, match=said):
        publisher.publish("/room/sale", ["{}"])


def test_a_publish_carries_one_to_five_events() -> None:
    publisher = AppSyncPublisher(URL, "eu-west-1", lambda: CREDENTIALS, send=Recorder())
    with pytest.raises(ValueError, match="1 to 5"):
        publisher.publish("/room/sale", ["{}"] * 6)
