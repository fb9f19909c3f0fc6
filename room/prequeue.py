"""A scheduled event's pre-queue: places before the start, the draw at it, and its drain.

Before `starts_at` the producer gives each new visitor a `p#<id>` item (`join_prequeue`), not a
queue message: a standard SQS queue can not hold a drawn order. At the first trigger run at or
after the start (`Draw.run`) the room draws the pre-queue into a uniformly random order
(core/schedule.py: HMAC-SHA256 under a secret committed to before the start) and writes it as
chunks `draw#<c>` of CHUNK_SIZE tokens. Consumers then admit the chunks in order, ahead of the
queue (`PrequeueSource`): a chunk is claimed atomically (a counter for fresh chunks, a string
set for chunks handed back), so two consumers never hold the same chunk; a lane whose minute
ends hands its chunk back with its progress; a chunk whose lane died is handed back by the
trigger two minutes later (`recover_stale`), and its admitted visitors are recognised by
their `v#` items. Ranks are then written to every `p#` item, front of the line first, so that
/polling can show each drawn visitor their place.

Every step is idempotent and safe under a double trigger delivery or a crash: the draw is
claimed with a lease, the order is a pure function of the secret and the ids, and the state
moves to "drawn" in one conditional write after every chunk is written.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core.datamodel import (
    ADMITTED_COUNTER_KEY,
    DRAW_COMMITTED,
    DRAW_DRAWING,
    DRAW_DRAWN,
    DRAW_KEY,
    PARTITION_KEY,
    QUEUE_RETENTION_SECONDS,
    TTL_ATTRIBUTE,
    Token,
    draw_chunk_key,
    prequeue_key,
)
from beekeeper.core.retry import Pauses
from beekeeper.core.schedule import (
    CHUNK_SIZE,
    PLACE_TTL_SECONDS,
    SECRET_BYTES,
    commitment,
    drawn_order,
)
from beekeeper.room.room_state import (
    RoomConfig,
    batch_get,
    error_code,
    key,
    number,
    read_number,
    read_text,
    write_all,
)

log = logging.getLogger("beekeeper.prequeue")

# A trigger that claimed the draw and died is taken over after this long (its timeout is 30 s).
DRAW_LEASE_SECONDS = 45
# Ranks written per trigger run at most before the run ends (the rest follow next minute).
RANK_BUDGET_SECONDS = 20.0
# A chunk claimed this many minutes ago and neither done nor handed back was held by a lane
# that died: the trigger hands it back.
STALE_CLAIM_MINUTES = 2
# Chunks the trigger looks at per run when handing back stale ones.
RECOVERY_WINDOW = 2_000
WRITE_BATCH = 25  # BatchWriteItem's limit


def _conditional(call: Callable[[], Any]) -> bool:
    """Run a conditional write: False when its condition failed."""
    try:
        call()
    except ClientError as error:
        if error_code(error) == "ConditionalCheckFailedException":
            return False
        raise
    return True


# -- the producer: a place in the pre-queue ------------------------------------------------


def join_prequeue(dynamodb: Any, table: str, token: Token, now: float) -> None:
    """The visitor's pre-queue item; it outlives the latest start a room accepts."""
    dynamodb.put_item(
        TableName=table,
        Item={
            **key(prequeue_key(token.id)),
            "ordinal": number(token.ordinal),
            "joined_at": number(now),
            TTL_ATTRIBUTE: number(now + PLACE_TTL_SECONDS),
        },
    )


def read_prequeue_item(dynamodb: Any, table: str, token_id: str) -> dict[str, Any] | None:
    item = dynamodb.get_item(TableName=table, Key=key(prequeue_key(token_id))).get("Item")
    return dict(item) if item else None


# -- the trigger: commit, draw, rank, recover ------------------------------------------------


@dataclass
class Draw:
    """The trigger's part: commit to a secret once a schedule exists, draw at the start, write
    the ranks, hand back chunks of lanes that died."""

    dynamodb: Any
    table: str
    clock: Callable[[], float]
    secret_bytes: Callable[[int], bytes] = secrets.token_bytes
    pauses: Pauses = field(kw_only=True)  # the retries' (core/retry.py)

    def read(self) -> dict[str, Any] | None:
        response = self.dynamodb.get_item(
            TableName=self.table, Key=key(DRAW_KEY), ConsistentRead=True
        )
        item = response.get("Item")
        return dict(item) if item else None

    def run(self, config: RoomConfig, minute: int) -> str:
        """One trigger run's share; returns the draw's state afterwards ("" for none)."""
        item = self.read()
        if item is None:
            if not config.starts_at:
                return ""
            item = self._commit()
        state = read_text(item, "state")
        now = self.clock()
        if state in (DRAW_COMMITTED, DRAW_DRAWING) and (
            config.starts_at == 0 or now >= config.starts_at
        ):
            drawn = self._draw(item, now)
            if drawn is None:
                return state
            item, state = drawn, DRAW_DRAWN
        if state == DRAW_DRAWN:
            self._rank(item, self.clock() + RANK_BUDGET_SECONDS)
            self.recover_stale(minute)
        return state

    def _commit(self) -> dict[str, Any]:
        secret = self.secret_bytes(SECRET_BYTES).hex()
        item = {
            **key(DRAW_KEY),
            "state": {"S": DRAW_COMMITTED},
            "secret": {"S": secret},
            "commitment": {"S": commitment(secret)},
            "committed_at": number(self.clock()),
        }
        put = _conditional(
            lambda: self.dynamodb.put_item(
                TableName=self.table, Item=item, ConditionExpression="attribute_not_exists(pk)"
            )
        )
        if put:
            log.info("the draw's secret is committed: sha256 %s", item["commitment"]["S"])
            return item
        return self.read() or item  # another run committed first: its secret stands

    def _draw(self, item: dict[str, Any], now: float) -> dict[str, Any] | None:
        """Claim the draw (a lease), write the order in chunks, then mark it drawn."""
        claimed = _conditional(
            lambda: self.dynamodb.update_item(
                TableName=self.table,
                Key=key(DRAW_KEY),
                UpdateExpression="SET #state = :drawing, drawing_at = :now",
                ConditionExpression="#state = :committed OR "
                "(#state = :drawing AND drawing_at < :stale)",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={
                    ":drawing": {"S": DRAW_DRAWING},
                    ":committed": {"S": DRAW_COMMITTED},
                    ":now": number(now),
                    ":stale": number(now - DRAW_LEASE_SECONDS),
                },
            )
        )
        if not claimed:
            log.info("another trigger run is drawing the pre-queue")
            return None
        secret = read_text(item, "secret")
        tokens = {token.id: token for token in self.prequeue_tokens()}
        order = drawn_order(secret, tokens)
        chunks = [order[i : i + CHUNK_SIZE] for i in range(0, len(order), CHUNK_SIZE)]
        write_all_batched(
            self.dynamodb,
            self.table,
            self.pauses,
            [
                {
                    **key(draw_chunk_key(c)),
                    "tokens": {"S": " ".join(str(tokens[i]) for i in ids)},
                    "first_rank": number(c * CHUNK_SIZE + 1),
                    TTL_ATTRIBUTE: number(now + QUEUE_RETENTION_SECONDS),
                }
                for c, ids in enumerate(chunks)
            ],
        )
        admitted = self.dynamodb.get_item(
            TableName=self.table, Key=key(ADMITTED_COUNTER_KEY), ConsistentRead=True
        ).get("Item")
        done = _conditional(
            lambda: self.dynamodb.update_item(
                TableName=self.table,
                Key=key(DRAW_KEY),
                UpdateExpression="SET #state = :drawn, #size = :size, chunks = :chunks, "
                "chunk_size = :chunk_size, admitted_base = :base, drawn_at = :now, "
                "next_chunk = :zero, ranked = :zero, done_below = :zero",
                ConditionExpression="#state = :drawing AND drawing_at = :claimed",
                ExpressionAttributeNames={"#state": "state", "#size": "size"},
                ExpressionAttributeValues={
                    ":drawn": {"S": DRAW_DRAWN},
                    ":drawing": {"S": DRAW_DRAWING},
                    ":size": number(len(order)),
                    ":chunks": number(len(chunks)),
                    ":chunk_size": number(CHUNK_SIZE),
                    ":base": number(read_number(admitted, "n")),
                    ":now": number(self.clock()),
                    ":claimed": number(now),
                    ":zero": number(0),
                },
            )
        )
        if not done:
            return None
        log.info("the pre-queue is drawn: %s visitors in %s chunks", len(order), len(chunks))
        return self.read()

    def prequeue_tokens(self) -> list[Token]:
        """Every pre-queue place, read consistently a page at a time."""
        found: list[Token] = []
        request: dict[str, Any] = {
            "TableName": self.table,
            "FilterExpression": "begins_with(pk, :prefix)",
            "ExpressionAttributeValues": {":prefix": {"S": prequeue_key("")}},
            "ConsistentRead": True,
        }
        while True:
            page = self.dynamodb.scan(**request)
            for item in page.get("Items", []):
                token_id = item[PARTITION_KEY]["S"].removeprefix(prequeue_key(""))
                token = Token.parse(f"{token_id}.{read_number(item, 'ordinal')}")
                if token is not None:
                    found.append(token)
            start = page.get("LastEvaluatedKey")
            if not start:
                return found
            request["ExclusiveStartKey"] = start

    def _rank(self, item: dict[str, Any], until: float) -> None:
        """Write the rank onto each drawn visitor's `p#` item, a chunk at a time, front first."""
        chunks = read_number(item, "chunks")
        ranked = read_number(item, "ranked")
        while ranked < chunks and self.clock() < until:
            chunk = self.dynamodb.get_item(
                TableName=self.table, Key=key(draw_chunk_key(ranked)), ConsistentRead=True
            ).get("Item")
            first = read_number(chunk, "first_rank")
            tokens = [Token.parse(text) for text in read_text(chunk, "tokens").split()]
            write_all_batched(
                self.dynamodb,
                self.table,
                self.pauses,
                [
                    {
                        **key(prequeue_key(token.id)),
                        "ordinal": number(token.ordinal),
                        "rank": number(first + offset),
                        TTL_ATTRIBUTE: number(self.clock() + QUEUE_RETENTION_SECONDS),
                    }
                    for offset, token in enumerate(tokens)
                    if token is not None
                ],
            )
            if not _conditional(
                lambda done=ranked: self.dynamodb.update_item(  # type: ignore[misc]
                    TableName=self.table,
                    Key=key(DRAW_KEY),
                    UpdateExpression="SET ranked = :next",
                    ConditionExpression="ranked = :done",
                    ExpressionAttributeValues={":next": number(done + 1), ":done": number(done)},
                )
            ):
                return  # another run is ranking too
            ranked += 1

    def recover_stale(self, minute: int) -> int:
        """Hand back chunks claimed by lanes that died (neither done nor handed back two
        minutes after their claim); move `done_below` past the chunks all admitted."""
        item = self.read() or {}
        low = read_number(item, "done_below")
        high = min(read_number(item, "next_chunk"), read_number(item, "chunks"))
        if high <= low:
            return 0
        keys = [draw_chunk_key(c) for c in range(low, min(high, low + RECOVERY_WINDOW))]
        chunks = batch_get(self.dynamodb, self.table, keys, pauses=self.pauses, consistent=True)
        released = set((item.get("released") or {}).get("SS", []))
        handed_back = 0
        first_open = None
        for c in range(low, low + len(keys)):
            chunk = chunks.get(draw_chunk_key(c))
            if chunk is None or "done" in chunk:
                continue
            first_open = c if first_open is None else first_open
            claimed = read_number(chunk, "claimed_minute", -1)
            if 0 <= claimed <= minute - STALE_CLAIM_MINUTES:
                handed_back += hand_back(self.dynamodb, self.table, c, claimed_minute=claimed)
            elif claimed < 0 and str(c) not in released:
                # Released by a lane that stopped before it could say so: offer it again.
                self._offer(c)
                handed_back += 1
        below = first_open if first_open is not None else low + len(keys)
        if below > low:
            _conditional(
                lambda: self.dynamodb.update_item(
                    TableName=self.table,
                    Key=key(DRAW_KEY),
                    UpdateExpression="SET done_below = :below",
                    ConditionExpression="done_below < :below",
                    ExpressionAttributeValues={":below": number(below)},
                )
            )
        if handed_back:
            log.warning("handed back %s pre-queue chunks of lanes that stopped", handed_back)
        return handed_back

    def _offer(self, chunk: int) -> None:
        offer(self.dynamodb, self.table, chunk)


def write_all_batched(
    dynamodb: Any, table: str, pauses: Pauses, items: list[dict[str, Any]]
) -> None:
    for start in range(0, len(items), WRITE_BATCH):
        write_all(
            dynamodb,
            table,
            [{"PutRequest": {"Item": item}} for item in items[start : start + WRITE_BATCH]],
            pauses=pauses,
        )


def hand_back(
    dynamodb: Any, table: str, chunk: int, *, claimed_minute: int, position: int | None = None
) -> bool:
    """Release a claimed chunk (with how far it got) for the next lane to claim first."""
    assignments = "REMOVE claimed_minute"
    values: dict[str, Any] = {":claimed": number(claimed_minute)}
    if position is not None:
        assignments = "SET pos = :pos " + assignments
        values[":pos"] = number(position)
    released = _conditional(
        lambda: dynamodb.update_item(
            TableName=table,
            Key=key(draw_chunk_key(chunk)),
            UpdateExpression=assignments,
            ConditionExpression="claimed_minute = :claimed AND attribute_not_exists(done)",
            ExpressionAttributeValues=values,
        )
    )
    if released:
        offer(dynamodb, table, chunk)
    return released


def offer(dynamodb: Any, table: str, chunk: int) -> None:
    """Put a chunk among those the next lanes claim first (a string set: adding twice is once)."""
    dynamodb.update_item(
        TableName=table,
        Key=key(DRAW_KEY),
        UpdateExpression="ADD released :chunk",
        ExpressionAttributeValues={":chunk": {"SS": [str(chunk)]}},
    )


# -- the consumer: the drawn order, chunk by chunk ------------------------------------------


@dataclass
class PrequeueSource:
    """One lane's supply of drawn visitors, in drawn order, a claimed chunk at a time."""

    dynamodb: Any
    table: str
    minute: int
    exhausted: bool = False  # no chunk to claim right now: the lane admits from the queue
    handed_out: int = 0
    chunk: int | None = None
    tokens: list[Token] = field(default_factory=list)
    offset: int = 0  # the next token of the chunk to hand out
    # Handed out, not yet written: id -> (chunk, offset in it).
    outstanding: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Chunks fully handed out whose last visitors are not written yet.
    finishing: set[int] = field(default_factory=set)
    # Handed out and not written (the table refused): offered again first.
    retry: list[Token] = field(default_factory=list)

    def take(self, wanted: int) -> list[Token]:
        """Up to `wanted` visitors in drawn order ([] when the drawn order is drained)."""
        taken = self.retry[:wanted]
        self.retry = self.retry[wanted:]
        while len(taken) < wanted and not self.exhausted:
            if self.chunk is None or self.offset >= len(self.tokens):
                if self.chunk is not None:
                    self._finish(self.chunk)
                if not self._claim():
                    self.exhausted = True
                    break
                continue
            assert self.chunk is not None
            token = self.tokens[self.offset]
            self.outstanding[token.id] = (self.chunk, self.offset)
            self.offset += 1
            taken.append(token)
        self.handed_out += len(taken)
        return taken

    @property
    def holding(self) -> bool:
        """Visitors handed out or offered again and not written yet."""
        return bool(self.outstanding)

    def settled(self, token_ids: list[str]) -> None:
        """These visitors were admitted (or found admitted already)."""
        for token_id in token_ids:
            self.outstanding.pop(token_id, None)
        for chunk in list(self.finishing):
            if not any(c == chunk for c, _ in self.outstanding.values()):
                self.finishing.discard(chunk)
                self._mark_done(chunk)

    def put_back(self, tokens: list[Token]) -> None:
        """Visitors handed out but not written: offered again first (still outstanding)."""
        self.retry = [t for t in tokens if t.id in self.outstanding] + self.retry

    def release(self) -> None:
        """The lane's minute is over: hand back what it holds, with how far it got."""
        holding = {c for c, _ in self.outstanding.values()} | self.finishing
        if self.chunk is not None and (self.offset < len(self.tokens) or self.chunk in holding):
            holding.add(self.chunk)
        for chunk in sorted(holding):
            offsets = [o for c, o in self.outstanding.values() if c == chunk]
            if chunk == self.chunk:
                offsets.append(self.offset)
            try:
                hand_back(
                    self.dynamodb,
                    self.table,
                    chunk,
                    claimed_minute=self.minute,
                    position=min(offsets) if offsets else 0,
                )
            except Exception:
                log.exception("could not hand back pre-queue chunk %s; the trigger will", chunk)
        self.outstanding.clear()
        self.finishing.clear()
        self.retry = []
        self.chunk = None
        self.tokens = []

    def _finish(self, chunk: int) -> None:
        if any(c == chunk for c, _ in self.outstanding.values()):
            self.finishing.add(chunk)
        else:
            self._mark_done(chunk)
        self.chunk = None
        self.tokens = []

    def _mark_done(self, chunk: int) -> None:
        try:
            self.dynamodb.update_item(
                TableName=self.table,
                Key=key(draw_chunk_key(chunk)),
                UpdateExpression="SET done = :yes",
                ExpressionAttributeValues={":yes": {"BOOL": True}},
            )
        except Exception:
            # Left claimed: the trigger hands it back later and its visitors are found admitted.
            log.exception("could not mark pre-queue chunk %s done", chunk)

    def _claim(self) -> bool:
        draw = self.dynamodb.get_item(
            TableName=self.table, Key=key(DRAW_KEY), ConsistentRead=True
        ).get("Item")
        if read_text(draw, "state") != DRAW_DRAWN:
            return False
        released = sorted(int(c) for c in (draw or {}).get("released", {}).get("SS", []))
        for chunk in released:
            if _conditional(
                lambda chunk=chunk: self.dynamodb.update_item(  # type: ignore[misc]
                    TableName=self.table,
                    Key=key(DRAW_KEY),
                    UpdateExpression="DELETE released :chunk",
                    ConditionExpression="contains(released, :name)",
                    ExpressionAttributeValues={
                        ":chunk": {"SS": [str(chunk)]},
                        ":name": {"S": str(chunk)},
                    },
                )
            ) and self._hold(chunk):
                return True
        chunks = read_number(draw, "chunks")
        while read_number(draw, "next_chunk") < chunks:
            response = self.dynamodb.update_item(
                TableName=self.table,
                Key=key(DRAW_KEY),
                UpdateExpression="ADD next_chunk :one",
                ExpressionAttributeValues={":one": number(1)},
                ReturnValues="UPDATED_NEW",
            )
            chunk = int(response["Attributes"]["next_chunk"]["N"]) - 1
            if chunk >= chunks:
                return False
            if self._hold(chunk):
                return True
            draw = {"next_chunk": number(chunk + 1)}
        return False

    def _hold(self, chunk: int) -> bool:
        """Mark the chunk as this lane's and read it; False if it is done or another's."""
        try:
            response = self.dynamodb.update_item(
                TableName=self.table,
                Key=key(draw_chunk_key(chunk)),
                UpdateExpression="SET claimed_minute = :minute",
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(done) AND "
                "attribute_not_exists(claimed_minute)",
                ExpressionAttributeValues={":minute": number(self.minute)},
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False
            raise
        item = response["Attributes"]
        tokens = [Token.parse(text) for text in read_text(item, "tokens").split()]
        self.chunk = chunk
        self.tokens = [token for token in tokens if token is not None]
        self.offset = min(read_number(item, "pos"), len(self.tokens))
        return True
