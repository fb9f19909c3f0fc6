"""The statistics of one governor check: failed share, median, p90, and the baseline's limit.

Latencies are close to lognormal, so the latency rule works in log latency. The spread s of a
shop's log latency is estimated from the baseline's interquartile range, which a few wild
outliers do not move. The median of n samples then has a standard error of about
sqrt(pi/2) x s / sqrt(n) (MEDIAN_SE_FACTOR), so a healthy check's median differs from a
baseline median of `pooled` samples by a normal jitter of MEDIAN_SE_FACTOR x s x
sqrt(1/n + 1/pooled). The limit (`Baseline.slow_above_ms`) is MEDIAN_Z of those above the
baseline median: a healthy check crosses it with probability 0.13%; two in a row, which halve
the rate, about once a year of checks. It is never closer than MIN_SLOWDOWN times, nor
MIN_MARGIN_MS above, the baseline median: a change smaller than that is one no visitor
notices, and it keeps a very steady shop (on loopback, say) from being slow by a few ms.
docs/pipeline.md has the derivation and bench/governor_table.py the measured rates.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from beekeeper.room.governor_sampling import Sample

ERROR_SHARE = 0.10  # failed share of a check that makes it degraded (6 of 60)
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)  # standard error of a median, in units of s/sqrt(n)
MEDIAN_Z = 3.0  # standard errors above the baseline median where slow starts
MIN_SLOWDOWN = 1.25  # a median less than 25% above the baseline's is never slow...
MIN_MARGIN_MS = 25.0  # ...nor one less than 25 ms above it
LATENCY_FLOOR_MS = 0.1  # logs of latencies below this are taken at this (no log of 0)


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending, non-empty sequence."""
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def log_spread(ordered: Sequence[float]) -> float:
    """The standard deviation of log latency, from the interquartile range (robust to outliers).

    For a lognormal latency the quartiles of log latency are 0.6745 s either side of its mean.
    """
    if len(ordered) < 4:
        return 0.0
    low, high = (max(LATENCY_FLOOR_MS, percentile(ordered, q)) for q in (0.25, 0.75))
    return (math.log(high) - math.log(low)) / (2 * 0.6745)


def errors_to_degrade(samples: int) -> int:
    """Failed samples that make a check of `samples` degraded: ERROR_SHARE of them, at least 1."""
    return max(1, math.ceil(ERROR_SHARE * samples - 1e-9))


@dataclass(frozen=True)
class CheckStats:
    """One check's samples, summarised."""

    samples: int
    errors: int
    failures: tuple[tuple[str, int], ...]  # (reason, count), most frequent first
    latencies: tuple[float, ...]  # of the successful samples, ascending
    median_ms: float | None
    p90_ms: float | None
    mean_ms: float | None

    @classmethod
    def of(cls, samples: Sequence[Sample]) -> CheckStats:
        ordered = tuple(sorted(s.ms for s in samples if s.ok))
        failed = Counter(s.failure or "failed" for s in samples if not s.ok)
        return cls(
            samples=len(samples),
            errors=sum(failed.values()),
            failures=tuple(failed.most_common()),
            latencies=ordered,
            median_ms=statistics.median(ordered) if ordered else None,
            p90_ms=percentile(ordered, 0.9) if ordered else None,
            mean_ms=statistics.fmean(ordered) if ordered else None,
        )

    @property
    def degraded(self) -> bool:
        return self.samples > 0 and self.errors >= errors_to_degrade(self.samples)

    def describe_failures(self) -> str:
        return ", ".join(f"{reason} x{count}" for reason, count in self.failures)


@dataclass(frozen=True)
class Baseline:
    median_ms: float
    spread: float  # standard deviation of log latency
    samples: int  # pooled

    @classmethod
    def pooled(cls, checks: Sequence[Sequence[float]]) -> Baseline:
        ordered = sorted(ms for check in checks for ms in check)
        # Rounded as the governor item stores them, so a stored baseline is the one decided.
        return cls(
            round(statistics.median(ordered), 1), round(log_spread(ordered), 4), len(ordered)
        )

    def slow_above_ms(self, samples: int) -> float:
        """The median above which a check of `samples` successful samples is slow."""
        jitter = MEDIAN_SE_FACTOR * self.spread * math.sqrt(1 / samples + 1 / self.samples)
        return max(
            self.median_ms * math.exp(MEDIAN_Z * jitter),
            self.median_ms * MIN_SLOWDOWN,
            self.median_ms + MIN_MARGIN_MS,
        )
