"""The local push channel speaks AppSync Events' WebSocket protocol (local/channel.py): a
Python client subscribes as a page does, the room's publisher publishes as in AWS (signed,
room/push.py), and what AWS refuses is refused."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.credentials import Credentials
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from beekeeper.core import push
from beekeeper.local.channel import LocalChannel
from beekeeper.local.channel_publish import LOCAL_CREDENTIALS
from beekeeper.room.push import AppSyncPublisher, PublishError, send_over_https

# A subscriber waits at most this long for a message it expects (a condition, not a timing).
PATIENCE = 10.0


@pytest.fixture
def channel() -> Iterator[LocalChannel]:
    served = LocalChannel("sale", keep_alive_seconds=3600)
    served.start()
    try:
        yield served
    finally:
        served.stop()


def header(host: str, key: str) -> str:
    text = json.dumps(push.auth_header(host, key)).encode()
    return push.AUTH_SUBPROTOCOL_PREFIX + base64.urlsafe_b64encode(text).decode().rstrip("=")


def open_socket(channel: LocalChannel, *, key: str | None = None) -> ClientConnection:
    page = channel.page_channel()
    return connect(
        page.realtime_url,
        subprotocols=[push.SUBPROTOCOL, header(page.host, key or page.key)],  # type: ignore[list-item]
        open_timeout=PATIENCE,
    )


def receive(socket: ClientConnection) -> dict[str, Any]:
    return json.loads(socket.recv(timeout=PATIENCE))


def subscribe(
    socket: ClientConnection, served: LocalChannel, sub_id: str = "page-1", **kw: Any
) -> dict[str, Any]:
    page = served.page_channel()
    message = {
        "type": "subscribe",
        "id": sub_id,
        "channel": kw.get("channel", page.channel),
        "authorization": kw.get("authorization", push.auth_header(page.host, page.key)),
    }
    socket.send(json.dumps(message))
    return receive(socket)


def publisher(
    channel: LocalChannel, credentials: Credentials = LOCAL_CREDENTIALS
) -> AppSyncPublisher:
    return AppSyncPublisher(channel.publish_url, "us-east-1", lambda: credentials)


def test_a_page_subscribes_and_receives_each_published_event(channel: LocalChannel) -> None:
    with open_socket(channel) as socket:
        assert socket.subprotocol == push.SUBPROTOCOL
        socket.send(json.dumps({"type": "connection_init"}))
        assert receive(socket) == {"type": "connection_ack", "connectionTimeoutMs": 300_000}
        assert subscribe(socket, channel) == {"type": "subscribe_success", "id": "page-1"}
        events = [json.dumps({"v": 1, "seq": 1}), json.dumps({"v": 1, "seq": 2})]
        publisher(channel).publish("/room/sale", events)
        # Each event reaches the subscriber as its own message, its JSON as text.
        assert receive(socket) == {"type": "data", "id": "page-1", "event": events[0]}
        assert receive(socket) == {"type": "data", "id": "page-1", "event": events[1]}
        socket.send(json.dumps({"type": "unsubscribe", "id": "page-1"}))
        assert receive(socket) == {"type": "unsubscribe_success", "id": "page-1"}
        socket.send(json.dumps({"type": "unsubscribe", "id": "page-1"}))
        assert receive(socket)["type"] == "unsubscribe_error"
        # Another room's channel, and no subscription left: nothing arrives; the next thing
        # this socket gets is the answer to its next message.
        publisher(channel).publish("/room/sale", ['"after"'])
        publisher(channel).publish("/room/other", ['"elsewhere"'])
        assert subscribe(socket, channel, "page-2", channel="/room/*")["type"] == (
            "subscribe_success"
        )
        publisher(channel).publish("/room/other", ['"below the wildcard"'])
        assert receive(socket) == {"type": "data", "id": "page-2", "event": '"below the wildcard"'}
    counts = channel.counts()
    assert (counts.publishes, counts.deliveries) == (4, 3)


def test_keep_alives_come_while_the_socket_is_open() -> None:
    channel = LocalChannel("sale", keep_alive_seconds=0.05)
    channel.start()
    try:
        with open_socket(channel) as socket:
            socket.send(json.dumps({"type": "connection_init"}))
            assert receive(socket)["type"] == "connection_ack"
            assert receive(socket) == {"type": "ka"}
            assert receive(socket) == {"type": "ka"}
        assert channel.counts().keep_alives >= 2
    finally:
        channel.stop()


def test_a_wrong_key_is_told_it_is_not_authorized_and_closed(channel: LocalChannel) -> None:
    with open_socket(channel, key="da2-notthekeyofthisroom0000") as socket:
        answer = receive(socket)
        assert answer["type"] == "connection_error"
        assert answer["errors"][0]["errorType"] == "UnauthorizedException"
        with pytest.raises(ConnectionClosed):
            socket.recv(timeout=PATIENCE)
    assert channel.counts().refused == 1


def test_a_client_that_does_not_speak_the_protocol_is_refused_at_the_upgrade(
    channel: LocalChannel,
) -> None:
    page = channel.page_channel()
    with pytest.raises(InvalidStatus) as refused:
        connect(page.realtime_url, subprotocols=["graphql-ws"], open_timeout=PATIENCE)  # type: ignore[list-item]
    assert refused.value.response.status_code == 400
    with pytest.raises(InvalidStatus) as elsewhere:
        connect(page.realtime_url.replace("/event/realtime", "/graphql"), open_timeout=PATIENCE)
    assert elsewhere.value.response.status_code == 404


@pytest.mark.parametrize(
    ("change", "error_type"),
    [
        ({"channel": "/room/sale/../x"}, "BadRequestException"),
        ({"channel": "/elsewhere/sale"}, "BadRequestException"),
        ({"authorization": {"host": "elsewhere", "x-api-key": "da2-x"}}, "UnauthorizedException"),
        ({"sub_id": "not an id!"}, "BadRequestException"),
    ],
)
def test_a_subscription_aws_would_refuse_is_refused(
    channel: LocalChannel, change: dict[str, Any], error_type: str
) -> None:
    with open_socket(channel) as socket:
        answer = subscribe(socket, channel, change.pop("sub_id", "page-1"), **change)
        assert answer["type"] == "subscribe_error"
        assert answer["errors"][0]["errorType"] == error_type
    assert channel.counts().subscriptions == 0


def test_an_id_twice_a_publish_with_the_key_and_noise_are_errors(channel: LocalChannel) -> None:
    with open_socket(channel) as socket:
        assert subscribe(socket, channel)["type"] == "subscribe_success"
        duplicate = subscribe(socket, channel)
        assert duplicate["type"] == "subscribe_error"
        # The page's key can not publish: the namespace publishes by IAM only.
        socket.send(json.dumps({"type": "publish", "id": "p", "channel": "/room/sale",
                                "events": ['"x"']}))  # fmt: skip
        assert receive(socket)["type"] == "publish_error"
        socket.send("not json")
        assert receive(socket)["type"] == "error"


def test_a_throttled_channel_turns_new_connections_away(channel: LocalChannel) -> None:
    channel.refuse_connections = True
    with pytest.raises(InvalidStatus) as refused:
        open_socket(channel)
    assert refused.value.response.status_code == 429
    channel.refuse_connections = False
    with open_socket(channel) as socket:
        assert subscribe(socket, channel)["type"] == "subscribe_success"
        channel.drop_connections()
        with pytest.raises(ConnectionClosed):
            while True:
                socket.recv(timeout=PATIENCE)


def test_only_a_publish_signed_with_the_rooms_credentials_is_taken(channel: LocalChannel) -> None:
    other = Credentials("AKIDSOMEONEELSE", "secret")
    with pytest.raises(PublishError, match=r"401.*may not publish"):
        publisher(channel, other).publish("/room/sale", ['"x"'])
    forged = Credentials(LOCAL_CREDENTIALS.access_key, "not-the-secret")
    with pytest.raises(PublishError, match="signature does not match"):
        publisher(channel, forged).publish("/room/sale", ['"x"'])
    with pytest.raises(PublishError, match="namespace is not defined"):
        publisher(channel).publish("/elsewhere/sale", ['"x"'])
    with pytest.raises(PublishError, match="JSON value as text"):
        publisher(channel).publish("/room/sale", ["{not json"])
    # Unsigned, as a browser or a script on this machine could send it.
    from botocore.awsrequest import AWSRequest

    unsigned = AWSRequest(
        method="POST",
        url=channel.publish_url,
        data=json.dumps({"channel": "/room/sale", "events": ['"x"']}).encode(),
        headers={"content-type": "application/json"},
    )
    status, body = send_over_https(unsigned)
    assert status == 401 and json.loads(body)["errors"][0]["errorType"] == "UnauthorizedException"
    assert channel.counts().publishes == 0
