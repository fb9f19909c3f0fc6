"""The marketing link, GET /beekeeper: give a new visitor a place in line.

A new visitor in a busy room costs two AWS calls: UpdateItem `ADD n 1` on one arrival shard
(the returned `n` gives the visitor's ordinal) and SendMessage with the token. The room's
config and the shard counts are read together with one BatchGetItem at most every
CONFIG_FRESH_SECONDS per container (core/datamodel.py), so `beekeeper off` and rate changes
reach every container within seconds, without a redeploy.

In a quiet room (fewer than QUIET_ARRIVALS_PER_SECOND joining) ordinals are exact: the shard
counts are read consistently and the next ordinal in the interleaved order is taken with a
conditional write, so every visitor's place is one more than everyone's who joined before,
however many containers serve the link. A visitor who joins a minute that has no consumer
wakes one (room/wake.py): a quiet room lets them in at once instead of next minute.

With `join_work` set, a new place costs a solved proof-of-work challenge (core/join_work.py,
room/join_gate.py): a request without a solution is sent to the work page with a fresh
challenge, a solution is checked and spent (one conditional PutItem) before the place is
counted, and a refused one gets a fresh challenge. A returning visitor whose cookie still
holds a place keeps today's path: no work.
"""

from __future__ import annotations

import logging
import math
import random
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core import plain_page, telemetry
from beekeeper.core.datamodel import (
    CONFIG_FRESH_SECONDS,
    QUEUE_RETENTION_SECONDS,
    TEST_ORDINAL,
    TEST_PASS_PARAMETER,
    Token,
    arrival_shard_key,
    origin_url_with_token,
)
from beekeeper.core.headers import MARKETING_LINK_HEADERS, SHARED_CHALLENGE_HEADERS
from beekeeper.core.join_work import WORK_PARAMETER, Verdict, flood_factor
from beekeeper.core.plain_page import Brand
from beekeeper.core.polling import (
    POLL_AFTER_MIN_SECONDS,
    eta_seconds,
    poll_after_seconds,
    position,
)
from beekeeper.core.retry import Pauses
from beekeeper.core.routes import LEAVE, ROOM_PAGE
from beekeeper.core.serving import room_fragment
from beekeeper.core.settings import RoomSettings
from beekeeper.room.cookies import COOKIE_PATH, is_plain_http_loopback, set_cookie
from beekeeper.room.emf import DISCARD, MetricSink
from beekeeper.room.join_answers import (
    admitted_body,
    challenge_body,
    closed_body,
    json_answer,
    refused_body,
    room_off_body,
    unavailable_body,
    waiting_body,
    wants_json,
    work_location,
)
from beekeeper.room.join_gate import JoinGate
from beekeeper.room.leaving import Leaving
from beekeeper.room.pacing import MINUTE_SECONDS
from beekeeper.room.prequeue import join_prequeue
from beekeeper.room.returning import Way, returning_visit
from beekeeper.room.room_state import (
    RoomSnapshot,
    batch_get,
    draw_pending,
    error_code,
    in_prequeue,
    key,
    number,
    read_number,
    read_snapshot,
)
from beekeeper.room.test_visitors import Pass, take_pass
from beekeeper.room.wake import wake_if_idle

log = logging.getLogger("beekeeper.producer")

RETRY_AFTER_SECONDS = 30
# The cookie outlives the estimate: the governor may slow the line down after it was made.
MAX_AGE_SLACK_SECONDS = 30 * 60
# Below this many new visitors a second ordinals are exact: as the cached counters show for
# the whole room, and as this container counts its own (a crowd arriving at a room that was
# quiet a moment ago shows in every container's own count first).
QUIET_ARRIVALS_PER_SECOND = 20
# A room admitting at most this many a minute (20 a second) takes every ordinal exactly while no
# other container contends for it, however many join: its places are seconds of its line each.
EXACT_RATE_PER_MINUTE = QUIET_ARRIVALS_PER_SECOND * 60
# Conditional writes tried for an exact ordinal before falling back to a plain increment.
EXACT_ATTEMPTS = 3
# A pre-queue place written this close to the start (or after it) may be missed by the draw,
# whose trigger can run the moment the start comes: the visitor is also put in the queue, so
# nobody is lost; whichever place is reached first admits them, and only once.
PREQUEUE_SAFETY_SECONDS = 2.0


@dataclass
class SnapshotCache:
    """The config and shard counts one container last read, and when."""

    snapshot: RoomSnapshot | None = None
    read_at: float = -math.inf
    read_total: int = 0  # arrivals as last read (our own increments since are not in it)
    # New visitors per second between the last two reads (None until two reads were made).
    arrival_rate: float | None = None

    def get(self, now: float, read: Callable[[], RoomSnapshot]) -> RoomSnapshot:
        if self.snapshot is None or now - self.read_at >= CONFIG_FRESH_SECONDS:
            try:
                fresh = read()
                if self.snapshot is not None and now > self.read_at:
                    grown = fresh.arrivals_total - self.read_total
                    self.arrival_rate = max(0, grown) / (now - self.read_at)
                self.snapshot = fresh
                self.read_total = fresh.arrivals_total
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
            self.snapshot = self.snapshot.with_shard_counts(tuple(counts))


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
    # Starts a consumer (the trigger's invoke); None: never wake one (the trigger will).
    invoke_consumer: Callable[[dict[str, Any]], None] | None = None
    minute_seconds: float = MINUTE_SECONDS
    # The last minute this container tried to wake a consumer for: once a minute at most.
    woke_minute: int | None = None
    # This container's recent joins, and when a conditional write last found another
    # container's visitor in the way (contention: the room is not quiet).
    recent_joins: deque[float] = field(default_factory=deque)
    contended_at: float = -math.inf
    metrics: MetricSink = DISCARD
    # The proof of work and the room's keys (room/join_gate.py): every deployed or local room
    # has one (its tokens carry the room's mark); a room with join_work > 0 must.
    gate: JoinGate | None = None
    # The room's own public origin (its page's), which /leave takes a cookie's leave from.
    room_origin: str = ""
    # The client POST /leave writes with; the producer's own unless given (the simulator
    # counts the leave's calls apart).
    leave_dynamodb: Any = None
    pauses: Pauses = field(kw_only=True)  # the retries' (core/retry.py)

    def __post_init__(self) -> None:
        if self.settings.join_work and self.gate is None:
            raise ValueError("a room whose places cost work (join_work) needs its join gate")

    def handle(self, event: Mapping[str, Any]) -> dict[str, Any]:
        if isinstance(event, Mapping) and event.get("resource") == LEAVE.path:
            return self.leaving().handle(event)  # the function's second route
        method = event.get("httpMethod") if isinstance(event, Mapping) else None
        if not isinstance(method, str):
            return page(400, "Bad request", "This address only answers web browsers.", self.brand)
        # A native app asks for JSON (room/join_answers.py): the same decisions, as JSON.
        as_json = wants_json(event)
        if method.upper() != "GET":
            response = (
                json_answer(405, {"error": "the marketing link answers GET only"})
                if as_json
                else page(405, "Method not allowed", "Open this link in your browser.", self.brand)
            )
            response["headers"]["Allow"] = "GET"
            return response
        origin = self.settings.origin
        try:
            snapshot = self.snapshot()
            # Off: the room lets everyone in, each with a ticket (the consumers drain the line
            # unpaced): a new visitor gets a place without work and is in the shop moments
            # later, through the page; nobody reaches the shop without a ticket.
            off = not snapshot.config.enabled
            visit = returning_visit(
                event,
                dynamodb=self.dynamodb,
                table=self.table,
                settings=self.settings,
                snapshot=snapshot,
                now=self.clock(),
            )
            if visit.way is Way.SHOP and visit.token is not None:
                if as_json:  # the ticket in the answer, never in a URL
                    return json_answer(200, admitted_body(visit.token, visit.ticket, origin))
                return redirect(origin_url_with_token(origin, str(visit.token), visit.ticket))
            if visit.way is Way.KEEP_PLACE:
                if as_json and visit.token is not None:
                    return json_answer(200, self._waiting(snapshot, visit.token))
                # A returning visitor's turn may be a drawn rank, which only /polling knows: the
                # page asks when a draw was ever made.
                ordinal = visit.token.ordinal if visit.token and not snapshot.draw.state else None
                return redirect(room_location(snapshot, ordinal))
            if snapshot.config.closed and not off:
                if as_json:
                    return json_answer(200, closed_body(snapshot.config.message))
                return closed_page(snapshot.config.message, event, self.brand)
            if self.gate is not None and self.settings.join_work and not off:
                verdict = self._work_done(event)
                if verdict is not Verdict.OK:
                    return self._challenge(snapshot, verdict, as_json=as_json)
            test = self._test_visitor(event, snapshot)
            if test is None:
                return refused_pass(as_json, self.brand)
            token = self.join_line(snapshot, test=test)
            if visit.rejoins:
                self.metrics.count(telemetry.REJOINED)
        except Exception:
            log.exception("could not give a visitor a place in line")
            if self.settings.fail_open:
                return json_answer(200, room_off_body(origin)) if as_json else redirect(origin)
            if as_json:
                response = json_answer(503, unavailable_body(RETRY_AFTER_SECONDS))
            else:
                response = page(
                    503,
                    "Please try again in a moment",
                    "The waiting room is busy. Reload this page in half a minute to get your "
                    "place.",
                    self.brand,
                )
            response["headers"]["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        if as_json:
            response = json_answer(200, self._waiting(snapshot, token))
        else:
            response = redirect(room_location(snapshot, token.ordinal))
        response["headers"]["Set-Cookie"] = set_cookie(
            token,
            path=COOKIE_PATH,
            max_age=self._max_age(snapshot, token),
            secure=not is_plain_http_loopback(event),
        )
        return response

    @property
    def brand(self) -> Brand:
        """The room's name and look, for the pages the marketing link answers with."""
        return Brand.of(self.settings)

    def leaving(self) -> Leaving:
        """POST /leave (capacity mode), with this container's clients and the room's keys."""
        gate = self.gate
        if gate is None:
            raise ValueError("leaving needs the room's keys: give the producer its join gate")
        return Leaving(
            table=self.table,
            dynamodb=self.dynamodb if self.leave_dynamodb is None else self.leave_dynamodb,
            shop_origin=self.settings.origin,
            token_key=lambda: gate.keys().token,
            clock=self.clock,
            room_origin=self.room_origin,
        )

    def work_ms(self, snapshot: RoomSnapshot) -> float:
        """The work a new place costs now: the room's setting, raised while a flood lasts (the
        join rate is the arrival counters' growth between this container's config reads)."""
        factor = flood_factor(self.cache.arrival_rate, snapshot.config.rate)
        return self.settings.join_work * factor

    def _work_done(self, event: Mapping[str, Any]) -> Verdict | None:
        """The request's solution checked and spent; None when it brings none."""
        assert self.gate is not None
        text = query_value(event, WORK_PARAMETER)
        if text is None:
            return None
        verdict = self.gate.redeem(text, now=self.clock())
        if verdict is not Verdict.OK:
            log.info("a solution was refused: %s", verdict.value)
        return verdict

    def _challenge(
        self, snapshot: RoomSnapshot, verdict: Verdict | None, *, as_json: bool
    ) -> dict[str, Any]:
        """A challenge: the work page solves it and comes back (the bare link's answer is
        shared at the edge); an app gets its own as JSON, with why its solution earned no place
        (400) when it sent one."""
        assert self.gate is not None
        challenge = self.gate.challenge(now=self.clock(), work_ms=self.work_ms(snapshot))
        if not as_json:
            response = redirect(work_location(challenge))
            if verdict is None:
                # Given to every browser that follows the bare link for a moment (the edge's
                # copy): each adds its own nonce to the work (core/join_work.py).
                response["headers"].update(SHARED_CHALLENGE_HEADERS)
            return response
        if verdict is None:
            return json_answer(200, challenge_body(challenge))
        return json_answer(400, refused_body(challenge, verdict))

    def _waiting(self, snapshot: RoomSnapshot, token: Token) -> dict[str, Any]:
        """An app's place: where and when to ask /polling (its answers say the rest)."""
        config = snapshot.config
        if in_prequeue(config, snapshot.draw, self.clock()) or draw_pending(config, snapshot.draw):
            return waiting_body(token, position=None, poll_after=POLL_AFTER_MIN_SECONDS)
        place = position(token.ordinal, snapshot.passed_total)
        wait = poll_after_seconds(place, config.rate, claim_seconds=snapshot.claim_seconds)
        return waiting_body(token, position=place, poll_after=wait)

    def snapshot(self) -> RoomSnapshot:
        """The room's config and counters, as this container last read them (cached)."""
        return self.cache.get(self.clock(), self._read)

    def _read(self) -> RoomSnapshot:
        return read_snapshot(self.dynamodb, self.table, self.settings, pauses=self.pauses)

    def choose_shard(self, counts: tuple[int, ...]) -> int:
        """Power of two choices: of two random shards, the one with fewer arrivals."""
        shards = len(counts)
        if shards == 1:
            return 0
        first = self.rng.randrange(shards)
        second = (first + 1 + self.rng.randrange(shards - 1)) % shards  # another shard
        return first if counts[first] <= counts[second] else second

    def _test_visitor(self, event: Mapping[str, Any], snapshot: RoomSnapshot) -> bool | None:
        """Whether this join is the operator's test visitor (a pass spent: room/test_visitors.py);
        None when it brings a pass that is refused, or one while a draw is to come (a test
        visitor never takes a pre-queue place: the draw is for the event's visitors)."""
        text = query_value(event, TEST_PASS_PARAMETER)
        if text is None:
            return False
        config, draw = snapshot.config, snapshot.draw
        if in_prequeue(config, draw, self.clock()) or draw_pending(config, draw):
            return None
        verdict = take_pass(self.dynamodb, self.table, text, now=self.clock())
        return True if verdict is Pass.TAKEN else None

    def join_line(self, snapshot: RoomSnapshot, *, test: bool = False) -> Token:
        """A new visitor's place: counted, queued, and a consumer woken if the minute has none.
        A test visitor is queued and woken for alike, and counted nowhere (place 0)."""
        token = self._place(snapshot, test=test)
        if not test:
            self.metrics.count(telemetry.ARRIVALS)
        return token

    def _place(self, snapshot: RoomSnapshot, *, test: bool = False) -> Token:
        now = self.clock()
        # The room's mark in the id (core/datamodel.Token): what lets a leave tell a token the
        # room issued from a forged one.
        key = self.gate.keys().token if self.gate is not None else None
        exact = not test and self._quiet(now, snapshot.config.rate)
        ordinal = TEST_ORDINAL if test else self._ordinal(snapshot, exact=exact)
        token = Token.issue(ordinal, self.token_bytes, key)
        config, draw = snapshot.config, snapshot.draw
        if in_prequeue(config, draw, now) and config.enabled:
            # Before a scheduled start: a place in the pre-queue, drawn at the start.
            join_prequeue(self.dynamodb, self.table, token, now)
            if self.clock() < config.starts_at - PREQUEUE_SAFETY_SECONDS:
                return token
        # If this fails the counter has counted a visitor who is not in line: positions shown
        # are then one too high, never too low, and nobody is lost (the visitor gets a 503).
        self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=str(token))
        if not draw_pending(config, draw) or not config.enabled:
            self._wake(snapshot)
        return token

    def _quiet(self, now: float, rate: int) -> bool:
        """Whether this visitor's ordinal is taken exactly: in a quiet room, and in a slow one
        however fast visitors come (a place there is seconds of the line, and the busy path's
        shards would put a crowd's ordinals a few rounds of shards out of arrival order), unless
        another container just contended for the same ordinal."""
        joins = self.recent_joins
        joins.append(now)
        while joins and joins[0] <= now - 1.0:
            joins.popleft()
        if now - self.contended_at < CONFIG_FRESH_SECONDS:
            return False
        if rate <= EXACT_RATE_PER_MINUTE:
            return True
        arrivals = self.cache.arrival_rate
        return len(joins) < QUIET_ARRIVALS_PER_SECOND and (
            arrivals is None or arrivals < QUIET_ARRIVALS_PER_SECOND
        )

    def _ordinal(self, snapshot: RoomSnapshot, *, exact: bool) -> int:
        shards = len(snapshot.shard_counts)
        if exact:
            ordinal = self._exact_ordinal(shards)
            if ordinal is not None:
                return ordinal
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
        return (n - 1) * shards + shard + 1

    def _exact_ordinal(self, shards: int) -> int | None:
        """The next ordinal in the shards' interleaved order, or None after EXACT_ATTEMPTS.

        Ordinal (n - 1) x shards + k + 1 belongs to shard k's n-th arrival, so the smallest
        ordinal not yet given is shard argmin(count x shards + k)'s next one. A conditional
        write takes it; a visitor who joined meanwhile makes it fail, and we read again.
        """
        keys = [arrival_shard_key(k) for k in range(shards)]
        for _ in range(EXACT_ATTEMPTS):
            items = batch_get(self.dynamodb, self.table, keys, pauses=self.pauses, consistent=True)
            counts = [read_number(items.get(pk), "n") for pk in keys]
            shard = min(range(shards), key=lambda k: counts[k] * shards + k)
            count = counts[shard]
            condition = "n = :count" if count else "attribute_not_exists(n)"
            values = {":next": number(count + 1)}
            if count:
                values[":count"] = number(count)
            try:
                self.dynamodb.update_item(
                    TableName=self.table,
                    Key=key(arrival_shard_key(shard)),
                    UpdateExpression="SET n = :next",
                    ConditionExpression=condition,
                    ExpressionAttributeValues=values,
                )
            except ClientError as error:
                if error_code(error) != "ConditionalCheckFailedException":
                    raise
                self.contended_at = self.clock()
                continue
            self.cache.record_shard(shard, count + 1)
            return count * shards + shard + 1
        return None

    def _wake(self, snapshot: RoomSnapshot) -> None:
        now = self.clock()
        minute = int(now // self.minute_seconds)
        if self.invoke_consumer is None or self.woke_minute == minute:
            return
        self.woke_minute = minute
        try:
            wake_if_idle(
                dynamodb=self.dynamodb,
                table=self.table,
                now=now,
                rate=snapshot.config.rate,
                minute_seconds=self.minute_seconds,
                invoke_consumer=self.invoke_consumer,
            )
        except Exception:
            # The visitor is in the queue: the next minute's trigger plans for them.
            log.exception("could not wake a consumer for minute %s", minute)

    def _max_age(self, snapshot: RoomSnapshot, token: Token) -> int:
        position = token.ordinal - snapshot.admitted_total
        until_start = max(0, snapshot.config.starts_at - int(self.clock()))
        wait = until_start + eta_seconds(position, snapshot.config.rate)
        max_age = wait + self.settings.admission_validity_seconds + MAX_AGE_SLACK_SECONDS
        # In line at most the queue's retention, after the start for a pre-queue place.
        longest = until_start + QUEUE_RETENTION_SECONDS + self.settings.admission_validity_seconds
        return min(max_age, longest)


def query_value(event: Mapping[str, Any], name: str) -> str | None:
    """The query parameter `name`'s value (the last of several, as API Gateway's
    queryStringParameters keeps it), or None."""
    parameters = event.get("queryStringParameters")
    if not isinstance(parameters, Mapping):
        return None
    value = parameters.get(name)
    return value if isinstance(value, str) else None


def refused_pass(as_json: bool, brand: Brand) -> dict[str, Any]:
    """A test pass that is not valid (made by the operator's `beekeeper check` for its own
    visitors): no place, and a sentence that says what to do instead."""
    message = (
        "This link carries a test pass of the room's operator that is used up, expired or "
        "not this room's. Open the link without it to join the line."
    )
    if as_json:
        return json_answer(403, {"state": "refused", "message": message})
    return page(403, "This test link is not valid", message, brand)


def room_location(snapshot: RoomSnapshot, ordinal: int | None) -> str:
    """The page, with the visitor's turn in the fragment (core/serving.py): their ordinal;
    `prequeue` while a scheduled start's draw is still to decide it; none when only the page's
    own /polling can say (it asks)."""
    # Relative to the marketing link: the page is served under the same stage prefix.
    if draw_pending(snapshot.config, snapshot.draw) and snapshot.config.enabled:
        return f"{ROOM_PAGE.relative}#{room_fragment(None)}"
    if ordinal is None:
        return ROOM_PAGE.relative
    return f"{ROOM_PAGE.relative}#{room_fragment(ordinal)}"


def redirect(location: str) -> dict[str, Any]:
    headers = {**MARKETING_LINK_HEADERS, "Location": location}
    return {"statusCode": 302, "headers": headers, "body": ""}


def page(
    status: int,
    title: str,
    message: str,
    brand: Brand | None = None,
    *,
    more: str = "",
    language: str = "en",
) -> dict[str, Any]:
    """A page of a sentence or two in the room's look (core/plain_page.py): its name, accent
    colour and logo, like the waiting room page."""
    body = plain_page.render(
        brand or UNBRANDED,
        title=title,
        paragraphs=[text for text in (message, more) if text],
        language=language,
    )
    headers = {**MARKETING_LINK_HEADERS, "Content-Type": "text/html; charset=utf-8"}
    return {"statusCode": status, "headers": headers, "body": body}


# A page of a room whose settings are not at hand: the defaults' look, no name of an event.
UNBRANDED = Brand("Waiting room")


# What a new visitor reads once the operator closed the event (`beekeeper close`), in the
# language their browser asks for first: the page's own closedTitle and closedText (the Lambda
# asset does not ship the page; tests/unit/test_schedule_page.py holds the two equal).
CLOSED_WORDS = {
    "en": (
        "This event is over",
        "The waiting room is closed: nobody more is let in. Thank you for your patience.",
    ),
    "de": (
        "Diese Aktion ist beendet",
        "Der Warteraum ist geschlossen: Es wird niemand mehr eingelassen. Danke für Ihre Geduld.",
    ),
}


def closed_page(
    message: str, event: Mapping[str, Any], brand: Brand | None = None
) -> dict[str, Any]:
    """The closed event's page, in the room's look; the operator's message (checked when set)
    escaped for HTML."""
    headers = event.get("headers")
    accepted = next(
        (
            str(v)
            for k, v in (headers.items() if isinstance(headers, Mapping) else ())
            if str(k).lower() == "accept-language"
        ),
        "",
    )
    language = "de" if accepted.strip().lower().startswith("de") else "en"
    title, words = CLOSED_WORDS[language]
    return page(200, title, words, brand, more=message, language=language)
