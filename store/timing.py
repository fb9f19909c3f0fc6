"""Time and mutual exclusion for the store: real (threads) or simulated (the simulator's clock).

The store keeps its state under a `Guard` and reads the time from a `Timing`. A long poll
waits on its queue's guard until a send (or a message coming back) notifies it or its time is
up: in real time a condition variable does that; in the simulator the waiting process yields
to the scheduler (simulator/clock.py), so the same queue code serves both.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Protocol


class Guard(Protocol):
    """Held while the store reads or changes its state."""

    def __enter__(self) -> object: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None: ...

    def wait(self, seconds: float) -> None:
        """Inside the guard: let others in for up to `seconds`, or until `notify`."""

    def notify(self) -> None:
        """Inside the guard: wake everyone waiting on this guard."""


class Timing(Protocol):
    def now(self) -> float: ...

    def guard(self) -> Guard:
        """A new guard (one per table set or queue)."""


class _ThreadGuard:
    def __init__(self) -> None:
        self._condition = threading.Condition(threading.Lock())

    def __enter__(self) -> object:
        return self._condition.__enter__()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._condition.__exit__(kind, error, trace)

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            self._condition.wait(seconds)

    def notify(self) -> None:
        self._condition.notify_all()


class RealTime:
    """Wall-clock time; guards are locks with condition variables, for many threads."""

    def now(self) -> float:
        return time.time()

    def guard(self) -> Guard:
        return _ThreadGuard()
