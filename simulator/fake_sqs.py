"""An in-memory standard SQS queue: only the calls the producer, trigger and consumers make.

Modelled behaviour of a standard queue: a long poll waits (in simulated time) until something
is sent or comes back, and returns at once when something is visible; a receive may return
fewer messages than are visible (short receives); messages
that come back after their visibility timeout rejoin at the end (slight reordering); with the
duplicates fault a delivered message is delivered again later, even after it was deleted
(at-least-once delivery); after QUEUE_MAX_RECEIVE_COUNT receives a message moves to the DLQ.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from beekeeper.core.datamodel import QUEUE_MAX_RECEIVE_COUNT, QUEUE_VISIBILITY_TIMEOUT_SECONDS
from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.faults import FaultLog, Faults

SHORT_RECEIVE_CHANCE = 0.1


@dataclass
class _Message:
    body: str
    state: str = "visible"  # visible, inflight, deleted, dead
    receives: int = 0
    generation: int = 0


class FakeQueue:
    def __init__(self, scheduler: Scheduler, rng: random.Random, faults: Faults) -> None:
        self._scheduler = scheduler
        self._rng = rng
        self._faults = faults
        self._waiters: list[Callable[[], None]] = []  # long polls in progress
        self.messages: list[_Message] = []
        self._visible: deque[tuple[int, bool]] = deque()  # (message index, is a duplicate copy)
        self._visible_count = 0  # real messages visible (duplicate copies are not counted)
        # Messages due back: (when, order, [(index, generation)]); generation -1 marks a
        # duplicate copy. One entry per receive keeps the heap small at 270,000 a minute.
        self._returning: list[tuple[float, int, list[tuple[int, int]]]] = []
        self._order = itertools.count()
        self.calls = 0
        self.injected = FaultLog(scheduler.clock)  # faults that actually happened, and when
        self.deliveries = 0

    # -- bookkeeping ----------------------------------------------------------------------------

    def _refresh(self) -> None:
        now = self._scheduler.now
        while self._returning and self._returning[0][0] <= now:
            _, _, due = heapq.heappop(self._returning)
            for index, generation in due:
                message = self.messages[index]
                if generation == -1:  # a duplicate copy: delivered next, whatever is queued
                    self._visible.appendleft((index, True))
                elif message.state == "inflight" and message.generation == generation:
                    self._make_visible(index)

    def _make_visible(self, index: int, front: bool = False) -> None:
        message = self.messages[index]
        message.state = "visible"
        message.generation += 1
        (self._visible.appendleft if front else self._visible.append)((index, False))
        self._visible_count += 1

    def _next_return(self) -> float | None:
        return self._returning[0][0] if self._returning else None

    @staticmethod
    def _index(handle: str) -> tuple[int, int]:
        index, _, generation = handle.partition(":")
        return int(index), int(generation)

    # -- the SQS API ----------------------------------------------------------------------------

    def receive_message(
        self, *, QueueUrl: str, MaxNumberOfMessages: int = 1, WaitTimeSeconds: int = 0, **_: Any
    ) -> dict[str, Any]:
        self.calls += 1
        if self._scheduler.in_process():
            self._faults.maybe_crash(self._rng, self.injected)
        self._refresh()
        give_up = self._scheduler.now + WaitTimeSeconds
        while not self._visible and self._scheduler.now < give_up:
            upcoming = self._next_return()
            until = min(give_up, upcoming) if upcoming is not None else give_up
            self._scheduler.wait(until - self._scheduler.now, self._waiters)
            self._refresh()
        wanted = MaxNumberOfMessages
        if self._rng.random() < SHORT_RECEIVE_CHANCE:
            wanted = self._rng.randint(1, wanted)
        out: list[dict[str, str]] = []
        returning: list[tuple[int, int]] = []
        while self._visible and len(out) < wanted:
            index, duplicate = self._visible.popleft()
            message = self.messages[index]
            if duplicate:
                out.append(
                    {"MessageId": str(index), "ReceiptHandle": f"{index}:-1", "Body": message.body}
                )
                continue
            if message.state != "visible":
                continue
            self._visible_count -= 1
            message.receives += 1
            if message.receives > QUEUE_MAX_RECEIVE_COUNT:
                message.state = "dead"
                continue
            message.state = "inflight"
            message.generation += 1
            returning.append((index, message.generation))
            if self._faults.duplicates and self._rng.random() < self._faults.duplicate_per_delivery:
                self.injected.add("duplicates")
                again = self._scheduler.now + self._rng.uniform(0.5, 20)
                heapq.heappush(self._returning, (again, next(self._order), [(index, -1)]))
            out.append(
                {
                    "MessageId": str(index),
                    "ReceiptHandle": f"{index}:{message.generation}",
                    "Body": message.body,
                }
            )
        if returning:
            back = self._scheduler.now + QUEUE_VISIBILITY_TIMEOUT_SECONDS
            heapq.heappush(self._returning, (back, next(self._order), returning))
        self.deliveries += len(out)
        return {"Messages": out} if out else {}

    def send_message(self, *, QueueUrl: str, MessageBody: str, **_: Any) -> dict[str, Any]:
        self.calls += 1
        index = len(self.messages)
        self.messages.append(_Message(MessageBody))
        self._visible.append((index, False))
        self._visible_count += 1
        self._scheduler.notify(self._waiters)
        return {"MessageId": str(index)}

    def delete_message_batch(
        self, *, QueueUrl: str, Entries: list[dict[str, str]]
    ) -> dict[str, Any]:
        self.calls += 1
        if self._scheduler.in_process():
            self._faults.maybe_crash(self._rng, self.injected)
        for entry in Entries:
            index, _ = self._index(entry["ReceiptHandle"])
            message = self.messages[index]
            if message.state == "visible":
                self._visible_count -= 1
            if message.state != "dead":
                message.state = "deleted"
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": []}

    def change_message_visibility_batch(
        self, *, QueueUrl: str, Entries: list[dict[str, Any]]
    ) -> dict[str, Any]:
        self.calls += 1
        later: list[tuple[int, int]] = []
        for entry in Entries:
            index, generation = self._index(entry["ReceiptHandle"])
            message = self.messages[index]
            if generation != message.generation or message.state != "inflight":
                continue
            if entry.get("VisibilityTimeout", 0) > 0:
                message.generation += 1  # the old timeout no longer applies
                later.append((index, message.generation))
            else:
                self._make_visible(index, front=True)
        if later:
            # Messages hidden for the same time come back together, in their order.
            back = self._scheduler.now + Entries[0]["VisibilityTimeout"]
            heapq.heappush(self._returning, (back, next(self._order), later))
        self._scheduler.notify(self._waiters)
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": []}

    def get_queue_attributes(self, *, QueueUrl: str, AttributeNames: list[str]) -> dict[str, Any]:
        self.calls += 1
        self._refresh()
        return {"Attributes": {"ApproximateNumberOfMessages": str(self._visible_count)}}

    # -- what the simulation reports --------------------------------------------------------

    def visible_now(self) -> int:
        self._refresh()
        return self._visible_count

    def states(self) -> list[str]:
        self._refresh()
        return [m.state for m in self.messages]
