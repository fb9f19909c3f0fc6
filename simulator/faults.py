"""Which faults a simulation injects, and how often."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

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
    ) -> None:
        self._faults = faults
        self._rng = rng
        self._in_process = in_process
        self._crash_on = crash_on
        self.injected = FaultLog(clock)  # faults that actually happened, and when

    def before(self, action: str) -> None:
        if action in self._crash_on and self._in_process():
            self._faults.maybe_crash(self._rng, self.injected)

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
            return self._rng.uniform(0.5, 20)
        return None
