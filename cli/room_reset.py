"""`beekeeper reset`: a room made ready for its next event without a redeploy.

What is emptied and what stays is the data model's (core/datamodel.py `RESET_*`,
docs/data-model.md "Reset"): the line (the queue, purged), every visitor's item (admissions,
places inside, the pre-queue), the draw, the counters, minutes, status copies and the
governor's state and history go; the config item (the settings: on/off, the rate, the cap; the
last event's hold, close and past start are cleared), the published ticket keys and the
ticket keys' secret stay, and so do the stack, its URLs and its dashboard. A ticket issued
before the reset no longer redeems: /client and /polling find no admission for it.

SQS allows one PurgeQueue a queue every 60 seconds and takes up to 60 seconds to finish one,
during which it may still deliver a message sent before ("PurgeQueue", Amazon SQS API
Reference). So the table is emptied only once the purge has had its 60 seconds: a consumer
that admitted a purged visitor meanwhile (a room reset while on, with --force) has its
admission deleted with the rest. A purge already under way (a reset run twice within a
minute) is waited for the same way. The local store finishes a purge at once.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.cli.errors import AwsError
from beekeeper.cli.table import MAX_ROUNDS, batch_get
from beekeeper.core.datamodel import (
    ADMITTED_COUNTER_KEY,
    PARTITION_KEY,
    arrival_shard_key,
    emptied_by_reset,
)
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import RoomSettings
from beekeeper.core.words import count
from beekeeper.room import room_state
from beekeeper.room.room_state import RoomConfig, snapshot_from_items, snapshot_keys

PURGE_SECONDS = 60  # SQS: one purge a minute, finished within a minute
BATCH_DELETES = 25  # BatchWriteItem's limit
_QUEUE_COUNTS = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]


@dataclass(frozen=True)
class ResetLook:
    """What a reset would throw away, said to the operator before they confirm."""

    config: RoomConfig
    waiting: int  # in line: arrived, neither admitted nor passed over
    queued: int  # messages in the queue, visible or being admitted
    admitted: int  # admitted since the last reset
    inside: int  # capacity mode: places held now
    prequeue: int  # a scheduled event's drawn pre-queue
    dead_letters: int | None  # kept: an operator should look at them


@dataclass
class ResetDone:
    purged: bool  # False: a purge was already under way (within the last minute)
    deleted: Counter[str] = field(default_factory=Counter)  # items deleted, by kind
    config: RoomConfig | None = None


class RoomReset:
    def __init__(
        self,
        *,
        dynamodb: Any,
        sqs: Any,
        table: str,
        queue_url: str,
        dead_letter_queue_url: str | None,
        settings: RoomSettings,
        minute_seconds: float,
        clock: Callable[[], float],
        pauses: Pauses,
        purge_seconds: float = PURGE_SECONDS,
    ) -> None:
        self._db = dynamodb
        self._sqs = sqs
        self._table = table
        self._queue_url = queue_url
        self._dead_letters = dead_letter_queue_url
        self._settings = settings
        self._minute_seconds = minute_seconds
        self._clock = clock
        self._pauses = pauses
        self._purge_seconds = purge_seconds

    def look(self) -> ResetLook:
        items = batch_get(self._db, self._table, snapshot_keys(self._settings), self._pauses)
        snapshot = snapshot_from_items(items, self._settings)
        visible, in_flight = self._depth(self._queue_url)
        dead = self._depth(self._dead_letters)[0] if self._dead_letters else None
        return ResetLook(
            config=snapshot.config,
            waiting=snapshot.waiting,
            queued=visible + in_flight,
            admitted=snapshot.admitted_since_reset,
            inside=snapshot.inside,
            prequeue=snapshot.draw.size,
            dead_letters=dead,
        )

    def run(self, say: Callable[[str], None]) -> ResetDone:
        """Purge, wait out the purge, empty the table, clear the last event from the config,
        republish the status copies."""
        done = ResetDone(purged=self._purge())
        if self._purge_seconds > 0:
            say(
                f"Purging the line: SQS takes up to {self._purge_seconds:g} s to finish, and "
                "the room's items are emptied after that ..."
            )
            self._pauses.sleep(self._purge_seconds)
        base = self._continue_ordinals()
        batch: list[str] = []
        for pk in self._doomed():
            batch.append(pk)
            done.deleted[kind_of(pk)] += 1
            if len(batch) == BATCH_DELETES:
                self._delete(batch)
                batch = []
        self._delete(batch)
        now = self._clock()
        config = room_state.read_config(self._db, self._table, self._settings)
        done.config = room_state.write_config(
            self._db,
            self._table,
            self._settings,
            now=now,
            # The governor's slowdown goes with its state: the operator's rate again.
            operator_rate=config.operator_rate,
            held=False,
            held_from=0,
            closed=False,
            message="",
            # A start that has passed was the last event's; one ahead is the next event's.
            starts_at=0 if 0 < config.starts_at <= now else None,
            reset_ordinal=base,
        )
        # Every place the reset took is passed: the next event's line starts at place 1.
        self._db.put_item(
            TableName=self._table,
            Item={**room_state.key(ADMITTED_COUNTER_KEY), "n": room_state.number(base)},
        )
        room_state.refresh_status(
            self._db,
            self._table,
            self._settings,
            now=now,
            pauses=self._pauses,
            config=done.config,
            minute_seconds=self._minute_seconds,
        )
        return done

    def _continue_ordinals(self) -> int:
        """The arrival shards levelled, so that every ordinal the room gives from now on is
        above every one it gave before; the bound those are under (their places are gone, and
        /polling says so: core.polling.is_before_reset)."""
        shards = [arrival_shard_key(k) for k in range(self._settings.arrival_shards)]
        items = batch_get(self._db, self._table, shards, self._pauses)
        counts = [room_state.read_number(items.get(pk), "n") for pk in shards]
        level = max(counts, default=0)
        for pk, shard_count in zip(shards, counts, strict=True):
            if shard_count >= level:
                continue
            try:
                self._db.update_item(
                    TableName=self._table,
                    Key=room_state.key(pk),
                    UpdateExpression="SET n = :level",
                    # A visitor who joined meanwhile may have taken it past the level already.
                    ConditionExpression="attribute_not_exists(n) OR n < :level",
                    ExpressionAttributeValues={":level": room_state.number(level)},
                )
            except ClientError as error:
                if room_state.error_code(error) != "ConditionalCheckFailedException":
                    raise
        return level * len(shards)

    # -- the queue ---------------------------------------------------------------------------

    def _purge(self) -> bool:
        try:
            self._sqs.purge_queue(QueueUrl=self._queue_url)
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", ""))
            if code.endswith("PurgeQueueInProgress"):
                return False  # purged within the last minute: that purge empties the line
            raise
        return True

    def _depth(self, url: str | None) -> tuple[int, int]:
        if not url:
            return 0, 0
        found = self._sqs.get_queue_attributes(QueueUrl=url, AttributeNames=_QUEUE_COUNTS)
        attributes = found.get("Attributes", {})
        return (
            int(attributes.get(_QUEUE_COUNTS[0], 0)),
            int(attributes.get(_QUEUE_COUNTS[1], 0)),
        )

    # -- the table ---------------------------------------------------------------------------

    def _doomed(self) -> Iterator[str]:
        """Every key the reset deletes, page by page (a Scan of the keys alone)."""
        current = math.floor(self._clock() / self._minute_seconds)
        request: dict[str, Any] = {
            "TableName": self._table,
            "ProjectionExpression": "#pk",
            "ExpressionAttributeNames": {"#pk": PARTITION_KEY},
            "ConsistentRead": True,
        }
        while True:
            page = self._db.scan(**request)
            for item in page.get("Items", []):
                pk = item[PARTITION_KEY]["S"]
                if emptied_by_reset(pk, current_minute=current):
                    yield pk
            last = page.get("LastEvaluatedKey")
            if not last:
                return
            request["ExclusiveStartKey"] = last

    def _delete(self, keys: list[str]) -> None:
        if not keys:
            return
        try:
            room_state.write_all(
                self._db,
                self._table,
                [{"DeleteRequest": {"Key": room_state.key(pk)}} for pk in keys],
                pauses=self._pauses,
                attempts=MAX_ROUNDS,
            )
        except room_state.Unprocessed as error:
            raise AwsError(
                "DynamoDB kept refusing the reset's deletes (the table is throttled); wait a "
                "moment and run `beekeeper reset` again: it carries on where it stopped."
            ) from error


# What the operator is told was deleted, by the key's kind (docs/data-model.md): a noun, and
# its plural where adding an s would not make it.
KINDS = {
    "v#": "visitor",
    "p#": "pre-queue place",
    "draw": "draw item",
    "draw#": "draw item",
    "arrivals#": "counter",
    "admitted": "counter",
    "inside": "counter",
    "minute#": "minute",
    "deadlines#": "capacity bookkeeping item",
    "warden": "capacity bookkeeping item",
    "status#": "status copy",
    "governor": "governor item",
    "governor-log": "governor item",
}
PLURALS = {"status copy": "status copies"}


def kind_of(pk: str) -> str:
    prefix = pk.split("#", 1)[0] + "#" if "#" in pk else pk
    return KINDS.get(prefix, "other item")


def deleted_said(kind: str, n: int) -> str:
    """ "3 status copies", "1 visitor": how many items of a kind were deleted."""
    return count(n, kind, PLURALS.get(kind))
