"""Which faults a simulation injects, and how often."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from botocore.exceptions import ClientError

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


def client_error(code: str, operation: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "simulated"}}, operation)


def transaction_cancelled(reasons: list[dict[str, str]]) -> ClientError:
    """DynamoDB's refusal of a transaction, with a reason per action, as botocore raises it."""
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "simulated"},
            "CancellationReasons": reasons,
        },
        "TransactWriteItems",
    )
