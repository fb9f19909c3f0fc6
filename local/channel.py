"""The push channel of a local room: AppSync Events' protocol on loopback, in-process.

A waiting page subscribes to a local room exactly as to a deployed one (core/push.py): a
WebSocket to `/event/realtime` offering the subprotocols `aws-appsync-event-ws` and
`header-<base64url {"host", "x-api-key"}>`, then `connection_init` / `connection_ack`, `ka`
keep-alives, `subscribe` / `subscribe_success` or `subscribe_error`, `data` with the event as
JSON text, `unsubscribe`. The room's writers publish to `POST /event` on a second port, signed
as in AWS (local/channel_publish.py). Both listen on 127.0.0.1 only, on ports of their own
(any free ones), which the room's record and its page's Content-Security-Policy name.

Every figure and message is AWS's, from "Understanding the Event API WebSocket protocol"
(AWS AppSync Events developer guide). Where AWS documents no answer, this one is chosen and
said so: a wrong or missing key is accepted at the upgrade and answered with
`connection_error` (errorType UnauthorizedException), then closed, as AWS's own client expects
("Event API does not currently return `errorCode`", aws-amplify/amplify-js,
AWSWebSocketProvider); a subscription AWS would refuse gets `subscribe_error`; a message the
protocol does not know gets `error`. What is not imitated: the 24-hour connection limit.

`refuse_connections` turns new connections away (HTTP 429 at the upgrade) and
`drop_connections()` closes the open ones: the two ways a page loses its channel in AWS (a
throttled burst, a dropped socket), for the page's fallback to the shared state.

The server is websockets' asyncio server in one thread of its own with its own event loop
(websockets' FAQ advises one loop, not threads); publishes from other threads are handed to it
with `call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import logging
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from beekeeper.core import push
from beekeeper.local.channel_publish import PublishEndpoint
from beekeeper.local.http_server import ServerThread

log = logging.getLogger("beekeeper.local")
# websockets' own log: its warnings, not a line for every connection and the server's start.
_SERVER_LOG = logging.getLogger("beekeeper.local.channel")
_SERVER_LOG.setLevel(logging.WARNING)

# "All APIs - Subscriptions per client connection": 200 (AWS AppSync quotas, docs/stack.md).
MAX_SUBSCRIPTIONS_PER_CONNECTION = 200
# A frame larger than a publish's whole payload is no protocol message.
MAX_FRAME_BYTES = 1_200_000
START_TIMEOUT_SECONDS = 5.0
UNAUTHORIZED = "UnauthorizedException"


def new_api_key() -> str:
    """A key shaped like AppSync's (`da2-` and 26 lower-case letters and digits)."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "da2-" + "".join(secrets.choice(alphabet) for _ in range(26))


@dataclass(frozen=True)
class ChannelCounts:
    """What the channel has done since it started (the operator's live view shows it)."""

    connections: int = 0  # open now
    subscriptions: int = 0  # open now
    refused: int = 0  # connections turned away (throttled, wrong key, bad handshake)
    publishes: int = 0
    deliveries: int = 0  # `data` messages sent to subscriptions
    keep_alives: int = 0


@dataclass
class _Connection:
    socket: ServerConnection
    acknowledged: bool = False
    # subscription id -> channel (a trailing "/*" matches every channel below it)
    subscriptions: dict[str, str] = field(default_factory=dict)


class LocalChannel:
    """The push channel of the local room `room`: a realtime port and a publish port."""

    def __init__(
        self,
        room: str,
        *,
        key: str | None = None,
        keep_alive_seconds: float = push.KEEP_ALIVE_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.room = room
        self.key = key or new_api_key()
        self.keep_alive_seconds = keep_alive_seconds
        self.refuse_connections = False
        self._clock = clock
        self._loop = asyncio.new_event_loop()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._connections: dict[ServerConnection, _Connection] = {}
        self._counts = ChannelCounts()
        self._lock = threading.Lock()
        self._publish_server = ServerThread(
            PublishEndpoint(self.publish, clock), port=0, threads=2, what="push channel's publish"
        )
        self.realtime_port = 0

    # -- where it is -------------------------------------------------------------------------

    @property
    def http_host(self) -> str:
        """The publish endpoint's host, which a subscriber's auth header names (as AWS's)."""
        return f"127.0.0.1:{self._publish_server.port}"

    @property
    def realtime_host(self) -> str:
        return f"127.0.0.1:{self.realtime_port}"

    @property
    def publish_url(self) -> str:
        return f"http://{self.http_host}{push.HTTP_PATH}"

    def page_channel(self) -> push.PageChannel:
        return push.PageChannel(
            realtime_url=f"ws://{self.realtime_host}{push.REALTIME_PATH}",
            host=self.http_host,
            key=self.key,
            channel=push.channel_of(self.room),
        )

    def counts(self) -> ChannelCounts:
        with self._lock:
            return self._counts

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Bind both ports and serve (a busy loopback is reported before anything runs)."""
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                self._server = self._loop.run_until_complete(self._serve())
            except BaseException as error:
                failure.append(error)
                started.set()
                return
            started.set()
            ticker = self._loop.create_task(self._keep_alive())
            self._loop.run_forever()
            ticker.cancel()
            self._loop.run_until_complete(self._close())

        self._thread = threading.Thread(target=run, name="beekeeper-channel", daemon=True)
        self._thread.start()
        if not started.wait(START_TIMEOUT_SECONDS) or failure:
            raise RuntimeError(f"the local push channel could not start: {failure or 'timeout'}")
        self._publish_server.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._publish_server.stop(timeout)
        if self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)

    async def _serve(self) -> Server:
        server = await serve(
            self._handle,
            "127.0.0.1",
            0,
            subprotocols=[push.SUBPROTOCOL],  # type: ignore[list-item]
            process_request=self._process_request,
            max_size=MAX_FRAME_BYTES,
            compression=None,
            logger=_SERVER_LOG,
        )
        self.realtime_port = int(next(iter(server.sockets)).getsockname()[1])
        return server

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    # -- the handshake -----------------------------------------------------------------------

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path.split("?", 1)[0] != push.REALTIME_PATH:
            return self._refuse(connection, HTTPStatus.NOT_FOUND, "no such path\n")
        if self.refuse_connections:
            return self._refuse(connection, HTTPStatus.TOO_MANY_REQUESTS, "throttled\n")
        return None

    def _refuse(self, connection: ServerConnection, status: HTTPStatus, text: str) -> Response:
        self._count(refused=1)
        return connection.respond(status, text)

    def _authorized(self, headers: Headers) -> bool:
        """Whether the `header-` subprotocol names this channel's host and key."""
        offered = [
            item.strip()
            for value in headers.get_all("Sec-WebSocket-Protocol")
            for item in value.split(",")
        ]
        for item in offered:
            if item.startswith(push.AUTH_SUBPROTOCOL_PREFIX):
                return self._auth_matches(_decoded(item[len(push.AUTH_SUBPROTOCOL_PREFIX) :]))
        return False

    def _auth_matches(self, auth: Any) -> bool:
        return isinstance(auth, dict) and auth == auth | push.auth_header(self.http_host, self.key)

    # -- a connection --------------------------------------------------------------------------

    async def _handle(self, socket: ServerConnection) -> None:
        if not self._authorized(socket.request.headers if socket.request else Headers()):
            self._count(refused=1)
            await _send(socket, _error_message("connection_error", UNAUTHORIZED))
            await socket.close()
            return
        connection = _Connection(socket)
        self._connections[socket] = connection
        self._count(connections=1)
        try:
            async for frame in socket:
                await self._answer(connection, frame)
        except ConnectionClosed:
            pass
        finally:
            del self._connections[socket]
            self._count(connections=-1, subscriptions=-len(connection.subscriptions))

    async def _answer(self, connection: _Connection, frame: str | bytes) -> None:
        try:
            message = json.loads(frame)
        except ValueError:
            message = None
        kind = message.get("type") if isinstance(message, dict) else None
        socket = connection.socket
        if kind == "connection_init":
            connection.acknowledged = True
            await _send(
                socket,
                {"type": "connection_ack", "connectionTimeoutMs": push.CONNECTION_TIMEOUT_MS},
            )
        elif kind == "subscribe":
            assert isinstance(message, dict)
            await _send(socket, self._subscribe(connection, message))
        elif kind == "unsubscribe":
            assert isinstance(message, dict)
            sub_id = message.get("id")
            if isinstance(sub_id, str) and sub_id in connection.subscriptions:
                del connection.subscriptions[sub_id]
                self._count(subscriptions=-1)
                await _send(socket, {"type": "unsubscribe_success", "id": sub_id})
            else:
                await _send(
                    socket,
                    _error_message(
                        "unsubscribe_error", "UnknownOperationError", sub_id, "no such subscription"
                    ),
                )
        elif kind == "publish":
            # The namespace publishes by IAM only (stacks/channel.py): the page's key can not.
            assert isinstance(message, dict)
            await _send(
                socket,
                _error_message(
                    "publish_error",
                    UNAUTHORIZED,
                    message.get("id"),
                    "the namespace publishes by IAM only",
                ),
            )
        else:
            await _send(
                socket,
                _error_message("error", "UnsupportedOperation", None, "not a protocol message"),
            )

    def _subscribe(self, connection: _Connection, message: dict[str, Any]) -> dict[str, Any]:
        sub_id, channel = message.get("id"), message.get("channel")
        if not isinstance(sub_id, str) or not push.ID_PATTERN.fullmatch(sub_id):
            return _error_message(
                "subscribe_error", "BadRequestException", sub_id, "the id is not valid"
            )

        def refused(kind: str, why: str) -> dict[str, Any]:
            return _error_message("subscribe_error", kind, sub_id, why)

        if sub_id in connection.subscriptions:
            return refused("DuplicatedOperationError", "the id is duplicated")
        if not self._auth_matches(message.get("authorization")):
            return refused(UNAUTHORIZED, "You are not authorized to make this call.")
        path = channel.removesuffix("/*") if isinstance(channel, str) else ""
        if not push.CHANNEL_PATTERN.fullmatch(path):
            return refused("BadRequestException", "the channel is not a valid channel path")
        if path.strip("/").split("/")[0] != push.NAMESPACE:
            return refused("BadRequestException", "the channel's namespace is not defined")
        if len(connection.subscriptions) >= MAX_SUBSCRIPTIONS_PER_CONNECTION:
            return refused("LimitExceededException", "too many subscriptions on the connection")
        assert isinstance(channel, str)
        connection.subscriptions[sub_id] = channel
        self._count(subscriptions=1)
        return {"type": "subscribe_success", "id": sub_id}

    # -- publishing ----------------------------------------------------------------------------

    def publish(self, channel: str, events: Sequence[str]) -> list[str]:
        """Deliver `events` (already checked, local/channel_publish.py) to every subscription
        of `channel`, each as its own `data` message ("Subscribed clients receive each message
        individually", Creating an AWS AppSync Event API); their identifiers. Thread-safe."""
        identifiers = [str(uuid.uuid4()) for _ in events]
        self._count(publishes=1)
        self._loop.call_soon_threadsafe(self._deliver, channel, list(events))
        return identifiers

    def _deliver(self, channel: str, events: list[str]) -> None:
        by_id: dict[str, list[ServerConnection]] = {}
        for connection in self._connections.values():
            for sub_id, subscribed in connection.subscriptions.items():
                if _matches(subscribed, channel):
                    by_id.setdefault(sub_id, []).append(connection.socket)
        delivered = 0
        for sub_id, sockets in by_id.items():
            for event in events:
                broadcast(sockets, json.dumps({"type": "data", "id": sub_id, "event": event}))
                delivered += len(sockets)
        self._count(deliveries=delivered)

    async def _keep_alive(self) -> None:
        while True:
            await asyncio.sleep(self.keep_alive_seconds)
            sockets = [c.socket for c in self._connections.values() if c.acknowledged]
            broadcast(sockets, json.dumps({"type": "ka"}))
            self._count(keep_alives=len(sockets))

    def drop_connections(self) -> None:
        """Close every open connection (a dropped socket, as a page may meet in AWS)."""

        def close_all() -> None:
            for socket in list(self._connections):
                self._loop.create_task(socket.close(code=1001, reason="dropped"))

        self._loop.call_soon_threadsafe(close_all)

    def _count(self, **changes: int) -> None:
        with self._lock:
            counts = self._counts
            self._counts = ChannelCounts(
                **{
                    name: getattr(counts, name) + changes.get(name, 0)
                    for name in ChannelCounts.__dataclass_fields__
                }
            )


def _matches(subscribed: str, channel: str) -> bool:
    """Whether a subscription to `subscribed` receives a publish to `channel`: the same path,
    or one below a trailing wildcard ("a wildcard `*` at the end of a channel path")."""
    if subscribed.endswith("/*"):
        return channel.startswith(subscribed[:-1])
    return subscribed.strip("/") == channel.strip("/")


def _decoded(text: str) -> Any:
    """The auth object of a `header-` subprotocol: base64url JSON, padding stripped."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        return json.loads(raw)
    except (binascii.Error, ValueError):
        return None


def _error_message(
    kind: str, error_type: str, sub_id: object = None, message: str = ""
) -> dict[str, Any]:
    answer: dict[str, Any] = {"type": kind}
    if isinstance(sub_id, str):
        answer["id"] = sub_id
    error = {"errorType": error_type}
    if message:
        error["message"] = message
    answer["errors"] = [error]
    return answer


async def _send(socket: ServerConnection, message: dict[str, Any]) -> None:
    with contextlib.suppress(ConnectionClosed):
        await socket.send(json.dumps(message))
