"""The local stand-in for EventBridge and Lambda's async invoke.

Every (possibly shortened) minute it runs the real trigger, which starts the real consumers
through `invoke_consumer`: each consumer runs in its own thread, as each runs in its own Lambda
in AWS. With dynamic rate throttling the real governor runs on the same schedule.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from beekeeper.local.room_code import Payload, RoomCode
from beekeeper.room.pacing import SPAN_MARGIN_FRACTION

log = logging.getLogger("beekeeper.local")


class MinuteSchedule:
    """EventBridge's every-minute rule and Lambda's async invoke, for one local room."""

    def __init__(
        self,
        code: RoomCode,
        *,
        minute_seconds: float,
        with_governor: bool,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._code = code
        self._minute_seconds = minute_seconds
        self._with_governor = with_governor
        self._clock = clock
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="beekeeper-scheduler", daemon=True)
        self._workers: list[threading.Thread] = []
        self._workers_lock = threading.Lock()
        self.deliveries = 0

    def start(self) -> None:
        # From now on a visitor who joins a minute without a consumer wakes one.
        self._code.connect_consumers(self.invoke_consumer)
        self._thread.start()

    def stop(self, timeout: float) -> list[str]:
        """Stop scheduling, wait up to `timeout` s for running work; names what is left."""
        self._stopping.set()
        deadline = time.monotonic() + timeout
        if self._thread.is_alive():
            self._thread.join(max(0.0, deadline - time.monotonic()))
        with self._workers_lock:
            workers = list(self._workers)
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        return [w.name for w in workers if w.is_alive()]

    def invoke_consumer(self, payload: Payload) -> None:
        """Lambda's async invoke, locally: the consumer runs in a thread of its own."""
        self._spawn("beekeeper-consumer", lambda: self._code.consumer(payload))

    def _spawn(self, name: str, work: Callable[[], Any]) -> None:
        def run() -> None:
            try:
                work()
            except Exception:
                if not self._stopping.is_set():
                    log.exception("%s failed", name)

        thread = threading.Thread(target=run, name=name, daemon=True)
        with self._workers_lock:
            self._workers = [w for w in self._workers if w.is_alive()]
            self._workers.append(thread)
        thread.start()

    def next_delivery(self, now: float) -> float:
        """Like EventBridge: just after the start of the next (epoch-aligned) minute.

        The trigger names its minute floor(now / minute_seconds), so aligned deliveries give
        every minute exactly one delivery, whatever the thread's timing jitter.
        """
        minute = self._minute_seconds
        # Early in the span's leading margin (a second in a real minute), so the consumers
        # are running when the first admission slot falls due, however short the minute.
        return (now // minute + 1) * minute + min(0.25, minute * SPAN_MARGIN_FRACTION / 4)

    def _run(self) -> None:
        # The first delivery is at once: a room admits from its first minute.
        while not self._stopping.is_set():
            self.deliveries += 1
            self._spawn("beekeeper-trigger", lambda: self._code.trigger(self.invoke_consumer))
            if self._with_governor:
                self._spawn("beekeeper-governor", self._code.governor)
            now = self._clock()
            self._stopping.wait(self.next_delivery(now) - now)
