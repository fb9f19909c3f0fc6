"""Which faults a simulation injects, and how often."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from beekeeper.room.pacing import MINUTE_SECONDS, minute_span
from beekeeper.simulator.clock import Scheduler
from beekeeper.store.errors import ServiceError

FAULT_NAMES = ("crash", "throttle", "duplicates", "double-trigger")


class SimulatedCrash(Exception):
    """A consumer's batch dies between two AWS calls (what a lost connection looks like)."""


@dataclass(frozen=True)
class Faults:
    crash: bool = False
    throttle: bool = False
    duplicates: bool = False
    double_trigger: bool = False
    # How often, when switched on.
    crash_per_call: float = 0.03
    # Throttling comes in bursts: some calls leave part of their items unprocessed.
    partly_unprocessed_per_call: float = 0.1
    unprocessed_per_item: float = 0.5
    throttled_per_call: float = 0.02
    duplicate_per_delivery: float = 0.1
    # Of the duplicates, how many are handed to another consumer at once while the receiving
    # one is held between its duplicate check and its admission write (two deliveries of one
    # message handled at the same time), and for how long it is held: less than one receive
    # batch's slots at a lane's pace, so the hold alone forfeits no slot.
    interleaved_per_duplicate: float = 0.3
    interleaved_hold_seconds: tuple[float, float] = (0.002, 0.009)
    # Never this close to the end of a minute's admission span: a consumer held there could not
    # use its last slot (a late consumer's documented loss, not the race this fault is for).
    interleaved_clearance_seconds: float = 0.25

    @classmethod
    def parse(cls, text: str) -> Faults:
        """ "crash,throttle" -> Faults(crash=True, throttle=True); raises ValueError."""
        names = [n.strip() for n in text.split(",") if n.strip()] if text else []
        unknown = [n for n in names if n not in FAULT_NAMES]
        if unknown:
            raise ValueError(
                f"unknown fault {unknown[0]!r}; use a comma-separated list of "
                + ", ".join(FAULT_NAMES)
            )
        return cls(
            crash="crash" in names,
            throttle="throttle" in names,
            duplicates="duplicates" in names,
            double_trigger="double-trigger" in names,
        )

    @property
    def names(self) -> list[str]:
        flags = (self.crash, self.throttle, self.duplicates, self.double_trigger)
        return [name for name, on in zip(FAULT_NAMES, flags, strict=True) if on]

    def maybe_crash(self, rng: random.Random, injected: FaultLog) -> None:
        if self.crash and rng.random() < self.crash_per_call:
            injected.add("crash")
            raise SimulatedCrash("simulated crash")


@dataclass
class FaultLog:
    """Each fault that actually struck, with the simulated time it struck at."""

    clock: Callable[[], float]
    events: list[tuple[float, str]] = field(default_factory=list)

    def add(self, kind: str, count: int = 1) -> None:
        now = self.clock()
        self.events.extend((now, kind) for _ in range(count))

    def counts(self) -> Counter[str]:
        return Counter(kind for _, kind in self.events)


# A standard queue's receive may return fewer messages than are visible, this often.
SHORT_RECEIVE_CHANCE = 0.1
# The calls that write admissions (rate mode's and capacity mode's), where a held consumer waits.
ADMISSION_WRITES = frozenset({"TransactWriteItems", "BatchWriteItem"})


@dataclass
class Interleavings:
    """The duplicates fault's interleaving, shared by the simulation's queue and table.

    When the queue hands a copy of a message to the line at once (another consumer's next
    receive takes it), the process that received the original is marked; the table holds it at
    its next admission write, so both consumers have read the visitor's item (none yet) before
    either writes: the race only the write's condition can settle.
    """

    marked: set[object] = field(default_factory=set)
    held: int = 0  # processes actually held between their read and their write


class SimulatedFaults:
    """The store's disturbance (store/disturbance.py) from a simulation's faults and seed.

    `crash_on` names the calls a crash may strike; crashes strike only inside a simulated
    process (a consumer), never the simulation's own steps.
    """

    def __init__(
        self,
        faults: Faults,
        rng: random.Random,
        in_process: Callable[[], bool],
        clock: Callable[[], float],
        crash_on: frozenset[str],
        interleavings: Interleavings | None = None,
        process: Callable[[], object] = lambda: None,
        sleep: Callable[[float], None] = lambda _seconds: None,
    ) -> None:
        self._faults = faults
        self._rng = rng
        self._in_process = in_process
        self._crash_on = crash_on
        self._interleavings = interleavings
        self._process = process
        self._sleep = sleep
        self._clock = clock
        self.injected = FaultLog(clock)  # faults that actually happened, and when

    @classmethod
    def on(
        cls,
        scheduler: Scheduler,
        faults: Faults,
        rng: random.Random,
        crash_on: frozenset[str],
        interleavings: Interleavings | None = None,
    ) -> SimulatedFaults:
        """The faults of one simulated service, on the simulation's clock and processes."""
        return cls(
            faults,
            rng,
            scheduler.in_process,
            scheduler.clock,
            crash_on,
            interleavings,
            process=scheduler.process,
            sleep=scheduler.sleep,
        )

    def before(self, action: str) -> None:
        # Without the crash fault, maybe_crash draws nothing: not asked.
        if self._faults.crash and action in self._crash_on and self._in_process():
            self._faults.maybe_crash(self._rng, self.injected)
        if action in ADMISSION_WRITES and self._interleavings is not None:
            marked = self._interleavings.marked
            if marked and self._process() in marked:
                marked.discard(self._process())
                now = self._clock()
                _, span_end = minute_span(math.floor(now / MINUTE_SECONDS), MINUTE_SECONDS)
                if span_end - now > self._faults.interleaved_clearance_seconds:
                    # Held between the duplicate check and the write: the copy's consumer
                    # reads and writes meanwhile.
                    self._interleavings.held += 1
                    self._sleep(self._rng.uniform(*self._faults.interleaved_hold_seconds))

    def unprocessed(self, requests: Sequence[dict[str, Any]]) -> list[bool]:
        """Throttling strikes admission writes (`v#` items) only, in bursts."""
        faults, rng = self._faults, self._rng
        is_admission = any(
            r.get("PutRequest", {}).get("Item", {}).get("pk", {}).get("S", "").startswith("v#")
            for r in requests
        )
        if faults.throttle and is_admission and rng.random() < faults.throttled_per_call:
            self.injected.add("throttle")
            raise ServiceError("ProvisionedThroughputExceededException", "simulated")
        partly = (
            faults.throttle and is_admission and rng.random() < faults.partly_unprocessed_per_call
        )
        left = []
        for _ in requests:
            stays = partly and rng.random() < faults.unprocessed_per_item
            if stays:
                self.injected.add("throttle")
            left.append(stays)
        return left

    def transaction_throttled(self, operations: Sequence[dict[str, Any]]) -> bool:
        """Throttling strikes admission transactions (a Put of a `v#` item) as batch writes."""
        if not self._faults.throttle:
            return False
        admits = any(
            operation.get("Put", {}).get("Item", {}).get("pk", {}).get("S", "").startswith("v#")
            for operation in operations
        )
        if (
            self._faults.throttle
            and admits
            and self._rng.random() < self._faults.throttled_per_call
        ):
            self.injected.add("throttle")
            return True
        return False

    def receive_count(self, wanted: int) -> int:
        if self._rng.random() < SHORT_RECEIVE_CHANCE:
            return self._rng.randint(1, wanted)
        return wanted

    def duplicate_after(self) -> float | None:
        if self._faults.duplicates and self._rng.random() < self._faults.duplicate_per_delivery:
            self.injected.add("duplicates")
            if (
                self._interleavings is not None
                and self._in_process()
                and self._rng.random() < self._faults.interleaved_per_duplicate
            ):
                self._interleavings.marked.add(self._process())
                return 0.0  # the copy is the next receive's, while this one is held
            return self._rng.uniform(0.5, 20)
        return None
