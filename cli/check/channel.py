"""The check's look at the room's push channel: a subscription made as a waiting page makes
it, and the room's publish it must see.

The page's room config names the channel (core/push.py `PageChannel.config`: the real-time
URL, the HTTP host the auth names, the pages' API key and the room's channel). A subscription
offers AppSync Events' subprotocols, sends `connection_init`, waits for `connection_ack`,
subscribes with the key and waits for `subscribe_success`; then it tries to publish with the
key, which the room's channel must refuse (publishing is by IAM only, stacks/channel.py), and
waits for the event the operator publishes. The protocol is AWS's ("Understanding the Event
API WebSocket protocol", AWS AppSync Events developer guide); what AWS leaves open (a `data`
message's event as one JSON text or a list of them) is read either way.

One client for both callers: `beekeeper check` (cli/check/journey.py) and the opt-in real-AWS
journey (tests/support/realroom/journey.py).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from beekeeper.core import push

# The page's room config, as waiting_room_site writes it into the page.
_ROOM_CONFIG = re.compile(
    r'<script type="application/json" id="beekeeper-room">(.*?)</script>', re.S
)
# How long the check waits for the channel's answers (an upgrade and a subscription are a
# round trip each; AWS's own timeout for a subscription's answer is not documented).
ANSWER_SECONDS = 15.0
SUBSCRIPTION_ID = "beekeeper-check"


class ChannelTrouble(Exception):
    """The channel did not do what a page needs: `saw` says what it answered."""

    def __init__(self, saw: str) -> None:
        super().__init__(saw)
        self.saw = saw


@dataclass(frozen=True)
class ChannelConfig:
    """What the page's config says of its channel."""

    url: str  # ws(s)://<real-time host>/event/realtime
    host: str  # the HTTP endpoint's host, which the auth names
    key: str
    channel: str

    @classmethod
    def of_page(cls, html: str) -> ChannelConfig | None:
        """The channel the page subscribes to; None when its config names none."""
        found = _ROOM_CONFIG.search(html)
        if found is None:
            return None
        try:
            config = json.loads(found.group(1))
            channel = config.get("channel")
            if not isinstance(channel, dict):
                return None
            return cls(
                str(channel["url"]), str(channel["host"]), str(channel["key"]), channel["channel"]
            )
        except (ValueError, KeyError, AttributeError):
            return None

    @property
    def auth(self) -> dict[str, str]:
        return push.auth_header(self.host, self.key)

    @property
    def subprotocols(self) -> list[str]:
        encoded = base64.urlsafe_b64encode(json.dumps(self.auth).encode()).decode().rstrip("=")
        return [push.SUBPROTOCOL, push.AUTH_SUBPROTOCOL_PREFIX + encoded]


class Subscription:
    """An open, subscribed socket to the room's channel."""

    def __init__(self, socket: Any, config: ChannelConfig, clock: Callable[[], float]) -> None:
        self._socket = socket
        self._config = config
        self._clock = clock

    def next_message(
        self, kinds: tuple[str, ...], within: float = ANSWER_SECONDS
    ) -> dict[str, Any]:
        """The next message of one of `kinds` (keep-alives and others come in between)."""
        deadline = self._clock() + within
        while True:
            left = deadline - self._clock()
            if left <= 0:
                raise TimeoutError(f"no {' or '.join(kinds)} within {within:g} s")
            message: dict[str, Any] = json.loads(self._socket.recv(timeout=left))
            if message.get("type") in kinds:
                return message

    def publish_with_page_key(self) -> dict[str, Any]:
        """What the channel answers a publish signed with the pages' key (it must refuse)."""
        self._send(
            {
                "type": "publish",
                "id": f"{SUBSCRIPTION_ID}-forged",
                "channel": self._config.channel,
                "events": [json.dumps({"v": push.VERSION})],
                "authorization": self._config.auth,
            }
        )
        return self.next_message(("publish_success", "publish_error"))

    def events(self, within: float) -> Iterator[dict[str, Any]]:
        """Each event delivered within `within` s, parsed; ends with TimeoutError."""
        deadline = self._clock() + within
        while True:
            message = self.next_message(("data",), max(deadline - self._clock(), 0.0))
            texts = message.get("event")
            for text in texts if isinstance(texts, list) else [texts]:
                if not isinstance(text, str):
                    continue
                try:
                    event = json.loads(text)
                except ValueError:
                    continue
                if isinstance(event, dict):
                    yield event

    def wait_for(
        self, wanted: Callable[[dict[str, Any]], bool], within: float
    ) -> tuple[dict[str, Any], float]:
        """The first delivered event `wanted` accepts and how long it took from now."""
        began = self._clock()
        for event in self.events(within):
            if wanted(event):
                return event, self._clock() - began
        raise AssertionError("unreachable: events() ends with TimeoutError")  # pragma: no cover

    def _send(self, message: dict[str, Any]) -> None:
        self._socket.send(json.dumps(message))


def _connect(url: str, subprotocols: list[str], open_timeout: float) -> Any:
    # websockets is imported when a check subscribes, not by every CLI command.
    from websockets.sync.client import connect

    return connect(url, subprotocols=subprotocols, open_timeout=open_timeout)  # type: ignore[arg-type]


@contextmanager
def subscribed(
    config: ChannelConfig,
    clock: Callable[[], float],
    *,
    connect: Callable[[str, list[str], float], Any] = _connect,
) -> Iterator[Subscription]:
    """A subscription to the room's channel as a page makes one; ChannelTrouble says where it
    stopped."""
    try:
        socket = connect(config.url, config.subprotocols, ANSWER_SECONDS)
    except Exception as error:  # refused at the upgrade, unreachable, timed out
        raise ChannelTrouble(f"the connection to {config.url} failed ({error})") from error
    with socket:
        subscription = Subscription(socket, config, clock)
        try:
            subscription._send({"type": "connection_init"})
            ack = subscription.next_message(("connection_ack", "connection_error"))
            if ack["type"] != "connection_ack":
                raise ChannelTrouble(f"the connection was refused: {_errors(ack)}")
            subscription._send(
                {
                    "type": "subscribe",
                    "id": SUBSCRIPTION_ID,
                    "channel": config.channel,
                    "authorization": config.auth,
                }
            )
            answer = subscription.next_message(("subscribe_success", "subscribe_error"))
            if answer["type"] != "subscribe_success":
                raise ChannelTrouble(
                    f"the subscription to {config.channel} was refused: {_errors(answer)}"
                )
        except (TimeoutError, OSError) as error:
            raise ChannelTrouble(f"the channel stopped answering ({error})") from error
        yield subscription


def _errors(message: dict[str, Any]) -> str:
    found = message.get("errors") or message.get("payload", {}).get("errors") or []
    if not found:
        return json.dumps(message)[:200]
    return "; ".join(
        str(error.get("errorType") or error.get("message") or error) for error in found
    )


__all__ = ["ANSWER_SECONDS", "ChannelConfig", "ChannelTrouble", "Subscription", "subscribed"]
