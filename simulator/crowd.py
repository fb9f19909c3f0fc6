"""What a simulation puts a room through: who comes and when, what fails, and for how long.

The room itself is a `RoomSettings` (its rate, cap, sessions, presence, the work a place
costs...); a `Crowd` is everything else `beekeeper simulate` is told: the visitors and their
arrival, the minutes simulated, the faults injected, the seed, live rate changes, a scheduled
start, and in capacity mode how visitors wait and shop (`Visits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from beekeeper.simulator.faults import Faults

# A realistic epoch (a whole minute) so epoch minutes and TTLs look like production's: the
# first simulated minute starts here.
EPOCH = 1_800_000_000 - 1_800_000_000 % 60
DEFAULT_VISIT_MINUTES = 10.0
# The simulated room's identity: what `beekeeper simulate` does not ask for (its settings are
# the flags given, then each setting's default).
SIMULATED_ROOM = {
    "name": "simulated",
    "display_name": "Simulated room",
    "region": "us-east-1",
    "origin": "https://shop.example.com",
}


@dataclass(frozen=True)
class Arrival:
    """ "burst": everyone just before the first minute; "uniform:K": evenly over K minutes;
    "at:S": everyone S seconds into the first minute; "over:S" (tests only): evenly over the
    first S seconds of the first minute."""

    kind: str
    minutes: int = 0
    seconds: float = 0

    @classmethod
    def parse(cls, text: str) -> Arrival:
        if text == "burst":
            return cls("burst")
        kind, _, number = text.partition(":")
        if kind == "uniform" and number.isdigit() and int(number) >= 1:
            return cls("uniform", minutes=int(number))
        if kind == "at" and number.isdigit():
            return cls("at", seconds=int(number))
        raise ValueError(
            f"arrival {text!r}: use 'burst', 'uniform:MINUTES' (e.g. uniform:5) "
            "or 'at:SECONDS' (everyone that many seconds into the first minute)"
        )

    def times(self, visitors: int) -> list[float]:
        if self.kind == "burst":
            return [EPOCH - 1.0] * visitors
        if self.kind == "at":
            return [EPOCH + float(self.seconds)] * visitors
        if self.kind == "over":
            return [EPOCH + self.seconds * i / visitors for i in range(visitors)]
        span = self.minutes * 60
        return [EPOCH + span * i / visitors for i in range(visitors)]

    def __str__(self) -> str:
        if self.kind == "uniform":
            return f"uniform:{self.minutes}"
        if self.kind == "over":
            return f"over:{self.seconds:g}"
        return f"at:{self.seconds}" if self.kind == "at" else self.kind


@dataclass(frozen=True)
class Visits:
    """How capacity mode's visitors wait and shop (simulator/capacity.py); the room's cap,
    sessions, claim window and presence are its settings."""

    visit_minutes: float = DEFAULT_VISIT_MINUTES  # mean time in the shop (exponential)
    abandon: float = 0.0  # fraction of waiting visitors who walk away without a word
    leave: float = 0.0  # fraction of visitors inside who end their visit with /leave
    leave_line: float = 0.0  # fraction of waiting visitors who press "Leave the line"

    def __post_init__(self) -> None:
        for name in ("abandon", "leave", "leave_line"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} {value}: use a fraction from 0 to 1")
        if not self.visit_minutes > 0:
            raise ValueError(f"visit_minutes {self.visit_minutes}: use a positive number")


@dataclass(frozen=True)
class Crowd:
    """One simulation's visitors and circumstances.

    `rate_changes`: (seconds after the first minute starts, new rate), set live as `beekeeper
    rate` does. `starts_at_minute` K: the room's scheduled start at minute K of the simulated
    clock (its `starts_at`): earlier arrivals join the pre-queue and are drawn at the start.
    `visits`: what the visitors of a capacity-mode room do (ignored in rate mode)."""

    visitors: int
    arrival: Arrival
    minutes: int
    faults: Faults = field(default_factory=Faults)
    seed: int = 1
    rate_changes: tuple[tuple[float, int], ...] = ()
    starts_at_minute: int | None = None
    visits: Visits = Visits()

    def __post_init__(self) -> None:
        changes: Sequence[tuple[float, int]] = self.rate_changes
        object.__setattr__(self, "rate_changes", tuple(changes))

    @property
    def starts_at(self) -> int | None:
        """The scheduled start on the simulated clock (None: no schedule)."""
        return None if self.starts_at_minute is None else EPOCH + 60 * self.starts_at_minute
