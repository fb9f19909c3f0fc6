"""One lane of a minute's admissions: visitors go in as soon as their slot allows, losing nobody.

A consumer owns one lane of the minute's admission lattice (room/pacing.py): it may admit a
visitor whenever one of its slots has fallen due, keeping at most one batch of due slots in
hand. So a visitor who joins while the room has room goes straight in (the consumer is
long-polling the queue and has a slot), and a backlog is admitted evenly at exactly the rate.

The loop counts visitors, not receive calls, and runs until the minute's span ends. When it
receives and how (a whole batch as it falls due from a backlog, a gathered few from a
trickle, a long poll on an empty queue) is `pacing.ReceiveRhythm`'s decision. Every
CONFIG_EVERY_SECONDS it reads the room's config (every second while it admits nobody): a live
rate change starts a new lattice from that moment, a hold stops it at its announced moment, and
a room switched off lets its whole line in, unpaced.

Exactly once, as far as SQS allows: a message is deleted only after its visitor's item was
written; a write that keeps failing hands the message back to the queue. A duplicate delivery
is recognised before it uses a slot: by an in-memory set of ids this consumer admitted, and by
a consistent read of `v#<id>` for ids admitted by another consumer or an earlier minute.
Two copies received by two consumers at once both pass that read; the admission write is
therefore conditional on the visitor having no item yet, so the second write is refused, never
signs a second ticket nor wipes a redeem, and its copy is deleted without using a slot.
"""

from __future__ import annotations

import enum
import logging
import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Unpack

from botocore.exceptions import ClientError

from beekeeper.core import telemetry
from beekeeper.core.datamodel import (
    ADMITTED_COUNTER_KEY,
    CONFIG_FRESH_SECONDS,
    CONFIG_KEY,
    DRAW_KEY,
    PARTITION_KEY,
    PASSED_OVER_ATTRIBUTE,
    STATE_LEFT,
    TTL_ATTRIBUTE,
    VISITOR_TTL_GRACE_SECONDS,
    Token,
    minute_key,
    visitor_key,
)
from beekeeper.core.presence import look_within
from beekeeper.core.retry import Backoff, Pauses
from beekeeper.core.settings import Mode, RoomSettings
from beekeeper.room import places
from beekeeper.room.emf import DISCARD, MetricSink
from beekeeper.room.pacing import (
    RECEIVE_BATCH,
    Flow,
    LanePacer,
    NextReceive,
    ReceiveRhythm,
    minute_span,
)
from beekeeper.room.places import PlaceKeeper
from beekeeper.room.prequeue import PrequeueSource
from beekeeper.room.push import StatePush
from beekeeper.room.room_state import (
    DrawStatus,
    RoomConfig,
    batch_get,
    draw_pending,
    error_code,
    key,
    number,
)
from beekeeper.room.status_publisher import StatusPublisher
from beekeeper.room.test_visitors import mark_of
from beekeeper.room.tickets import NO_TICKETS, TicketHook
from beekeeper.room.wiring import RoomWiring

log = logging.getLogger("beekeeper.consumer")

# Shortest sleep: the last slots of a busy span fall due within a millisecond of its end.
MIN_SLEEP_SECONDS = 1e-6
# A lane reads the config this often (a producer's cache: CONFIG_FRESH_SECONDS, so a raised
# rate applies within it), and while the room admits nobody (held, closed, a draw pending)
# every second, so that `on` or a resume lets the line move at once (docs/pipeline.md: within
# 5 s). Not more often while it admits: with reads every 2.5 s, the simulator's 100,000/min
# with every fault at once (tests/unit/pipeline/test_pipeline_simulator.py) admitted one
# visitor fewer than the rate in its minute.
CONFIG_EVERY_SECONDS = CONFIG_FRESH_SECONDS
STILL_CONFIG_SECONDS = 1.0


class LaneMode(enum.Enum):
    """How a lane admits, by the room's config."""

    PACED = "paced"  # on the minute's lattice at the rate
    DRAIN = "drain"  # the room is off: everyone in line goes in, as fast as the lane can
    STILL = "still"  # held, closed, or a scheduled start's draw pending: nobody


# Tries of one batch's write before its unwritten visitors go back to the queue.
QUICK_WRITE_ATTEMPTS = 2
# Once most of a lane's recent batches were throttled (THROTTLED_OF_RECENT of the last
# RECENT_BATCHES), each batch first pauses (at most 50 ms, doubling per batch up to 1 s; full
# jitter, core/retry.py): a table that stays throttled is given time; the odd refusal is not.
RECENT_BATCHES = 10
THROTTLED_OF_RECENT = 8
THROTTLE_BACKOFF = Backoff(first=0.05, cap=1.0)
# Unexpected failures in a row retried at once; after that the lane pauses, longer each time
# (at most 10 ms, doubling up to 1 s; full jitter).
QUICK_RETRIES = 4
FAILURE_BACKOFF = Backoff(first=0.01, cap=1.0)
RETRYABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "TransactionInProgressException",
    }
)
# The admission write's condition: the visitor has no item yet (BatchWriteItem takes no
# condition, so the write is a TransactWriteItems of one conditional Put per visitor), and the
# cancellation reason that means "admitted already".
NOT_ADMITTED_YET = f"attribute_not_exists({PARTITION_KEY})"
TAKEN = "ConditionalCheckFailed"


class AssignmentError(ValueError):
    """The trigger's (or the producer's) payload is not a consumer assignment."""


@dataclass(frozen=True)
class Assignment:
    """One lane of one minute: the minute's span, the rate planned and this lane's place."""

    minute: int
    index: int
    consumers: int
    rate: int
    start: float
    deadline: float
    minute_seconds: float = 60.0
    woken: bool = False  # started by a visitor joining a minute that had no consumer

    @classmethod
    def lane(
        cls,
        minute: int,
        index: int,
        consumers: int,
        rate: int,
        minute_seconds: float,
        *,
        woken: bool = False,
    ) -> Assignment:
        """Lane `index` of the minute's `consumers`, over the minute's span (pacing.py)."""
        start, deadline = minute_span(minute, minute_seconds)
        return cls(minute, index, consumers, rate, start, deadline, minute_seconds, woken)

    @classmethod
    def from_payload(cls, payload: object) -> Assignment:
        if not isinstance(payload, Mapping):
            raise AssignmentError("the consumer expects the trigger's JSON object")
        try:
            assignment = cls(
                minute=int(payload["minute"]),
                index=int(payload["index"]),
                consumers=int(payload["consumers"]),
                rate=int(payload["rate"]),
                start=float(payload["start"]),
                deadline=float(payload["deadline"]),
                minute_seconds=float(payload.get("minute_seconds", 60)),
                woken=bool(payload.get("woken", False)),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise AssignmentError(f"bad consumer assignment {payload!r}: {error}") from error
        if (
            assignment.rate < 1
            or assignment.index < 0
            or assignment.consumers < 1
            or assignment.index >= assignment.consumers
            or not assignment.minute_seconds > 0
            or not assignment.deadline >= assignment.start
        ):
            raise AssignmentError(f"bad consumer assignment {payload!r}")
        return assignment

    def to_payload(self) -> dict[str, Any]:
        return {
            "minute": self.minute,
            "index": self.index,
            "consumers": self.consumers,
            "rate": self.rate,
            "start": self.start,
            "deadline": self.deadline,
            "minute_seconds": self.minute_seconds,
            "woken": self.woken,
        }


@dataclass
class ConsumerReport:
    admitted: int = 0  # real visitors: test visitors (`beekeeper check`) are `tests`
    tests: int = 0
    duplicates: int = 0
    malformed: int = 0
    receives: int = 0
    abandoned_batches: int = 0
    forfeited: int = 0  # slots that fell due with nobody to admit (or while the lane stalled)
    skipped: int = 0  # visitors who left the line before their turn (capacity mode)
    write_retries: int = 0
    # Seconds each admitted visitor waited: from joining the line (the message's SentTimestamp)
    # or, drawn from a scheduled event's pre-queue, from the start.
    waits: list[float] = field(default_factory=list)


@dataclass
class Written:
    """What one admission write did: who was admitted, who had been admitted already (by
    another delivery of their message, after this one's read), whether to keep the rest."""

    written: list[str] = field(default_factory=list)
    taken: list[str] = field(default_factory=list)
    keep: bool = False  # the table refused: the unwritten stay in flight with this consumer


def cancellation_reasons(error: ClientError) -> list[str]:
    """A cancelled transaction's reason per action, in order ("None" for an action that
    would have succeeded)."""
    return [r.get("Code", "None") for r in error.response.get("CancellationReasons", [])]


@dataclass
class Consumer:
    settings: RoomSettings
    table: str
    queue_url: str
    dynamodb: Any
    sqs: Any
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    pauses: Pauses  # the retries' (core/retry.py)
    report: ConsumerReport = field(default_factory=ConsumerReport)
    # ids this consumer admitted: a later copy of their message is deleted without a read.
    seen: set[str] = field(default_factory=set)
    # The admitted counter after this consumer's last increment (feeds the status copies).
    admitted_total: int | None = None
    # Whether each of the lane's recent batches was throttled, and the backoffs in a row.
    recent_throttles: deque[bool] = field(default_factory=lambda: deque(maxlen=RECENT_BATCHES))
    backoffs: int = 0
    # Visitors received but not yet written because the table throttled (or, in capacity
    # mode, the shop filled up meanwhile): written first next.
    carry: dict[str, tuple[Token, list[str]]] = field(default_factory=dict)
    # When the last receive returned: the moment its visitors took their slots.
    received_at: float = math.inf
    # Capacity mode: the places, and the live cap (RoomConfig.max_inside; 0: lifted).
    places: PlaceKeeper | None = None
    max_inside: int = 0
    # Signs each admitted visitor's ticket (room/tickets.py), stored on their item.
    tickets: TicketHook = NO_TICKETS
    # A scheduled event's drawn pre-queue, admitted ahead of the queue (room/prequeue.py).
    source: PrequeueSource | None = None
    # When each visitor received and not admitted yet joined the line (epoch s), and the
    # scheduled start the drawn pre-queue's waits count from (0: none).
    joined_at: dict[str, float] = field(default_factory=dict)
    event_start: int = 0
    # The config as last read (None before the first read), and whether a scheduled start's
    # draw is still to be made.
    config: RoomConfig | None = None
    awaiting_draw: bool = False
    # The room's channel: the status copies' writes tell waiting pages of a change.
    push: StatePush | None = None

    def run(self, assignment: Assignment) -> ConsumerReport:
        deadline = assignment.deadline
        pacer = LanePacer(
            span_start=assignment.start,
            span_end=deadline,
            rate=assignment.rate,
            index=assignment.index,
            lanes=assignment.consumers,
            minute_seconds=assignment.minute_seconds,
        )
        publisher = StatusPublisher(
            self.dynamodb,
            self.table,
            self.settings,
            periodic=assignment.index == 0,
            pauses=self.pauses,
            minute_seconds=assignment.minute_seconds,
            push=self.push,
        )
        rhythm = ReceiveRhythm(deadline=deadline)
        if self.settings.mode is Mode.CAPACITY:
            self.max_inside = self.settings.max_inside
            self.places = PlaceKeeper(
                self.dynamodb,
                self.table,
                self.clock,
                runs_warden=assignment.index == 0,
                look_within=look_within(self.settings),
                pauses=self.pauses,
            )
        # The config is read at once: a held room, or a draw still pending, admits nobody.
        next_config = self.clock()
        was = LaneMode.PACED
        failures = 0
        while True:
            now = self.clock()
            if now >= deadline:
                break
            if now >= next_config:
                self._follow_config(pacer, now, assignment.minute)
                # A room that admits nobody is looked at again soon: a resume, `on` or a raised
                # rate lets the line move within a second or so.
                still = self.lane_mode(now) is LaneMode.STILL
                next_config = now + (STILL_CONFIG_SECONDS if still else CONFIG_EVERY_SECONDS)
            mode = self.lane_mode(now)
            if mode is LaneMode.PACED and was is not LaneMode.PACED:
                # Admitting again after a hold, a close or `off`: a new lattice from now, with
                # an empty bank (slots that fell due meanwhile are not owed to anyone).
                pacer.restart(now)
            was = mode
            publisher.tick(now)
            if self.places is not None:
                self.places.tick(now)
            if mode is LaneMode.STILL:
                self.sleep(max(MIN_SLEEP_SECONDS, min(next_config, deadline) - now))
                continue
            # An announced hold: the lane stops then, taking first what fell due by then.
            stop = self.hold_at(now) or deadline
            if mode is LaneMode.DRAIN:
                plan = NextReceive(RECEIVE_BATCH, now, long_poll=rhythm.flow is not Flow.BACKLOG)
                ask = RECEIVE_BATCH
            else:
                plan = rhythm.next(pacer, now)
                if plan.at > stop and pacer.allowance(stop) > 0:
                    plan = NextReceive(plan.want, stop, long_poll=False)
                if plan.at > now:
                    wake = min(plan.at, next_config, deadline)
                    self.sleep(max(MIN_SLEEP_SECONDS, wake - now))
                    continue
                ask = min(RECEIVE_BATCH, pacer.allowance(now))
            room = self.places.room(now, self.max_inside) if self.places is not None else None
            if room is not None:
                if room <= 0:
                    # The shop is full: nobody is received until a place frees.
                    wake = min(self.places.next_look(now), next_config, deadline)  # type: ignore[union-attr]
                    self.sleep(max(MIN_SLEEP_SECONDS, wake - now))
                    continue
                ask = min(ask, room)
            # SQS waits whole seconds: the last long poll may end after the span, and whoever
            # it brings then is handed back (_admit_batch). Before an announced hold the lane
            # waits on the queue only while a whole second is left.
            wait = max(1, int(min(CONFIG_FRESH_SECONDS, stop - now))) if plan.long_poll else 0
            if wait and stop < deadline and stop - now < 1:
                self.sleep(max(MIN_SLEEP_SECONDS, stop - now))
                continue
            try:
                # The drawn pre-queue first; the queue once it has nothing more to hand out.
                drawn = self._admit_prequeue(ask, assignment, deadline)
                received, admitted = drawn or self._admit_batch(ask, wait, assignment, stop)
                failures = 0
            except Exception:
                # An unexpected failure in the middle of a batch: what was not written went
                # back to the queue in _admit_batch; carry on with the minute.
                self.report.abandoned_batches += 1
                failures += 1
                log.exception("a batch failed; its visitors stay in the queue")
                if failures > QUICK_RETRIES:
                    # A lone failure is retried at once (waiting would forfeit slots); a run
                    # of them backs off.
                    self.pauses.before_retry(FAILURE_BACKOFF, failures - QUICK_RETRIES - 1)
                continue
            now = self.clock()
            if mode is LaneMode.PACED:
                # Each visitor took a slot when the queue handed them over; slots that fell due
                # while their writes went on stay in the bank rather than being forfeited.
                pacer.take(admitted, min(now, self.received_at))
            if admitted:
                publisher.admitted(now, self.admitted_total)
            rhythm.received(ask, received, now, pacer)
        # Whoever the table refused until the end goes back to the queue for the next minute.
        self._release([h for _, handles in self.carry.values() for h in handles])
        if self.source is not None:
            self.source.release()
        self.carry.clear()
        self.joined_at.clear()
        publisher.final(self.clock(), self.admitted_total)
        self.report.forfeited = pacer.forfeited
        log.info(
            "minute %s consumer %s of %s%s: admitted %s (rate %s; %s duplicates, %s receives, "
            "%s slots unused)",
            assignment.minute,
            assignment.index,
            assignment.consumers,
            " (woken)" if assignment.woken else "",
            self.report.admitted,
            pacer.rate,
            self.report.duplicates,
            self.report.receives,
            pacer.forfeited,
        )
        return self.report

    def _follow_config(self, pacer: LanePacer, now: float, minute: int) -> None:
        """Re-read the live config: a new rate starts a new lattice; held, closed or a pending
        draw admits nobody, off lets the line in; a new cap counts from now; a drawn pre-queue
        goes first. A read that fails keeps the last config."""
        try:
            items = batch_get(
                self.dynamodb,
                self.table,
                [CONFIG_KEY, DRAW_KEY],
                pauses=self.pauses,
                consistent=True,
            )
        except Exception:
            log.exception("could not re-read the config; carrying on with the last one")
            return
        config = RoomConfig.from_item(items.get(CONFIG_KEY), self.settings)
        draw = DrawStatus.from_item(items.get(DRAW_KEY))
        self.config = config
        self.awaiting_draw = draw_pending(config, draw)
        self.event_start = config.starts_at
        pacer.change_rate(now, config.rate)
        self.max_inside = config.max_inside
        if draw.drawn:
            if self.source is None:
                self.source = PrequeueSource(self.dynamodb, self.table, minute)
            elif self.source.exhausted:
                self.source.exhausted = False  # look again: a lane may have handed one back

    def lane_mode(self, now: float) -> LaneMode:
        """How the lane admits at `now`, by the config it read last."""
        config = self.config
        if config is None:
            return LaneMode.PACED
        if not config.enabled:
            return LaneMode.DRAIN
        if config.admits(now) and not self.awaiting_draw:
            return LaneMode.PACED
        return LaneMode.STILL

    def hold_at(self, now: float) -> float | None:
        """When an announced hold stops this lane (None: none is coming)."""
        config = self.config
        return float(config.held_from) if config and config.hold_pending(now) else None

    def _admit_prequeue(
        self, wanted: int, assignment: Assignment, deadline: float
    ) -> tuple[int, int] | None:
        """Admit up to `wanted` visitors of the drawn pre-queue, in drawn order; None when it
        has nobody to hand out (drained, or every chunk held by other lanes)."""
        if self.source is None:
            return None
        tokens = self.source.take(wanted)
        if not tokens:
            return None
        self.received_at = self.clock()
        known = [t.id for t in tokens if t.id in self.seen]
        fresh: dict[str, tuple[Token, list[str]]] = {
            t.id: (t, []) for t in tokens if t.id not in self.seen
        }
        try:
            self._passed_over(fresh)  # already admitted (a lane that stopped), or left
            found = [t.id for t in tokens if t.id not in fresh and t.id not in known]
            outcome = self._write(list(fresh.values()), deadline)
            written = outcome.written
            if self.places is not None:
                self.places.took(len(written))
        except BaseException:
            self.source.put_back(tokens)
            raise
        self.report.admitted += len(written)
        self.report.duplicates += len(found) + len(outcome.taken)
        self.seen.update(written)
        self.seen.update(outcome.taken)
        if self.event_start:
            admitted_at = self.clock()
            self.report.waits.extend(admitted_at - self.event_start for _ in written)
        self.source.settled([*known, *found, *outcome.taken, *written])
        done = set(written)
        self.source.put_back([t for t in tokens if t.id in fresh and t.id not in done])
        if written:
            self._count(len(written), assignment.minute)
        return len(tokens), len(written)

    def _admit_batch(
        self, wanted: int, wait: int, assignment: Assignment, deadline: float
    ) -> tuple[int, int]:
        """Admit up to `wanted` visitors: those carried over first, then newly received ones,
        if the receive came back before `deadline` (the span's end, or an announced hold).

        Returns (visitors handled, admitted): handled counts the carried ones too, so a lane
        busy with a throttled table is not taken for one facing an empty queue.
        """
        carried = list(self.carry.values())[:wanted]
        room = wanted - len(carried)
        messages = self._receive(room, wait) if room > 0 else []
        now = self.received_at = self.clock()
        if messages and (now > deadline or (wait and now >= deadline)):
            # The span is over: these visitors are the next minute's. Hidden until its span
            # starts, so that this minute's other consumers, whose last long polls are also
            # running out, do not pass them around (every receive counts towards the
            # dead-letter queue). A hold came: back at once, for whoever resumes.
            next_start, _ = minute_span(assignment.minute + 1, assignment.minute_seconds)
            hide = next_start - now if deadline >= assignment.deadline else 0
            self._release([m["ReceiptHandle"] for m in messages], hide=hide)
            return 0, 0
        if not messages and not carried:
            return 0, 0
        fresh: dict[str, tuple[Token, list[str]]] = {}  # id -> token, receipt handles
        done: list[str] = []  # receipt handles safe to delete (already admitted)
        for message in messages:
            handle = message["ReceiptHandle"]
            token = Token.parse(message.get("Body"))
            if token is None:
                # Not sent by the producer: leave it; after 5 receives it moves to the DLQ.
                self.report.malformed += 1
                log.error(
                    "malformed message %s left for the dead-letter queue", message.get("MessageId")
                )
                continue
            sent = message.get("Attributes", {}).get("SentTimestamp")
            if sent is not None:
                self.joined_at.setdefault(token.id, int(sent) / 1000)
            if token.id in self.seen:
                done.append(handle)
            elif token.id in fresh or token.id in self.carry:
                (fresh.get(token.id) or self.carry[token.id])[1].append(handle)  # another copy
                self.report.duplicates += 1
            else:
                fresh[token.id] = (token, [handle])
        try:
            done += self._passed_over(fresh)
            duplicates = len(done)
            # Carried visitors came first: they are written first.
            batch = {token.id: (token, handles) for token, handles in carried}
            batch.update(fresh)
            outcome = self._write(list(batch.values()), deadline)
            written = outcome.written
            if self.places is not None:
                self.places.took(len(written))
        except BaseException:
            self._release([h for _, handles in fresh.values() for h in handles])
            raise
        # Count at once: nothing may come between a successful write and its counting. A test
        # visitor (core/datamodel.py's TEST_ORDINAL) is admitted like anyone, counted in no
        # counter, metric or wait, and takes no slot.
        tests = {token_id for token_id in written if batch[token_id][0].is_test}
        real = len(written) - len(tests)
        self.report.admitted += real
        self.report.tests += len(tests)
        # Admitted by another delivery after this one's read (the write's condition said so):
        # deleted like any duplicate, using no slot.
        self.report.duplicates += duplicates + len(outcome.taken)
        self.seen.update(written)
        self.seen.update(outcome.taken)
        admitted_at = self.clock()
        for token_id in written:
            joined = self.joined_at.pop(token_id, None)
            if joined is not None and token_id not in tests:
                self.report.waits.append(admitted_at - joined)
        for token_id in [*written, *outcome.taken]:
            self.carry.pop(token_id, None)
            self.joined_at.pop(token_id, None)
            done += batch.pop(token_id)[1]
        if outcome.keep:
            # Kept in flight and written with the next batch: handing them back would count a
            # receive towards the dead-letter queue each time the table refuses (or, in
            # capacity mode, each time the shop fills up first).
            self.carry.update(batch)
        else:
            for token_id in batch:
                self.carry.pop(token_id, None)
            self._release([h for _, handles in batch.values() for h in handles])
        if real:
            self._count(real, assignment.minute)
        self._delete(done)
        return len(messages) + len(carried), real

    def _passed_over(self, fresh: dict[str, tuple[Token, list[str]]]) -> list[str]:
        """Take out of `fresh` the visitors that already have an item, and return their
        messages' handles (to delete): admitted by another consumer or minute (a duplicate
        delivery), or, in capacity mode, left the line (never admitted; counted as skipped,
        so the places behind them move up)."""
        if not fresh:
            return []
        already = batch_get(
            self.dynamodb,
            self.table,
            [visitor_key(i) for i in fresh],
            pauses=self.pauses,
            consistent=True,
        )
        done: list[str] = []
        retry: list[str] = []
        for pk, item in already.items():
            _, handles = fresh.pop(pk.removeprefix("v#"))
            left_waiting = (
                item.get("state", {}).get("S") == STATE_LEFT
                and "admitted_at" not in item
                and PASSED_OVER_ATTRIBUTE not in item
            )
            counted = self._count_skipped(pk) if left_waiting else None
            if counted is False:
                retry += handles  # not counted yet: the message comes back for another try
                continue
            done += handles
            self.report.skipped += bool(counted)
        self._release(retry)
        return done

    def _receive(self, wanted: int, wait: int) -> list[dict[str, Any]]:
        response = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=wanted,
            WaitTimeSeconds=wait,
            # When the visitor joined: their wait is measured from it.
            MessageSystemAttributeNames=["SentTimestamp"],
        )
        self.report.receives += 1
        return list(response.get("Messages") or [])

    def _write(self, tokens: list[tuple[Token, list[str]]], deadline: float) -> Written:
        """Put the admitted items, each on condition that the visitor has none yet."""
        if not tokens:
            return Written()
        if self.places is not None:
            return self._write_with_places(tokens)
        admitted_at = int(self.clock())
        expires_at = admitted_at + self.settings.admission_validity_seconds
        # Shared attribute values: built once per batch, not once per visitor.
        times = {
            "admitted_at": number(admitted_at),
            "expires_at": number(expires_at),
            TTL_ATTRIBUTE: number(expires_at + VISITOR_TTL_GRACE_SECONDS),
        }
        puts = {
            token.id: {
                "Put": {
                    "TableName": self.table,
                    "Item": {
                        PARTITION_KEY: {"S": visitor_key(token.id)},
                        "ordinal": {"N": str(token.ordinal)},
                        **times,
                        **self.tickets.attributes(token, admitted_at, expires_at),
                        **mark_of(token),
                    },
                    "ConditionExpression": NOT_ADMITTED_YET,
                }
            }
            for token, _ in tokens
        }
        if sum(self.recent_throttles) >= THROTTLED_OF_RECENT:
            # The table keeps refusing: give it time before asking again.
            left = max(0.0, deadline - self.clock())
            self.pauses.before_retry(THROTTLE_BACKOFF, self.backoffs, at_most=left)
            self.backoffs += 1
        outcome = Written()
        pending = list(puts)
        throttled = False
        attempt = 0
        while pending and attempt < QUICK_WRITE_ATTEMPTS:
            if attempt:
                self.report.write_retries += 1
            attempt += 1
            try:
                # One call, all or none: a visitor admitted meanwhile cancels the whole batch,
                # and the reasons say who (docs/pipeline.md, "No admission is written twice").
                self.dynamodb.transact_write_items(TransactItems=[puts[i] for i in pending])
            except ClientError as error:
                reasons = cancellation_reasons(error)
                if error_code(error) == "TransactionCanceledException" and len(reasons) == len(
                    pending
                ):
                    taken = [i for i, r in zip(pending, reasons, strict=True) if r == TAKEN]
                    throttled = any(r in places.THROTTLE_CODES for r in reasons)
                    outcome.taken += taken
                    pending = [i for i in pending if i not in taken]
                    if throttled:
                        log.warning("write throttled (attempt %s): %s", attempt, reasons)
                    elif taken:
                        attempt -= 1  # only conditions failed: the rest go at once, no retry
                    else:
                        log.error("write cancelled (%s); its visitors go back", reasons)
                        break
                    continue
                if error_code(error) not in RETRYABLE_CODES:
                    log.exception("write refused; its visitors go back to the queue")
                    throttled = False
                    break
                throttled = True
                log.warning("write throttled (attempt %s): %s", attempt, error)
            except Exception:
                log.exception("write failed; its visitors go back to the queue")
                throttled = False
                break
            else:
                outcome.written += pending
                pending = []
                throttled = False
        # A lone throttle is retried at once and is usually over; one that persists keeps its
        # visitors for the next batch and, once most batches are refused, slows the lane down.
        self.recent_throttles.append(throttled)
        if not throttled:
            self.backoffs = 0
        if pending:
            log.warning("%s admissions still unwritten", len(pending))
        outcome.keep = throttled and bool(pending)
        return outcome

    def _write_with_places(self, tokens: list[tuple[Token, list[str]]]) -> Written:
        """Capacity mode: each admission takes a place, in one transaction with the counter.

        A visitor found with an item meanwhile is written no more: their message goes back and
        the next receive's read tells an admission from a visitor who left the line. When the
        shop is full or the table refuses, the rest stay in flight with this consumer.
        """
        pending = [token for token, _ in tokens]
        for _ in range(QUICK_WRITE_ATTEMPTS):
            outcome = places.admit(
                self.dynamodb,
                self.table,
                pending,
                now=self.clock(),
                settings=self.settings,
                max_inside=self.max_inside,
                tickets=self.tickets,
            )
            if outcome.written:
                return Written(written=outcome.written)
            if outcome.full:
                assert self.places is not None
                self.places.refused()
                return Written(keep=True)
            if outcome.taken:
                pending = [t for t in pending if t.id not in outcome.taken]
                if not pending:
                    return Written()
                continue
            if outcome.throttled:
                self.report.write_retries += 1
                continue
        return Written(keep=True)

    def _count_skipped(self, pk: str) -> bool | None:
        """Count a visitor who left the line as passed over, once: the leaver's item is marked
        in the same transaction, so a redelivery of their message (a duplicate, or one handed
        back after a failure) finds the mark and counts nothing. True when this call counted,
        None when they were counted already, False when the table refused (count later)."""
        try:
            self.dynamodb.transact_write_items(
                TransactItems=[
                    {
                        "Update": {
                            "TableName": self.table,
                            "Key": key(pk),
                            "UpdateExpression": f"SET {PASSED_OVER_ATTRIBUTE} = :yes",
                            "ConditionExpression": (
                                f"#state = :left AND attribute_not_exists(admitted_at) "
                                f"AND attribute_not_exists({PASSED_OVER_ATTRIBUTE})"
                            ),
                            "ExpressionAttributeNames": {"#state": "state"},
                            "ExpressionAttributeValues": {
                                ":left": {"S": STATE_LEFT},
                                ":yes": {"BOOL": True},
                            },
                        }
                    },
                    {
                        "Update": {
                            "TableName": self.table,
                            "Key": key(ADMITTED_COUNTER_KEY),
                            "UpdateExpression": "ADD skipped :one",
                            "ExpressionAttributeValues": {":one": number(1)},
                        }
                    },
                ]
            )
        except ClientError as error:
            reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
            if reasons[:1] == ["ConditionalCheckFailed"]:
                return None  # counted by another delivery of their message
            log.warning("could not count a visitor who left the line: %s", error)
            return False
        return True

    def _count(self, count: int, minute: int) -> None:
        """The counters behind positions and per-minute reports (bookkeeping only).

        The admitted counter's new value is kept: the status copies published next carry it,
        so a waiting visitor's position counts this admission at once.
        """
        try:
            response = self.dynamodb.update_item(
                TableName=self.table,
                Key=key(ADMITTED_COUNTER_KEY),
                UpdateExpression="ADD n :c",
                ExpressionAttributeValues={":c": number(count)},
                ReturnValues="UPDATED_NEW",
            )
            self.admitted_total = int(response["Attributes"]["n"]["N"])
        except Exception:
            log.exception("could not count %s admissions", count)
        try:
            self.dynamodb.update_item(
                TableName=self.table,
                Key=key(minute_key(minute)),
                UpdateExpression="ADD admitted :c",
                ExpressionAttributeValues={":c": number(count)},
            )
        except Exception:
            log.exception("could not count %s admissions on minute %s", count, minute)

    def _release(self, handles: list[str], *, hide: float = 0) -> None:
        """Hand messages back to the queue now (or after `hide` seconds) rather than in 60 s."""
        if not handles:
            return
        seconds = max(0, math.ceil(hide))
        try:
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": seconds}
                    for i, h in enumerate(handles)
                ],
            )
        except Exception:
            log.exception(
                "could not release %s messages; they return after the timeout", len(handles)
            )

    def _delete(self, handles: list[str]) -> None:
        if not handles:
            return
        try:
            response = self.sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": h} for i, h in enumerate(handles)],
            )
            failed = response.get("Failed") or []
        except Exception:
            log.exception("could not delete %s admitted messages", len(handles))
            return
        if failed:
            # They come back after the visibility timeout and are recognised as admitted.
            log.warning("%s deletes failed: %s", len(failed), failed)


def run_consumer(
    payload: object,
    *,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    pauses: Pauses,
    metrics: MetricSink = DISCARD,
    tickets: TicketHook = NO_TICKETS,
    push: StatePush | None = None,
    **room: Unpack[RoomWiring],
) -> ConsumerReport:
    """One consumer invocation: `payload` is the trigger's Assignment, `room` what the room's
    code runs against (room/wiring.py), `push` the room's channel (room/push.py)."""
    assignment = Assignment.from_payload(payload)
    consumer = Consumer(**room, clock=clock, sleep=sleep, pauses=pauses, tickets=tickets, push=push)
    report = consumer.run(assignment)
    metrics.count(telemetry.ADMITTED, report.admitted)
    metrics.count(telemetry.DUPLICATES, report.duplicates)
    metrics.count(telemetry.WRITE_RETRIES, report.write_retries)
    metrics.count(telemetry.ABANDONED_BATCHES, report.abandoned_batches)
    for wait in report.waits:
        metrics.sample(telemetry.WAIT, wait)
    if consumer.places is not None:  # capacity mode: who left, and who never came
        freed = consumer.places.freed
        metrics.count(telemetry.LEFT_LINE, report.skipped)
        metrics.count(telemetry.LEFT_SHOP, freed.left)
        metrics.count(telemetry.NO_SHOWS, freed.no_shows)
        metrics.count(telemetry.SESSIONS_ENDED, freed.ended - freed.no_shows)
    return report
