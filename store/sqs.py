"""In-memory SQS standard queues: the calls the room makes, answered as SQS answers them.

A long poll waits on the queue's guard (store/timing.py) until a send or a message coming back
wakes it, or its time is up; it returns at once when something is visible. Messages that come
back after their visibility timeout rejoin at the end (a standard queue's slight reordering);
a message received more than the redrive policy's maxReceiveCount times moves to the
dead-letter queue. Receives, sends and deletes cost O(messages handled), not O(queue), so a
long line does not slow the room down. With the simulator's disturbance a receive may return
fewer messages than are visible and a delivered message may be delivered again later, even
after it was deleted (at-least-once delivery).

Requests and answers are SQS's JSON protocol (boto3's arguments); refusals are
`ServiceError`s with SQS's codes. Not modelled: FIFO queues, message attributes, retention
expiry, purges.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from beekeeper.store.api import Api
from beekeeper.store.disturbance import CALM, Disturbance
from beekeeper.store.errors import ServiceError
from beekeeper.store.timing import Timing

MAX_RECEIVE_BATCH = 10
MAX_WAIT_SECONDS = 20
MAX_VISIBILITY_TIMEOUT = 43_200
DEFAULT_VISIBILITY_TIMEOUT = 30
_ACCOUNT = "000000000000"
_LAST_GROUP = 16**12  # the numbers a UUID's last group of 12 hexadecimal digits holds

# (queue name, event, message number, body) for "sent"; body None for "gone" (deleted or
# moved to the dead-letter queue).
QueueObserver = Callable[[str, str, int, str | None], None]


def md5_of(text: str) -> str:
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


@dataclass(slots=True)  # a million waiting visitors are a million messages
class Message:
    body: str
    sent_at: float
    state: str = "visible"  # visible, inflight, deleted, dead
    receives: int = 0
    generation: int = 0  # moves on whenever a scheduled return must no longer apply
    first_received_at: float | None = None


# One PurgeQueue a queue every this many seconds, the time SQS takes to finish one.
PURGE_SECONDS = 60


def _invalid(message: str) -> ServiceError:
    return ServiceError("InvalidParameterValue", message, query_code="InvalidParameterValue")


class Queue:
    def __init__(
        self,
        name: str,
        url: str,
        timing: Timing,
        *,
        visibility_timeout: int = DEFAULT_VISIBILITY_TIMEOUT,
        max_receives: int | None = None,
        dead_letter: Queue | None = None,
        region: str = "us-east-1",
        disturbance: Disturbance = CALM,
    ) -> None:
        self.name = name
        self.url = url
        self.arn = f"arn:aws:sqs:{region}:{_ACCOUNT}:{name}"
        self._timing = timing
        self._guard = timing.guard()
        self._disturbance = disturbance
        self.visibility_timeout = visibility_timeout
        self.max_receives = max_receives
        self.dead_letter = dead_letter
        self.messages: list[Message] = []
        self._visible: deque[tuple[int, bool]] = deque()  # (message index, a duplicate copy)
        self._visible_count = 0  # real messages visible (duplicate copies are not counted)
        # Messages due back: (when, order, [(index, generation)]); generation -1 marks a
        # duplicate copy. One entry per receive keeps the heap small at 270,000 a minute.
        self._returning: list[tuple[float, int, list[tuple[int, int]]]] = []
        self._order = itertools.count()
        self.deliveries = 0
        self.observers: list[QueueObserver] = []
        self.purged_at: float | None = None

    # -- bookkeeping ----------------------------------------------------------------------

    def _refresh(self, now: float) -> None:
        while self._returning and self._returning[0][0] <= now:
            _, _, due = heapq.heappop(self._returning)
            for index, generation in due:
                message = self.messages[index]
                if generation == -1:  # a duplicate copy: delivered next, whatever is queued
                    self._visible.appendleft((index, True))
                elif message.state in ("inflight", "delayed") and message.generation == generation:
                    self._make_visible(index)

    def _make_visible(self, index: int, front: bool = False) -> None:
        message = self.messages[index]
        message.state = "visible"
        message.generation += 1
        (self._visible.appendleft if front else self._visible.append)((index, False))
        self._visible_count += 1

    def _handle(self, text: object) -> tuple[Message, int, int]:
        """(message, index, receive number) of a receipt handle, or ReceiptHandleIsInvalid."""
        index, _, number = str(text).partition(":")
        if not (index.isdigit() and number.lstrip("-").isdigit()) or int(index) >= len(
            self.messages
        ):
            raise ServiceError(
                "ReceiptHandleIsInvalid",
                f'The input receipt handle "{text}" is not a valid receipt handle.',
                query_code="ReceiptHandleIsInvalid",
            )
        return self.messages[int(index)], int(index), int(number)

    def _gone(self, index: int) -> None:
        for observer in self.observers:
            observer(self.name, "gone", index, None)

    # -- the API --------------------------------------------------------------------------

    def send(self, body: object, delay: object = None) -> dict[str, Any]:
        if not isinstance(body, str) or not body:
            raise ServiceError(
                "MissingParameter",
                "The request must contain the parameter MessageBody.",
                query_code="MissingParameter",
            )
        if len(body.encode("utf-8")) > 262_144:
            raise _invalid(
                "One or more parameters are invalid. Reason: Message must be "
                "shorter than 262144 bytes."
            )
        seconds = 0 if delay is None else delay
        if not isinstance(seconds, int) or not 0 <= seconds <= 900:
            raise _invalid(
                f"Value {delay} for parameter DelaySeconds is invalid. Reason: must "
                "be >= 0 and <= 900."
            )
        with self._guard:
            index = self.add(body, seconds)
            self._guard.notify()
        return {"MessageId": self.message_id(index), "MD5OfMessageBody": md5_of(body)}

    def add(self, body: str, delay: int = 0) -> int:
        """Inside the guard: a new message, visible now or after `delay` seconds."""
        now = self._timing.now()
        index = len(self.messages)
        message = Message(body, sent_at=now)
        self.messages.append(message)
        if delay:
            message.state = "delayed"
            heapq.heappush(self._returning, (now + delay, next(self._order), [(index, 0)]))
        else:
            self._visible.append((index, False))
            self._visible_count += 1
        for observer in self.observers:
            observer(self.name, "sent", index, body)
        return index

    def restore(self, bodies: Iterable[str]) -> None:
        """Saved messages back in the queue, in order, visible at once."""
        with self._guard:
            for body in bodies:
                self.add(body)

    def message_id(self, index: int) -> str:
        """The message's id: its number as a UUID's text, str(uuid.UUID(int=index)), written
        out (every send and every delivery names it)."""
        if index < _LAST_GROUP:  # the first four groups all zeros: every queue's usual case
            return f"00000000-0000-0000-0000-{index:012x}"
        digits = f"{index:032x}"
        return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"

    def purge(self) -> dict[str, Any]:
        """PurgeQueue: every message sent until now is deleted, visible or in flight; one
        purge a queue every PURGE_SECONDS ("Only one PurgeQueue operation ... is allowed every
        60 seconds", PurgeQueue, Amazon SQS API Reference). SQS takes up to 60 s to finish and
        may still deliver a purged message meanwhile; here the deletion is done at once, and
        `beekeeper reset` waits the 60 s either way (docs/data-model.md)."""
        with self._guard:
            now = self._timing.now()
            if self.purged_at is not None and now - self.purged_at < PURGE_SECONDS:
                raise ServiceError(
                    "PurgeQueueInProgress",
                    f"Only one PurgeQueue operation on {self.name} is allowed every "
                    f"{PURGE_SECONDS} seconds.",
                    query_code="AWS.SimpleQueueService.PurgeQueueInProgress",
                )
            self.purged_at = now
            for index, message in enumerate(self.messages):
                if message.state in ("visible", "inflight", "delayed") and message.sent_at <= now:
                    message.state = "deleted"
                    message.generation += 1
                    self._gone(index)
            self._visible.clear()
            self._visible_count = 0
        return {}

    def receive(
        self, wanted: int, wait: int, visibility: int | None, attributes: Iterable[str]
    ) -> dict[str, Any]:
        with self._guard:
            now = self._timing.now()
            self._refresh(now)
            give_up = now + wait
            while not self._visible and now < give_up:
                upcoming = self._returning[0][0] if self._returning else None
                until = min(give_up, upcoming) if upcoming is not None else give_up
                self._guard.wait(until - now)
                now = self._timing.now()
                self._refresh(now)
            wanted = self._disturbance.receive_count(wanted)
            out: list[dict[str, Any]] = []
            returning: list[tuple[int, int]] = []
            wanted_attributes = set(attributes)
            while self._visible and len(out) < wanted:
                index, duplicate = self._visible.popleft()
                message = self.messages[index]
                if duplicate:
                    out.append(self._delivery(index, -1, message, wanted_attributes))
                    continue
                if message.state != "visible":
                    continue
                self._visible_count -= 1
                message.receives += 1
                if self.max_receives is not None and message.receives > self.max_receives:
                    self._dead_letter(index, message)
                    continue
                message.state = "inflight"
                message.generation += 1
                if message.first_received_at is None:
                    message.first_received_at = now
                returning.append((index, message.generation))
                again = self._disturbance.duplicate_after()
                if again is not None:
                    heapq.heappush(self._returning, (now + again, next(self._order), [(index, -1)]))
                out.append(self._delivery(index, message.receives, message, wanted_attributes))
            if returning:
                hidden = self.visibility_timeout if visibility is None else visibility
                heapq.heappush(self._returning, (now + hidden, next(self._order), returning))
            self.deliveries += len(out)
        return {"Messages": out} if out else {}

    def _dead_letter(self, index: int, message: Message) -> None:
        message.state = "dead"
        self._gone(index)
        if self.dead_letter is not None:
            with self.dead_letter._guard:
                self.dead_letter.add(message.body)
                self.dead_letter._guard.notify()

    def _delivery(
        self, index: int, receive: int, message: Message, attributes: set[str]
    ) -> dict[str, Any]:
        delivery: dict[str, Any] = {
            "MessageId": self.message_id(index),
            "ReceiptHandle": f"{index}:{receive}",
            "MD5OfBody": md5_of(message.body),
            "Body": message.body,
        }
        every = "All" in attributes
        # The system attributes asked for, in this order (each written only when asked).
        chosen: dict[str, str] = {}
        if every or "ApproximateReceiveCount" in attributes:
            chosen["ApproximateReceiveCount"] = str(max(1, message.receives))
        if every or "SentTimestamp" in attributes:
            chosen["SentTimestamp"] = str(int(message.sent_at * 1000))
        if every or "ApproximateFirstReceiveTimestamp" in attributes:
            chosen["ApproximateFirstReceiveTimestamp"] = str(
                int((message.first_received_at or message.sent_at) * 1000)
            )
        if chosen:
            delivery["Attributes"] = chosen
        return delivery

    def delete(self, handle: object) -> None:
        with self._guard:
            message, index, _ = self._handle(handle)
            if message.state == "visible":
                self._visible_count -= 1
            if message.state not in ("dead", "deleted"):
                message.state = "deleted"
                self._gone(index)

    def change_visibility(self, handle: object, timeout: object) -> None:
        if not isinstance(timeout, int) or not 0 <= timeout <= MAX_VISIBILITY_TIMEOUT:
            raise _invalid(
                f"Value {timeout} for parameter VisibilityTimeout is invalid. Reason: Must be "
                f">= 0 and <= {MAX_VISIBILITY_TIMEOUT}."
            )
        with self._guard:
            message, index, receive = self._handle(handle)
            if message.state != "inflight" or receive != message.receives:
                raise ServiceError(
                    "MessageNotInflight",
                    "Message does not exist or is not available for visibility timeout change.",
                    query_code="AWS.SimpleQueueService.MessageNotInflight",
                )
            if timeout > 0:
                message.generation += 1  # the old timeout no longer applies
                due = self._timing.now() + timeout
                heapq.heappush(
                    self._returning, (due, next(self._order), [(index, message.generation)])
                )
            else:
                self._make_visible(index, front=True)
            self._guard.notify()

    def change_visibility_together(
        self, entries: list[tuple[object, object, object]]
    ) -> dict[str, Any]:
        """The batch call: messages hidden for the same time come back together, in order."""
        successful, failed = [], []
        with self._guard:
            later: dict[int, list[tuple[int, int]]] = {}
            for entry_id, handle, timeout in entries:
                try:
                    message, index, receive = self._handle(handle)
                    if not isinstance(timeout, int) or not 0 <= timeout <= MAX_VISIBILITY_TIMEOUT:
                        raise _invalid(
                            f"Value {timeout} for parameter VisibilityTimeout is invalid."
                        )
                    if message.state != "inflight" or receive != message.receives:
                        raise ServiceError(
                            "MessageNotInflight",
                            "Message does not exist or is not available for visibility timeout "
                            "change.",
                        )
                except ServiceError as error:
                    failed.append(_failure(entry_id, error))
                    continue
                if timeout > 0:
                    message.generation += 1
                    later.setdefault(timeout, []).append((index, message.generation))
                else:
                    self._make_visible(index, front=True)
                successful.append({"Id": entry_id})
            now = self._timing.now()
            for timeout, group in later.items():
                heapq.heappush(self._returning, (now + timeout, next(self._order), group))
            self._guard.notify()
        return {"Successful": successful, "Failed": failed}

    def attributes(self, names: Iterable[str]) -> dict[str, str]:
        wanted = set(names)
        every = "All" in wanted
        with self._guard:
            self._refresh(self._timing.now())
            out: dict[str, str] = {}
            if every or "ApproximateNumberOfMessages" in wanted:
                out["ApproximateNumberOfMessages"] = str(self._visible_count)
            if every or "ApproximateNumberOfMessagesNotVisible" in wanted:
                out["ApproximateNumberOfMessagesNotVisible"] = str(
                    sum(1 for m in self.messages if m.state == "inflight")
                )
            if every or "ApproximateNumberOfMessagesDelayed" in wanted:
                out["ApproximateNumberOfMessagesDelayed"] = str(
                    sum(1 for m in self.messages if m.state == "delayed")
                )
        if every or "QueueArn" in wanted:
            out["QueueArn"] = self.arn
        if every or "VisibilityTimeout" in wanted:
            out["VisibilityTimeout"] = str(self.visibility_timeout)
        if (every or "RedrivePolicy" in wanted) and self.dead_letter is not None:
            out["RedrivePolicy"] = json.dumps(
                {"deadLetterTargetArn": self.dead_letter.arn, "maxReceiveCount": self.max_receives}
            )
        return out

    # -- what the simulation and the saved state read ------------------------------------

    def visible_now(self) -> int:
        with self._guard:
            self._refresh(self._timing.now())
            return self._visible_count

    def states(self) -> list[str]:
        with self._guard:
            self._refresh(self._timing.now())
            return [m.state for m in self.messages]

    def waiting_bodies(self) -> list[tuple[int, str]]:
        """Messages not yet deleted nor dead-lettered, in order (for saving the store)."""
        with self._guard:
            return [
                (i, m.body)
                for i, m in enumerate(self.messages)
                if m.state in ("visible", "inflight", "delayed")
            ]


def _failure(entry_id: object, error: ServiceError) -> dict[str, Any]:
    return {"Id": entry_id, "SenderFault": True, "Code": error.code, "Message": error.message}


class Sqs(Api):
    """The queues by URL, and the SQS API over them."""

    def __init__(self, timing: Timing, disturbance: Disturbance = CALM) -> None:
        super().__init__(disturbance, "UnsupportedOperation")
        self._timing = timing
        self.queues: dict[str, Queue] = {}
        self._actions = {
            "SendMessage": self._send_message,
            "ReceiveMessage": self._receive_message,
            "DeleteMessage": self._delete_message,
            "DeleteMessageBatch": self._delete_message_batch,
            "ChangeMessageVisibility": self._change_message_visibility,
            "ChangeMessageVisibilityBatch": self._change_message_visibility_batch,
            "GetQueueAttributes": self._get_queue_attributes,
            "GetQueueUrl": self._get_queue_url,
            "PurgeQueue": lambda request: self._queue(request).purge(),
        }

    def create_queue(self, name: str, url: str, **options: Any) -> Queue:
        queue = Queue(name, url, self._timing, disturbance=self._disturbance, **options)
        self.queues[url] = queue
        return queue

    def delete_queue(self, url: str) -> None:
        self.queues.pop(url, None)

    def _queue(self, request: dict[str, Any]) -> Queue:
        url = request.get("QueueUrl")
        queue = self.queues.get(url) if isinstance(url, str) else None
        if queue is None:
            raise ServiceError(
                "QueueDoesNotExist",
                "The specified queue does not exist.",
                query_code="AWS.SimpleQueueService.NonExistentQueue",
            )
        return queue

    def _send_message(self, request: dict[str, Any]) -> dict[str, Any]:
        if set(request) - {"QueueUrl", "MessageBody", "DelaySeconds"}:
            raise NotImplementedError(f"SendMessage with {sorted(request)}")
        queue = self._queue(request)
        return queue.send(request.get("MessageBody"), request.get("DelaySeconds"))

    def _receive_message(self, request: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(request)
        wanted = request.get("MaxNumberOfMessages", 1)
        if not isinstance(wanted, int) or not 1 <= wanted <= MAX_RECEIVE_BATCH:
            raise _invalid(
                f"Value {wanted} for parameter MaxNumberOfMessages is invalid. Reason: Must be "
                f"between 1 and {MAX_RECEIVE_BATCH}, if provided."
            )
        wait = request.get("WaitTimeSeconds", 0)
        if not isinstance(wait, int) or not 0 <= wait <= MAX_WAIT_SECONDS:
            raise _invalid(
                f"Value {wait} for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 "
                f"and <= {MAX_WAIT_SECONDS}, if provided."
            )
        visibility = request.get("VisibilityTimeout")
        if visibility is not None and (
            not isinstance(visibility, int) or not 0 <= visibility <= MAX_VISIBILITY_TIMEOUT
        ):
            raise _invalid(f"Value {visibility} for parameter VisibilityTimeout is invalid.")
        names = list(request.get("AttributeNames") or []) + list(
            request.get("MessageSystemAttributeNames") or []
        )
        return queue.receive(wanted, wait, visibility, names)

    def _delete_message(self, request: dict[str, Any]) -> dict[str, Any]:
        self._queue(request).delete(request.get("ReceiptHandle"))
        return {}

    def _delete_message_batch(self, request: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(request)
        entries = _entries(request)
        successful, failed = [], []
        for entry in entries:
            try:
                queue.delete(entry.get("ReceiptHandle"))
            except ServiceError as error:
                failed.append(_failure(entry.get("Id"), error))
            else:
                successful.append({"Id": entry.get("Id")})
        return {"Successful": successful, "Failed": failed}

    def _change_message_visibility(self, request: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(request)
        queue.change_visibility(request.get("ReceiptHandle"), request.get("VisibilityTimeout"))
        return {}

    def _change_message_visibility_batch(self, request: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(request)
        return queue.change_visibility_together(
            [
                (e.get("Id"), e.get("ReceiptHandle"), e.get("VisibilityTimeout", 0))
                for e in _entries(request)
            ]
        )

    def _get_queue_attributes(self, request: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(request)
        return {"Attributes": queue.attributes(request.get("AttributeNames") or [])}

    def _get_queue_url(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request.get("QueueName")
        for queue in self.queues.values():
            if queue.name == name:
                return {"QueueUrl": queue.url}
        raise ServiceError(
            "QueueDoesNotExist",
            "The specified queue does not exist.",
            query_code="AWS.SimpleQueueService.NonExistentQueue",
        )


def _entries(request: dict[str, Any]) -> list[dict[str, Any]]:
    entries = request.get("Entries")
    if not isinstance(entries, list) or not entries:
        raise ServiceError(
            "EmptyBatchRequest",
            "There should be at least one SendMessageBatchRequestEntry in the request.",
            query_code="AWS.SimpleQueueService.EmptyBatchRequest",
        )
    if len(entries) > MAX_RECEIVE_BATCH:
        raise ServiceError(
            "TooManyEntriesInBatchRequest",
            f"Maximum number of entries per request are {MAX_RECEIVE_BATCH}. You have sent "
            f"{len(entries)}.",
            query_code="AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
        )
    ids = [e.get("Id") if isinstance(e, dict) else None for e in entries]
    if len(set(map(str, ids))) != len(ids):
        raise ServiceError(
            "BatchEntryIdsNotDistinct",
            "Two or more batch entries in the request have the same Id.",
            query_code="AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
        )
    return [e for e in entries if isinstance(e, dict)]
