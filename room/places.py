"""Capacity mode: the places inside the shop, who holds them, and when one frees.

The room lets at most `max_inside` visitors hold a place at once. Who holds one is written on
their own `v#<id>` item (`state` admitted or inside, `expires_at` the place's deadline); how
many hold one is the `inside` counter. Both change together, in one transaction:

- **Admission** (`admit`): the counter goes up by the batch, on condition that it stays within
  `max_inside`, and each visitor's item is put, on condition that it does not exist yet (a
  visitor who left the line has an item saying so, and is never admitted). The place's
  deadline is the claim window. Before the transaction, the visitors' ids go into the
  deadline bucket `deadlines#<second>` of the warden's first look at them: an id there whose
  admission then failed is skipped by the warden, while a place without a bucket could never
  be found again.
- **Arrival and activity** (/enter, /client; core/sessions.py): the deadline moves to now +
  `session_minutes`, and the state becomes inside. Nothing else is written: a renewal is one
  UpdateItem of the visitor's own item, whatever the number inside.
- **Leaving** (/leave; core/sessions.py): the state becomes left and the item gets the
  `leaving` attribute, which puts it in the sparse `leaving` index.
- **Presence** (/presence; core/presence.py): a heartbeat of the shop's page holds the place
  for the grace: the deadline moves to now + `presence_grace_seconds`, which may be sooner
  than a session's.
- **Release** (`Warden`): a place frees when its holder left (the `leaving` index lists them)
  or when its deadline passed without a renewal (the `deadlines#<s>` buckets of the seconds
  gone by list them; a renewed one goes into the bucket of its new deadline, or in a room with
  presence no later than `look_within` from now, since a heartbeat may bring a deadline
  forward). A release is a
  transaction of the visitor's item (state ended or left, `place_freed`, out of the index, on
  condition that nobody released it already and, for a deadline, that it still stands) and
  the counter going down by one, so a place is never freed twice and never while it is held.

So a /client check or a /leave never writes a shared item, the deadline is noticed within a
second or two of passing (DynamoDB's TTL may lag by days), and a crash between two writes
never leaks a place. The counter is the one item every admission and release writes, in a
transaction: the admissions it allows are bounded by the transactions one item takes in turn
(a conflicting one is cancelled and retried), far above the turnover of any shop with a cap.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core.datamodel import (
    HOLDING_STATES,
    INSIDE_KEY,
    LEAVING_ATTRIBUTE,
    LEAVING_INDEX,
    LEAVING_VALUE,
    PARTITION_KEY,
    PLACE_FREED_ATTRIBUTE,
    STATE_ADMITTED,
    STATE_ENDED,
    STATE_LEFT,
    TEST_ATTRIBUTE,
    TTL_ATTRIBUTE,
    VISITOR_TTL_GRACE_SECONDS,
    WARDEN_KEY,
    Token,
    deadline_key,
    visitor_key,
)
from beekeeper.core.presence import look_within
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import RoomSettings, capped
from beekeeper.room.room_state import batch_get, error_code, key, number, read_number
from beekeeper.room.test_visitors import mark_of
from beekeeper.room.tickets import NO_TICKETS, TicketHook

log = logging.getLogger("beekeeper.places")

# Deadline seconds one warden run reads at most (a BatchGetItem takes 100 keys), and how far
# back the room's first run looks: every deadline lies a claim window after an admission, and
# the first run comes with the room's first trigger, before anyone can have been admitted.
BUCKETS_PER_RUN = 100
# Leavers one warden run releases at most (the rest wait a second for the next run).
LEAVERS_PER_RUN = 100
FIRST_LOOK_BACK_SECONDS = 60
THROTTLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TransactionConflict",
        "TransactionInProgressException",
        "ThrottlingError",
    }
)


def read_inside(dynamodb: Any, table: str) -> int:
    """The places held now (consistent: a release or admission a moment ago counts)."""
    response = dynamodb.get_item(TableName=table, Key=key(INSIDE_KEY), ConsistentRead=True)
    return read_number(response.get("Item"), "n")


def visitor_item(
    token: Token, *, admitted_at: int, settings: RoomSettings, tickets: TicketHook = NO_TICKETS
) -> dict[str, dict[str, str]]:
    """An admitted visitor's item in capacity mode: holds a place until the claim deadline
    (which is also when the visitor's ticket expires: the session itself is the shop's
    /client checks)."""
    expires_at = admitted_at + settings.claim_seconds
    return {
        **tickets.attributes(token, admitted_at, expires_at),
        PARTITION_KEY: {"S": visitor_key(token.id)},
        "ordinal": {"N": str(token.ordinal)},
        "admitted_at": number(admitted_at),
        "expires_at": number(expires_at),
        "state": {"S": STATE_ADMITTED},
        TTL_ATTRIBUTE: number(expires_at + settings.session_seconds + VISITOR_TTL_GRACE_SECONDS),
        **mark_of(token),
    }


@dataclass
class AdmitOutcome:
    written: list[str] = field(default_factory=list)  # ids admitted (a place each)
    taken: list[str] = field(default_factory=list)  # ids that already have an item
    full: bool = False  # the room had fewer places free than the batch asked for
    throttled: bool = False  # the table refused: nothing was written


def admit(
    dynamodb: Any,
    table: str,
    tokens: Sequence[Token],
    *,
    now: float,
    settings: RoomSettings,
    max_inside: int,
    tickets: TicketHook = NO_TICKETS,
) -> AdmitOutcome:
    """Admit `tokens` with a place each, all or none, in one transaction (see the module)."""
    outcome = AdmitOutcome()
    if not tokens:
        return outcome
    admitted_at = int(now)
    items = [
        visitor_item(token, admitted_at=admitted_at, settings=settings, tickets=tickets)
        for token in tokens
    ]
    # The warden's first look: a place's deadline only ever moves later than this (an arrival
    # or a renewal at t sets t + session, a heartbeat t + grace, and t is after the admission),
    # so the warden, which moves a look on to the deadline it finds (with presence: no later
    # than look_within), can never look too late.
    looks = [settings.claim_seconds, settings.session_seconds, look_within(settings)]
    first_look = admitted_at + min(look for look in looks if look is not None)
    counter: dict[str, Any] = {
        "TableName": table,
        "Key": key(INSIDE_KEY),
        "UpdateExpression": "ADD n :count",
        "ExpressionAttributeValues": {":count": number(len(tokens))},
    }
    if capped(max_inside):
        if len(tokens) > max_inside:
            outcome.full = True
            return outcome
        counter["ConditionExpression"] = "attribute_not_exists(n) OR n <= :limit"
        counter["ExpressionAttributeValues"][":limit"] = number(max_inside - len(tokens))
    actions: list[dict[str, Any]] = [{"Update": counter}]
    actions += [
        {
            "Put": {
                "TableName": table,
                "Item": item,
                "ConditionExpression": f"attribute_not_exists({PARTITION_KEY})",
            }
        }
        for item in items
    ]
    try:
        # First where the warden will look for the deadline (see the module).
        dynamodb.update_item(
            TableName=table,
            Key=key(deadline_key(first_look)),
            UpdateExpression="ADD ids :ids",
            ExpressionAttributeValues={":ids": {"SS": [t.id for t in tokens]}},
        )
        dynamodb.transact_write_items(TransactItems=actions)
    except ClientError as error:
        if error_code(error) != "TransactionCanceledException":
            if error_code(error) in THROTTLE_CODES:
                outcome.throttled = True
                return outcome
            raise
        reasons = [r.get("Code", "None") for r in error.response.get("CancellationReasons", [])]
        if any(code in THROTTLE_CODES for code in reasons):
            outcome.throttled = True
        if reasons and reasons[0] == "ConditionalCheckFailed":
            outcome.full = True
        outcome.taken = [
            token.id
            for token, code in zip(tokens, reasons[1 : 1 + len(tokens)], strict=False)
            if code == "ConditionalCheckFailed"
        ]
        return outcome
    outcome.written = [token.id for token in tokens]
    return outcome


@dataclass
class WardenReport:
    left: int = 0  # places freed because their holder left
    ended: int = 0  # places freed because their deadline passed
    no_shows: int = 0  # of those, admitted visitors who never arrived
    renewed: int = 0  # deadlines found moved on (their holder is active): looked at later


@dataclass
class Warden:
    """Frees the places of visitors who left or whose deadline passed (see the module)."""

    dynamodb: Any
    table: str
    clock: Callable[[], float]
    # In a room with presence, the longest a place may go unlooked at: a heartbeat may bring
    # its deadline forward, but never nearer than this to the moment it is sent
    # (core/presence.py). None: a deadline only ever moves later.
    look_within: int | None = None
    pauses: Pauses = field(kw_only=True)  # the retries' (core/retry.py)
    # Released visitors, so a second look in the same run costs nothing.
    _released: set[str] = field(default_factory=set)

    def run(self) -> WardenReport:
        report = WardenReport()
        now = self.clock()
        self._release_leavers(now, report)
        self._release_due(now, report)
        if report.left or report.ended:
            log.info(
                "places freed: %s left, %s ran out (%s no-shows)",
                report.left,
                report.ended,
                report.no_shows,
            )
        return report

    # -- leavers ----------------------------------------------------------------------------

    def _release_leavers(self, now: float, report: WardenReport) -> None:
        """Release the places of visitors who left (the `leaving` index, oldest first)."""
        response = self.dynamodb.query(
            TableName=self.table,
            IndexName=LEAVING_INDEX,
            KeyConditionExpression="#leaving = :yes",
            ExpressionAttributeNames={"#leaving": LEAVING_ATTRIBUTE},
            ExpressionAttributeValues={":yes": {"S": LEAVING_VALUE}},
            Limit=LEAVERS_PER_RUN,
        )
        ids = [item[PARTITION_KEY]["S"].removeprefix("v#") for item in response.get("Items", [])]
        items = self._visitors(ids)
        for token_id in ids:
            item = items.get(visitor_key(token_id))
            if item is None or LEAVING_ATTRIBUTE not in item:
                continue  # the index is behind the table: released already
            if "admitted_at" in item and PLACE_FREED_ATTRIBUTE not in item:
                if self._release(
                    token_id,
                    condition="#state = :left AND attribute_not_exists(place_freed)",
                    values={":left": {"S": STATE_LEFT}},
                    new_state=STATE_LEFT,
                ):
                    # A test visitor's place is freed like any other, and counted nowhere.
                    report.left += TEST_ATTRIBUTE not in item
                continue
            # Left while waiting (never held a place): out of the index, nothing to free.
            self.dynamodb.update_item(
                TableName=self.table,
                Key=key(visitor_key(token_id)),
                UpdateExpression=f"REMOVE {LEAVING_ATTRIBUTE}",
            )

    # -- deadlines ----------------------------------------------------------------------------

    def _release_due(self, now: float, report: WardenReport) -> None:
        """Look at the deadline buckets of every whole second that has gone by."""
        response = self.dynamodb.get_item(
            TableName=self.table, Key=key(WARDEN_KEY), ConsistentRead=True
        )
        current = math.floor(now)
        done = read_number(response.get("Item"), "done_through", current - FIRST_LOOK_BACK_SECONDS)
        # Oldest first, so a warden that fell behind catches up over a few runs.
        seconds = list(range(done + 1, min(current, done + 1 + BUCKETS_PER_RUN)))
        if not seconds:
            return
        buckets = batch_get(
            self.dynamodb,
            self.table,
            [deadline_key(s) for s in seconds],
            pauses=self.pauses,
            consistent=True,
        )
        due = sorted({i for b in buckets.values() for i in b.get("ids", {}).get("SS", [])})
        items = self._visitors(due)
        later: dict[int, list[str]] = {}
        for token_id in due:
            item = items.get(visitor_key(token_id))
            if item is None or PLACE_FREED_ATTRIBUTE in item:
                continue
            state = item.get("state", {}).get("S", "")
            if state not in HOLDING_STATES:
                continue  # left: the leavers' path releases it
            deadline = read_number(item, "expires_at")
            if deadline > now:
                # Renewed meanwhile: looked at again when it is due, or sooner with presence.
                if self.look_within is not None:
                    deadline = min(deadline, current + self.look_within)
                later.setdefault(deadline, []).append(token_id)
                report.renewed += 1
                continue
            if self._release(
                token_id,
                condition=(
                    "#state IN (:admitted, :inside) AND expires_at <= :now "
                    "AND attribute_not_exists(place_freed)"
                ),
                values={
                    ":admitted": {"S": HOLDING_STATES[0]},
                    ":inside": {"S": HOLDING_STATES[1]},
                    ":now": number(now),
                },
                new_state=STATE_ENDED,
            ):
                real = TEST_ATTRIBUTE not in item
                report.ended += real
                report.no_shows += real and state == STATE_ADMITTED
        for deadline, ids in later.items():
            self.dynamodb.update_item(
                TableName=self.table,
                Key=key(deadline_key(deadline)),
                UpdateExpression="ADD ids :ids",
                ExpressionAttributeValues={":ids": {"SS": ids}},
            )
        for bucket in buckets:
            self.dynamodb.delete_item(TableName=self.table, Key=key(bucket))
        try:
            self.dynamodb.update_item(
                TableName=self.table,
                Key=key(WARDEN_KEY),
                UpdateExpression="SET done_through = :s",
                ConditionExpression="attribute_not_exists(done_through) OR done_through < :s",
                ExpressionAttributeValues={":s": number(seconds[-1])},
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise  # another warden got further meanwhile: its progress stands

    # -- one release ---------------------------------------------------------------------------

    def _visitors(self, ids: Iterable[str]) -> dict[str, Any]:
        keys = [visitor_key(i) for i in ids if i not in self._released]
        if not keys:
            return {}
        return batch_get(self.dynamodb, self.table, keys, pauses=self.pauses, consistent=True)

    def _release(
        self, token_id: str, *, condition: str, values: dict[str, Any], new_state: str
    ) -> bool:
        """The visitor's item marked released, and the counter down by one: together."""
        try:
            self.dynamodb.transact_write_items(
                TransactItems=[
                    {
                        "Update": {
                            "TableName": self.table,
                            "Key": key(visitor_key(token_id)),
                            "UpdateExpression": (
                                "SET #state = :new_state, place_freed = :yes "
                                f"REMOVE {LEAVING_ATTRIBUTE}"
                            ),
                            "ConditionExpression": condition,
                            "ExpressionAttributeNames": {"#state": "state"},
                            "ExpressionAttributeValues": {
                                **values,
                                ":new_state": {"S": new_state},
                                ":yes": {"BOOL": True},
                            },
                        }
                    },
                    {
                        "Update": {
                            "TableName": self.table,
                            "Key": key(INSIDE_KEY),
                            "UpdateExpression": "ADD n :minus_one",
                            "ExpressionAttributeValues": {":minus_one": number(-1)},
                        }
                    },
                ]
            )
        except ClientError as error:
            if error_code(error) == "TransactionCanceledException":
                return False  # renewed, or released by another warden meanwhile
            raise
        self._released.add(token_id)
        return True


# How often a consumer that found the shop full looks at the counter again, and how often the
# minute's first consumer runs the warden: a place that frees is taken within seconds.
LOOK_AGAIN_SECONDS = 1.0
WARDEN_EVERY_SECONDS = 1.0


@dataclass
class PlaceKeeper:
    """A consumer's view of the places: how many are free (read at most every second, or at
    once after a refusal), and, for the minute's first consumer, the warden's rounds."""

    dynamodb: Any
    table: str
    clock: Callable[[], float]
    runs_warden: bool
    look_within: int | None = None  # the warden's (see Warden)
    free: int = 0
    read_at: float = -math.inf
    warden_at: float = -math.inf
    # The places the warden freed in this run, by why (the room's metrics count them).
    freed: WardenReport = field(default_factory=WardenReport)
    pauses: Pauses = field(kw_only=True)  # the retries' (core/retry.py)
    _warden: Warden = field(init=False)

    def __post_init__(self) -> None:
        self._warden = Warden(
            self.dynamodb, self.table, self.clock, self.look_within, pauses=self.pauses
        )

    def tick(self, now: float) -> None:
        if self.runs_warden and now - self.warden_at >= WARDEN_EVERY_SECONDS:
            self.warden_at = now
            try:
                report = self._warden.run()
            except Exception:
                log.exception("the warden's round failed; the next one tries again")
                return
            self.freed.left += report.left
            self.freed.ended += report.ended
            self.freed.no_shows += report.no_shows
            if report.left or report.ended:
                self.read_at = -math.inf  # places freed: look at once

    def room(self, now: float, max_inside: int) -> int | None:
        """Places free now (None: no cap)."""
        if not capped(max_inside):
            return None
        if now - self.read_at >= LOOK_AGAIN_SECONDS:
            self.free = max(0, max_inside - read_inside(self.dynamodb, self.table))
            self.read_at = now
        return self.free

    def took(self, count: int) -> None:
        self.free = max(0, self.free - count)

    def refused(self) -> None:
        """The shop was fuller than this consumer thought: read again before the next try."""
        self.free = 0
        self.read_at = self.clock()

    def next_look(self, now: float) -> float:
        return max(now, self.read_at + LOOK_AGAIN_SECONDS)
