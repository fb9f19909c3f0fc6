"""Admit one consumer's quota of visitors within the minute, evenly, exactly, losing nobody.

The loop counts visitors, not receive calls: it keeps long-polling until its quota is admitted
or the minute's deadline passes, so a short or empty receive never ends the minute early.

Pacing: the k-th of the minute's quota falls due at the start of its even share of the pacing
span, start + (k - 1) / quota x (pace_end - start), so a lone visitor is let in at once; it
receives a batch only once a whole batch is due (10, or fewer when the quota is so small that
10 would take more than 2 s to fall due). After a stall it catches up no faster than its share
of 1.25 x the minute's mean per second plus one batch, so the whole minute stays within that
bound in every second.

Exactly once, as far as SQS allows: a message is deleted only after its visitor's item was
written; a write that keeps failing hands the message back to the queue. A duplicate delivery
is recognised before it uses quota: by an in-memory set of ids this consumer admitted, and by
a consistent read of `v#<id>` for ids admitted by another consumer or an earlier minute.
Residual race (docs/pipeline.md): two copies of one message received by two consumers at the
same instant both pass the read; both write the same item, and the visitor uses two places of
that minute's quota. SQS makes such copies rare and the window is one write long.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core import telemetry
from beekeeper.core.datamodel import (
    ADMITTED_COUNTER_KEY,
    PARTITION_KEY,
    TTL_ATTRIBUTE,
    VISITOR_TTL_GRACE_SECONDS,
    Token,
    minute_key,
    visitor_key,
)
from beekeeper.core.settings import RoomSettings
from beekeeper.lambdas import runtime
from beekeeper.lambdas.emf import DISCARD, MetricSink
from beekeeper.lambdas.room_state import batch_get, key, number, publish_status, read_snapshot

log = logging.getLogger("beekeeper.consumer")

RECEIVE_BATCH = 10  # SQS's maximum per ReceiveMessage
PEAK_FACTOR = 1.25
BATCH_FILL_SECONDS = 2.0
MAX_LONG_POLL_SECONDS = 20
SHORT_RECEIVE_PAUSE_SECONDS = 0.25
STATUS_EVERY_SECONDS = 5.0
WRITE_ATTEMPTS = 8
BACKOFF_FIRST_SECONDS = 0.05
BACKOFF_MAX_SECONDS = 1.0
RETRYABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


def peak_per_second(assignment: Assignment) -> float:
    """The most this consumer may admit in any one second.

    The whole minute may admit at most 1.25 x its per-second mean plus one receive batch in a
    second; each of the minute's consumers takes its share of that.
    """
    mean = assignment.quota / assignment.minute_seconds
    return PEAK_FACTOR * mean + RECEIVE_BATCH / assignment.consumers


def share_start(quota: int, k: int) -> float:
    """When the k-th of a minute's `quota` admissions falls due, as a fraction of the pacing
    span: at the start of its even share, so a lone visitor goes in at once, not a minute on."""
    return (k - 1) / quota


def admissions_due(quota: int, elapsed: float) -> int:
    """How many admissions are due once `elapsed` (0 to 1) of the pacing span has passed."""
    if elapsed >= 1:
        return quota
    # The epsilon keeps a wake-up at exactly share_start from rounding one admission short.
    return min(quota, math.floor(quota * elapsed + 1e-9) + 1)


class AssignmentError(ValueError):
    """The trigger's payload is not a consumer assignment."""


@dataclass(frozen=True)
class Assignment:
    minute: int
    index: int
    quota: int
    start: float
    deadline: float
    consumers: int = 1  # how many share the minute: each keeps to its part of the peak bound
    minute_seconds: float = 60.0

    @classmethod
    def from_payload(cls, payload: object) -> Assignment:
        if not isinstance(payload, Mapping):
            raise AssignmentError("the consumer expects the trigger's JSON object")
        try:
            assignment = cls(
                minute=int(payload["minute"]),
                index=int(payload["index"]),
                quota=int(payload["quota"]),
                start=float(payload["start"]),
                deadline=float(payload["deadline"]),
                consumers=int(payload.get("consumers", 1)),
                minute_seconds=float(payload.get("minute_seconds", 60)),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise AssignmentError(f"bad consumer assignment {payload!r}: {error}") from error
        if (
            assignment.quota < 0
            or assignment.index < 0
            or assignment.consumers < 1
            or assignment.minute_seconds <= 0
            or assignment.deadline < assignment.start
        ):
            raise AssignmentError(f"bad consumer assignment {payload!r}")
        return assignment


@dataclass
class ConsumerReport:
    admitted: int = 0
    duplicates: int = 0
    malformed: int = 0
    receives: int = 0
    abandoned_batches: int = 0
    write_retries: int = 0


@dataclass
class Consumer:
    settings: RoomSettings
    table: str
    queue_url: str
    dynamodb: Any
    sqs: Any
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    report: ConsumerReport = field(default_factory=ConsumerReport)
    # ids this consumer admitted: a later copy of their message is deleted without a read.
    seen: set[str] = field(default_factory=set)

    def run(self, assignment: Assignment) -> ConsumerReport:
        quota, deadline = assignment.quota, assignment.deadline
        start = max(assignment.start, self.clock())
        # Pace to end slightly before the deadline: slack to make up a short receive.
        pace_end = max(start, deadline - min(2.0, (deadline - start) * 0.04))
        ceiling = peak_per_second(assignment)
        # Batches of up to 10, but nobody waits more than BATCH_FILL_SECONDS for one to fill.
        per_second = quota / max(0.001, pace_end - start)
        largest_batch = max(
            1, min(RECEIVE_BATCH, int(ceiling), int(per_second * BATCH_FILL_SECONDS))
        )
        recent: deque[tuple[float, int]] = deque()  # (when, admitted) over the last second
        in_last_second = 0
        last_status = -math.inf
        while self.report.admitted < quota:
            now = self.clock()
            if now >= deadline:
                break
            if assignment.index == 0 and now - last_status >= STATUS_EVERY_SECONDS:
                last_status = now
                self._publish_status(now)
            batch = min(largest_batch, quota - self.report.admitted)
            due = admissions_due(quota, (now - start) / (pace_end - start) if now < pace_end else 1)
            if due - self.report.admitted < batch:
                # Sleep until a whole batch is due (never past the pacing end).
                target = self.report.admitted + batch
                wake = start + (pace_end - start) * share_start(quota, target)
                self.sleep(max(0.001, min(wake, pace_end, deadline) - now))
                continue
            while recent and recent[0][0] <= now - 1.0:
                in_last_second -= recent.popleft()[1]
            if in_last_second + batch > ceiling:
                # Catching up after a stall: never faster than this consumer's share of
                # 1.25 x the minute's mean per second.
                self.sleep(max(0.001, recent[0][0] + 1.0 - now))
                continue
            wait = int(min(MAX_LONG_POLL_SECONDS, max(0.0, deadline - now)))
            before = self.report.admitted
            try:
                self._admit_batch(batch, wait, assignment, deadline)
            except Exception:
                # An unexpected failure in the middle of a batch: what was not written went
                # back to the queue in _admit_batch; carry on with the minute.
                self.report.abandoned_batches += 1
                log.exception("a batch failed; its visitors stay in the queue")
                self.sleep(BACKOFF_FIRST_SECONDS)
            if self.report.admitted > before:
                recent.append((self.clock(), self.report.admitted - before))
                in_last_second += self.report.admitted - before
            elif wait == 0:
                # Less than a second left, so the receive did not long-poll: pause instead of
                # asking the queue again at once (the messages are in flight elsewhere).
                self.sleep(max(0.001, min(SHORT_RECEIVE_PAUSE_SECONDS, deadline - self.clock())))
        if assignment.index == 0:
            self._publish_status(self.clock())
        log.info(
            "minute %s consumer %s: admitted %s of %s (%s duplicates, %s receives)",
            assignment.minute,
            assignment.index,
            self.report.admitted,
            quota,
            self.report.duplicates,
            self.report.receives,
        )
        return self.report

    def _admit_batch(self, wanted: int, wait: int, assignment: Assignment, deadline: float) -> None:
        response = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=wanted,
            WaitTimeSeconds=wait,
        )
        self.report.receives += 1
        messages = response.get("Messages") or []
        if not messages:
            return
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
            if token.id in self.seen:
                done.append(handle)
            elif token.id in fresh:
                fresh[token.id][1].append(handle)  # two copies in one receive
                self.report.duplicates += 1
            else:
                fresh[token.id] = (token, [handle])
        try:
            if fresh:
                already = batch_get(
                    self.dynamodb, self.table, [visitor_key(i) for i in fresh], consistent=True
                )
                for pk in already:
                    _, handles = fresh.pop(pk.removeprefix("v#"))
                    done += handles
            duplicates = len(done)
            written = self._write(list(fresh.values()), deadline) if fresh else []
        except BaseException:
            self._release([h for _, handles in fresh.values() for h in handles])
            raise
        # Count at once: nothing may come between a successful write and its counting.
        self.report.admitted += len(written)
        self.report.duplicates += duplicates
        self.seen.update(written)
        for token_id in written:
            done += fresh.pop(token_id)[1]
        self._release([h for _, handles in fresh.values() for h in handles])
        if written:
            self._count(len(written), assignment.minute)
        self._delete(done)

    def _write(self, tokens: list[tuple[Token, list[str]]], deadline: float) -> list[str]:
        """Put the admitted items; returns the ids whose write succeeded."""
        admitted_at = int(self.clock())
        expires_at = admitted_at + self.settings.admission_validity_seconds
        # Shared attribute values: built once per batch, not once per visitor.
        times = {
            "admitted_at": number(admitted_at),
            "expires_at": number(expires_at),
            TTL_ATTRIBUTE: number(expires_at + VISITOR_TTL_GRACE_SECONDS),
        }
        items = {
            f"v#{token.id}": {
                "PutRequest": {
                    "Item": {
                        PARTITION_KEY: {"S": f"v#{token.id}"},
                        "ordinal": {"N": str(token.ordinal)},
                        **times,
                    }
                }
            }
            for token, _ in tokens
        }
        pending = list(items.values())
        delay = BACKOFF_FIRST_SECONDS
        for attempt in range(WRITE_ATTEMPTS):
            try:
                response = self.dynamodb.batch_write_item(RequestItems={self.table: pending})
                pending = (response.get("UnprocessedItems") or {}).get(self.table, [])
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") not in RETRYABLE_CODES:
                    log.exception("write refused; its visitors go back to the queue")
                    break
                log.warning("write throttled (attempt %s): %s", attempt + 1, error)
            except Exception:
                # Whatever an earlier attempt wrote stays written and is counted below.
                log.exception("write failed; its visitors go back to the queue")
                break
            if not pending:
                break
            if self.clock() + delay >= deadline:
                break
            self.report.write_retries += 1
            self.sleep(delay)
            delay = min(BACKOFF_MAX_SECONDS, delay * 2)
        left = {request["PutRequest"]["Item"][PARTITION_KEY]["S"] for request in pending}
        if left:
            log.warning(
                "%s writes still unprocessed: their visitors go back to the queue", len(left)
            )
        return [pk.removeprefix("v#") for pk in items if pk not in left]

    def _count(self, count: int, minute: int) -> None:
        """The counters behind positions and per-minute reports (bookkeeping only)."""
        updates = ((ADMITTED_COUNTER_KEY, "n"), (minute_key(minute), "admitted"))
        for pk, attribute in updates:
            try:
                self.dynamodb.update_item(
                    TableName=self.table,
                    Key=key(pk),
                    UpdateExpression="ADD #a :c",
                    ExpressionAttributeNames={"#a": attribute},
                    ExpressionAttributeValues={":c": number(count)},
                )
            except Exception:
                log.exception("could not count %s admissions on %s", count, pk)

    def _release(self, handles: list[str]) -> None:
        """Hand messages we could not admit back to the queue now rather than in 60 s."""
        if not handles:
            return
        try:
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": 0}
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

    def _publish_status(self, now: float) -> None:
        try:
            snapshot = read_snapshot(self.dynamodb, self.table, self.settings)
            publish_status(self.dynamodb, self.table, snapshot, now=now)
        except Exception:
            log.exception("could not publish the status")


def run_consumer(
    payload: object,
    *,
    settings: RoomSettings,
    table: str,
    queue_url: str,
    dynamodb: Any,
    sqs: Any,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    metrics: MetricSink = DISCARD,
) -> ConsumerReport:
    assignment = Assignment.from_payload(payload)
    consumer = Consumer(
        settings=settings,
        table=table,
        queue_url=queue_url,
        dynamodb=dynamodb,
        sqs=sqs,
        clock=clock,
        sleep=sleep,
    )
    report = consumer.run(assignment)
    metrics.count(telemetry.ADMITTED, report.admitted)
    metrics.count(telemetry.DUPLICATES, report.duplicates)
    metrics.count(telemetry.WRITE_RETRIES, report.write_retries)
    metrics.count(telemetry.ABANDONED_BATCHES, report.abandoned_batches)
    return report


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    try:
        report = run_consumer(
            event,
            settings=runtime.settings(),
            table=runtime.env("TABLE_NAME"),
            queue_url=runtime.env("QUEUE_URL"),
            dynamodb=runtime.client("dynamodb"),
            sqs=runtime.client("sqs"),
            clock=time.time,
            sleep=time.sleep,
            metrics=runtime.metrics(),
        )
    except AssignmentError as error:
        log.error("%s", error)  # a retry would fail the same way
        return {"admitted": 0, "error": str(error)}
    finally:
        runtime.metrics().flush()
    return {"admitted": report.admitted, "duplicates": report.duplicates}
