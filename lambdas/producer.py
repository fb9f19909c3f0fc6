"""The marketing link, GET /beekeeper: give a new visitor a place in line.

A new visitor costs two AWS calls: UpdateItem `ADD n 1` on one arrival shard (the returned `n`
gives the visitor's ordinal) and SendMessage with the token. The room's config and the shard
counts are read together with one BatchGetItem at most every CONFIG_TTL_SECONDS per container,
so `beekeeper off` and rate changes reach every container within seconds, without a redeploy.
"""

from __future__ import annotations

import html
import logging
import math
import random
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from beekeeper.core import telemetry
from beekeeper.core.datamodel import (
    QUEUE_RETENTION_SECONDS,
    Token,
    arrival_shard_key,
    origin_url_with_token,
)
from beekeeper.core.polling import eta_seconds as expected_wait_seconds
from beekeeper.core.settings import RoomSettings
from beekeeper.lambdas import runtime
from beekeeper.lambdas.cookies import (
    is_plain_http_loopback,
    set_cookie,
    stage_root,
)
from beekeeper.lambdas.emf import DISCARD, MetricSink
from beekeeper.lambdas.returning import Way, returning_visit
from beekeeper.lambdas.room_state import (
    RoomSnapshot,
    key,
    read_snapshot,
)

log = logging.getLogger("beekeeper.producer")

CONFIG_TTL_SECONDS = 5.0
# The page is served under the same stage prefix: "room" relative to ".../beekeeper".
ROOM_LOCATION = "room"
RETRY_AFTER_SECONDS = 30
# The cookie outlives the estimate: the governor may slow the line down after it was made.
MAX_AGE_SLACK_SECONDS = 30 * 60


@dataclass
class SnapshotCache:
    """The config and shard counts one container last read, and when."""

    snapshot: RoomSnapshot | None = None
    read_at: float = -math.inf

    def get(self, now: float, read: Callable[[], RoomSnapshot]) -> RoomSnapshot:
        if self.snapshot is None or now - self.read_at >= CONFIG_TTL_SECONDS:
            try:
                self.snapshot = read()
                self.read_at = now
            except Exception:
                if self.snapshot is None:
                    raise
                # Keep serving from the last config rather than failing every visitor.
                log.exception("could not refresh the room config; using the cached one")
        return self.snapshot

    def record_shard(self, shard: int, n: int) -> None:
        """Our own increment, so the next choice sees it before the next refresh."""
        if self.snapshot is not None:
            counts = list(self.snapshot.shard_counts)
            counts[shard] = max(counts[shard], n)
            self.snapshot = RoomSnapshot(
                self.snapshot.config, tuple(counts), self.snapshot.admitted_total
            )


@dataclass
class Producer:
    settings: RoomSettings
    table: str
    queue_url: str
    dynamodb: Any
    sqs: Any
    clock: Callable[[], float] = time.time
    token_bytes: Callable[[int], bytes] = secrets.token_bytes
    # Only spreads arrivals over shards (no secret): seeded from os.urandom by default.
    rng: random.Random = field(default_factory=random.Random)
    cache: SnapshotCache = field(default_factory=SnapshotCache)
    metrics: MetricSink = DISCARD

    def handle(self, event: Mapping[str, Any]) -> dict[str, Any]:
        method = event.get("httpMethod") if isinstance(event, Mapping) else None
        if not isinstance(method, str):
            return page(400, "Bad request", "This address only answers web browsers.")
        if method.upper() != "GET":
            response = page(405, "Method not allowed", "Open this link in your browser.")
            response["headers"]["Allow"] = "GET"
            return response
        try:
            snapshot = self.cache.get(self.clock(), self._read)
            if not snapshot.config.enabled:
                return redirect(self.settings.origin)
            visit = returning_visit(
                event, dynamodb=self.dynamodb, table=self.table, snapshot=snapshot, now=self.clock()
            )
            if visit.way is Way.SHOP and visit.token is not None:
                return redirect(origin_url_with_token(self.settings.origin, str(visit.token)))
            if visit.way is Way.KEEP_PLACE:
                return redirect(ROOM_LOCATION)
            token = self._enqueue(snapshot)
            self.metrics.count(telemetry.ARRIVALS)
            if visit.rejoins:
                self.metrics.count(telemetry.REJOINED)
        except Exception:
            log.exception("could not give a visitor a place in line")
            if self.settings.fail_open:
                return redirect(self.settings.origin)
            response = page(
                503,
                "Please try again in a moment",
                "The waiting room is busy. Reload this page in half a minute to get your place.",
            )
            response["headers"]["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        response = redirect(ROOM_LOCATION)
        response["headers"]["Set-Cookie"] = set_cookie(
            token,
            path=stage_root(event),
            max_age=self._max_age(snapshot, token),
            secure=not is_plain_http_loopback(event),
        )
        return response

    def _read(self) -> RoomSnapshot:
        return read_snapshot(self.dynamodb, self.table, self.settings)

    def choose_shard(self, counts: tuple[int, ...]) -> int:
        """Power of two choices: of two random shards, the one with fewer arrivals."""
        if len(counts) == 1:
            return 0
        first, second = self.rng.sample(range(len(counts)), 2)
        return first if counts[first] <= counts[second] else second

    def _enqueue(self, snapshot: RoomSnapshot) -> Token:
        shards = len(snapshot.shard_counts)
        shard = self.choose_shard(snapshot.shard_counts)
        response = self.dynamodb.update_item(
            TableName=self.table,
            Key=key(arrival_shard_key(shard)),
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
        n = int(response["Attributes"]["n"]["N"])
        self.cache.record_shard(shard, n)
        token = Token.issue((n - 1) * shards + shard + 1, self.token_bytes)
        # If this fails the counter has counted a visitor who is not in line: positions shown
        # are then one too high, never too low, and nobody is lost (the visitor gets a 503).
        self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=str(token))
        return token

    def _max_age(self, snapshot: RoomSnapshot, token: Token) -> int:
        position = token.ordinal - snapshot.admitted_total
        wait = expected_wait_seconds(position, snapshot.config.rate)
        max_age = wait + self.settings.admission_validity_seconds + MAX_AGE_SLACK_SECONDS
        return min(max_age, QUEUE_RETENTION_SECONDS + self.settings.admission_validity_seconds)


_BASE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def redirect(location: str) -> dict[str, Any]:
    return {"statusCode": 302, "headers": {**_BASE_HEADERS, "Location": location}, "body": ""}


def page(status: int, title: str, message: str) -> dict[str, Any]:
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(message)}</p></body></html>"
    )
    headers = {**_BASE_HEADERS, "Content-Type": "text/html; charset=utf-8"}
    return {"statusCode": status, "headers": headers, "body": body}


_producer: Producer | None = None


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    global _producer
    if _producer is None:
        _producer = Producer(
            settings=runtime.settings(),
            table=runtime.env("TABLE_NAME"),
            queue_url=runtime.env("QUEUE_URL"),
            dynamodb=runtime.client("dynamodb"),
            sqs=runtime.client("sqs"),
            metrics=runtime.metrics(),
        )
    response = _producer.handle(event)
    _producer.metrics.flush_ended()
    return response
