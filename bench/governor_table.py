"""Benchmark: the governor's decisions on synthetic shops, as rates over many seeds.

    .venv/bin/python bench/governor_table.py [--seeds 100] [--hours 24] [--markdown]

Runs the real decision code, `beekeeper.room.governor.decide`, one check per simulated
minute, with its state passing through the same DynamoDB item it is kept in and the rate it
decides becoming the next check's rate, as `run_governor` does. No clock, no HTTP: a check's
samples are drawn from a synthetic shop (lognormal latency with the given median and sigma,
each request failing independently with the given share).

First, why SAMPLES samples per check: both rules worked out for 20 to 80 samples (exact
binomial for the errors, the normal approximation of a median for latency). Then per shop,
over the seeds:
- a healthy day: halvings per 24 h (mean and the worst seed) and the mean rate as a share of
  the operator's;
- 2x slower for 5 minutes (after 30 healthy minutes): the share of seeds halved within the
  first 2 slow checks, and whether recovery then follows a quarter of the gap per healthy
  check to the operator's rate (and how many checks it takes);
- 20% of requests failing: the share of seeds halved at the first failing check;
- 1.5x slower for 5 minutes: the share of seeds halved within 2 checks (for information).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import statistics
import time
from dataclasses import dataclass

from beekeeper.room.governor import BASELINE_CHECKS, HALVE, SAMPLES, decide, raised
from beekeeper.room.governor_records import GovernorState
from beekeeper.room.governor_sampling import Sample
from beekeeper.room.governor_stats import MEDIAN_SE_FACTOR, Baseline, errors_to_degrade
from beekeeper.room.room_state import RoomConfig

OPERATOR_RATE = 1000
MINUTES_PER_DAY = 24 * 60
WARM_UP_CHECKS = 30
EVENT_CHECKS = 5


@dataclass(frozen=True)
class Shop:
    median_ms: float
    sigma: float
    error_share: float

    def label(self) -> str:
        return f"median {self.median_ms:.0f} ms, sigma {self.sigma}, {self.error_share:.0%} errors"

    def draw(
        self, rng: random.Random, *, slower: float = 1.0, failing: float = 0.0
    ) -> list[Sample]:
        mu = math.log(self.median_ms * slower)
        errors = max(self.error_share, failing)
        return [
            Sample(ok=False, ms=rng.lognormvariate(mu, self.sigma), failure="HTTP 502")
            if rng.random() < errors
            else Sample(ok=True, ms=rng.lognormvariate(mu, self.sigma))
            for _ in range(SAMPLES)
        ]


class Governed:
    """A room at the operator's rate and its governor, checked once a simulated minute."""

    def __init__(self) -> None:
        self.config = RoomConfig(True, OPERATOR_RATE, OPERATOR_RATE, 1, 0)
        self.state: GovernorState | None = None
        self.now = 1_700_000_000.0

    def check(self, samples: list[Sample]) -> str:
        decision, state = decide(self.config, self.state, samples, self.now)
        # Stored and read back as run_governor does between two Lambda runs.
        self.state = GovernorState.from_item(state.to_item(self.now))
        self.config = dataclasses.replace(self.config, rate=decision.rate_after)
        self.now += 60
        return decision.decision


def healthy_day(shop: Shop, seed: int, checks: int) -> tuple[int, float]:
    """(halvings, mean rate as a share of the operator's) over `checks` healthy minutes."""
    rng, room = random.Random(seed), Governed()
    halvings, rates = 0, 0
    for _ in range(checks):
        halvings += room.check(shop.draw(rng)) == HALVE
        rates += room.config.rate
    return halvings, rates / checks / OPERATOR_RATE


@dataclass(frozen=True)
class EventOutcome:
    first_halve: int | None  # 1-based index of the first halving check during the event
    on_quarter_path: bool  # back to the operator's rate exactly a quarter of the gap a check
    checks_to_recover: int | None  # healthy-shop checks until the operator's rate again


def event(shop: Shop, seed: int, *, slower: float = 1.0, failing: float = 0.0) -> EventOutcome:
    """Warm up healthy, then EVENT_CHECKS checks of the shop `slower` times slower or with
    `failing` of its requests failing, then healthy checks until the operator's rate."""
    rng, room = random.Random(seed), Governed()
    for _ in range(WARM_UP_CHECKS):
        room.check(shop.draw(rng))
    first = None
    for index in range(1, EVENT_CHECKS + 1):
        if room.check(shop.draw(rng, slower=slower, failing=failing)) == HALVE and first is None:
            first = index
    path = quarter_path(room.config.rate)
    taken = []
    while room.config.rate < OPERATOR_RATE and len(taken) < 120:
        room.check(shop.draw(rng))
        taken.append(room.config.rate)
    recovered = len(taken) if room.config.rate >= OPERATOR_RATE else None
    return EventOutcome(first, taken == path, recovered)


def quarter_path(rate: int) -> list[int]:
    """The rates after each healthy check from `rate` back to the operator's (the case study)."""
    path = []
    while rate < OPERATOR_RATE:
        rate = raised(rate, OPERATOR_RATE)
        path.append(rate)
    return path


def print_header(columns: tuple[str, ...], markdown: bool) -> None:
    print_row(columns, markdown)
    if markdown:  # the first column left-aligned, the figures right-aligned
        print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(columns))) + "|")


def print_row(cells: tuple[str, ...], markdown: bool) -> None:
    print(("| " + " | ".join(cells) + " |") if markdown else " | ".join(cells), flush=True)


def share(flags: list[bool]) -> str:
    return f"{sum(flags) / len(flags):.0%}"


def recovery(outcomes: list[EventOutcome]) -> str:
    checks = [o.checks_to_recover for o in outcomes]
    known = [c for c in checks if c is not None]
    worst = "never" if None in checks or not known else str(max(known))
    return f"{statistics.median(known):.0f} / {worst}" if known else "never"


def normal_above(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))


def binomial_at_least(n: int, p: float, k: int) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def sample_size_table(markdown: bool) -> None:
    """Why SAMPLES: both rules by samples per check, from the exact binomial and the normal
    approximation of a median (a baseline pooled from BASELINE_CHECKS checks, sigma 0.6)."""
    columns = (
        "samples per check",
        "degraded at",
        "false halvings per day, 1% errors",
        "20% failing: halved at once",
        "sigma 0.6: slow above",
        "false slow per check",
        "2x slower: halved by the 2nd check",
    )
    print_header(columns, markdown)
    for n in (20, 40, 60, 80):
        k = errors_to_degrade(n)
        baseline = Baseline(100.0, 0.6, BASELINE_CHECKS * n)
        limit = math.log(baseline.slow_above_ms(n) / 100.0)
        check_se = MEDIAN_SE_FACTOR * 0.6 / math.sqrt(n)
        pooled_se = MEDIAN_SE_FACTOR * 0.6 / math.sqrt(baseline.samples)
        false_slow = normal_above(limit / math.hypot(check_se, pooled_se))
        slow_2x = normal_above((limit - math.log(2)) / check_se)
        row = (
            f"{n}",
            f"{k} ({k / n:.0%})",
            f"{MINUTES_PER_DAY * binomial_at_least(n, 0.01, k):.3f}",
            f"{binomial_at_least(n, 0.2, k):.1%}",
            f"{math.exp(limit):.2f} x",
            f"{false_slow:.2%}",
            f"{slow_2x**2:.1%}",
        )
        print_row(row, markdown)


def run(seeds: int, hours: float, markdown: bool) -> None:
    shops = [Shop(100, sigma, errors) for sigma in (0.3, 0.6) for errors in (0.0, 0.01)]
    checks = int(hours * 60)
    columns = (
        "shop",
        f"halvings per {hours:g} h: mean / worst",
        "mean rate",
        "2x slower: halved within 2 checks",
        "then back by a quarter of the gap per check",
        "checks to full rate: median / worst",
        "20% failing: halved at the 1st check",
        "1.5x slower: halved within 2 checks",
        "seconds",
    )
    print_header(columns, markdown)
    for shop in shops:
        started = time.perf_counter()
        days = [healthy_day(shop, seed, checks) for seed in range(seeds)]
        halvings = [h for h, _ in days]
        slower = [event(shop, seed, slower=2.0) for seed in range(seeds)]
        failing = [event(shop, seed, failing=0.2) for seed in range(seeds)]
        slightly = [event(shop, seed, slower=1.5) for seed in range(seeds)]
        row = (
            shop.label(),
            f"{statistics.fmean(halvings):.2f} / {max(halvings)}",
            f"{statistics.fmean(r for _, r in days):.2%}",
            share([o.first_halve is not None and o.first_halve <= 2 for o in slower]),
            share([o.on_quarter_path for o in slower]),
            recovery(slower),
            share([o.first_halve == 1 for o in failing]),
            share([o.first_halve is not None and o.first_halve <= 2 for o in slightly]),
            f"{time.perf_counter() - started:.0f}",
        )
        print_row(row, markdown)
    print(
        f"\n{seeds} seeds; {SAMPLES} samples per check, one check per simulated minute; events "
        f"after {WARM_UP_CHECKS} healthy minutes, lasting {EVENT_CHECKS} checks; rates from "
        f"an operator's {OPERATOR_RATE:,}/min."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args()
    sample_size_table(args.markdown)
    print()
    run(args.seeds, args.hours, args.markdown)


if __name__ == "__main__":
    main()
