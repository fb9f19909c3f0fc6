"""Dynamic rate throttling: slow admissions down while the shop is really struggling.

Every minute the governor takes one *check*: SAMPLES GETs of the room's sampled URL, spread
over the first half of the minute (`governor_sampling`). It judges the check as a visitor
would see the shop:

- **Errors.** The check is *degraded* when at least ERROR_SHARE of its samples failed (a
  non-2xx answer after redirects, a timeout, a connection error). A degraded check halves the
  rate at once. Fewer failures are logged and counted in the decision, nothing more.
- **Latency**, from the successful samples' median and 90th percentile. The check is *slow*
  when the median is above the baseline's threshold (`Baseline.slow_above_ms`), or when the
  room sets `slow_ms` and the 90th percentile is above it. A slow check holds the rate (no
  raise); the second slow check in a row halves it, and so does every further one.
- Otherwise the check is healthy: below the operator's rate the rate rises by
  ceil(RECOVERY_FRACTION of the gap); at the operator's rate nothing changes.

A halving never goes below max(1, ceil(MIN_RATE_FRACTION x the operator's rate)).

The baseline pools the successful samples of BASELINE_CHECKS healthy checks taken at the
operator's rate (not necessarily consecutive). While it is being taken only the error rule
and `slow_ms` can act. A check in which no sample succeeded, before any baseline, is not
judged: it says why no baseline can be taken (a wrong URL and a shop that is down look the
same, and the governor has never seen this shop healthy). After BASELINE_RENEW_CHECKS checks
the next healthy checks at the operator's rate pool a new baseline, which replaces the old
one when complete; a halving discards a half-taken pool. An operator change (config version
or operator rate differs from what the governor last saw) starts everything again.

Why these numbers (derived in docs/pipeline.md, measured by bench/governor_table.py):
latencies are close to lognormal, so the median of n samples has a standard error of about
sqrt(pi/2) x s / sqrt(n) in log terms, s being the spread of log latency. A check's median
minus the baseline's therefore jitters by MEDIAN_SE_FACTOR x s x sqrt(1/n + 1/pooled). The
threshold is MEDIAN_Z of those above the baseline median: a healthy check crosses it with
probability 0.13%, two in a row (a halving) about once a year of checks. It is never
closer than MIN_SLOWDOWN times, nor MIN_MARGIN_MS above, the baseline median: a change
smaller than that is one no visitor notices.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import statistics
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from beekeeper.core.datamodel import GOVERNOR_KEY, GOVERNOR_LOG_KEY
from beekeeper.core.settings import RoomSettings
from beekeeper.lambdas import runtime
from beekeeper.lambdas.governor_sampling import Fetcher, Sample, fetch_once, sample
from beekeeper.lambdas.room_state import (
    RoomConfig,
    key,
    number,
    read_config,
    read_number,
    set_effective_rate,
)

log = logging.getLogger("beekeeper.governor")

# -- the check --------------------------------------------------------------------------------
SAMPLES = 60  # per check: 60 requests a minute, one a second, is what the shop pays
SAMPLE_WINDOW_FRACTION = 0.5  # of the minute, over which the samples are spread
SAMPLE_TIMEOUT_SECONDS = 5.0
SAMPLE_TIMEOUT_FRACTION = 0.25  # of the minute, at most: a shortened local minute stays whole
ERROR_SHARE = 0.10  # failed share of a check that makes it degraded (6 of 60)
# -- latency ----------------------------------------------------------------------------------
BASELINE_CHECKS = 5  # healthy checks pooled into a baseline (300 samples)
BASELINE_RENEW_CHECKS = 60  # checks after which a new baseline is pooled (an hour)
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)  # standard error of a median, in units of s/sqrt(n)
MEDIAN_Z = 3.0  # standard errors above the baseline median where slow starts
MIN_SLOWDOWN = 1.25  # a median less than 25% above the baseline's is never slow...
MIN_MARGIN_MS = 25.0  # ...nor one less than 25 ms above it
SLOW_CHECKS_TO_HALVE = 2
LATENCY_FLOOR_MS = 0.1  # logs of latencies below this are taken at this (no log of 0)
# -- the rate ---------------------------------------------------------------------------------
MIN_RATE_FRACTION = 0.05
RECOVERY_FRACTION = 0.25
RECENT_DECISIONS = 10  # kept in the governor-log item for `beekeeper status`

# Decisions, as logged, recorded and shown by `beekeeper status`.
BASELINE = "baseline"  # a healthy check pooled toward the baseline, or the baseline taken
BASELINE_PENDING = "baseline-pending"  # no sample succeeded and there is no baseline yet
PASS = "pass"
RAISE = "raise"
HOLD = "hold"  # slow once: no raise
HALVE = "halve"
SUPERSEDED = "superseded"  # the operator changed the config meanwhile; their change stands


# -- statistics -------------------------------------------------------------------------------


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


# -- state and decisions ------------------------------------------------------------------------


@dataclass(frozen=True)
class GovernorState:
    state: str  # "baseline" (none yet), "passing", "throttled"
    config_version: int
    operator_rate: int
    baseline: Baseline | None = None
    checks_since_baseline: int = 0
    pool: tuple[tuple[float, ...], ...] = ()  # healthy checks' latencies toward a baseline
    slow_streak: int = 0  # slow checks in a row, this one included

    @classmethod
    def fresh(cls, config: RoomConfig) -> GovernorState:
        return cls("baseline", config.version, config.operator_rate)

    def to_item(self, now: float) -> dict[str, Any]:
        item: dict[str, Any] = {
            **key(GOVERNOR_KEY),
            "state": {"S": self.state},
            "config_version": number(self.config_version),
            "operator_rate": number(self.operator_rate),
            "checks_since_baseline": number(self.checks_since_baseline),
            "slow_streak": number(self.slow_streak),
            "updated_at": number(now),
        }
        if self.pool:
            item["pool"] = {"S": "|".join(" ".join(f"{ms:.1f}" for ms in c) for c in self.pool)}
        if self.baseline is not None:
            item["baseline_median_ms"] = _decimal(self.baseline.median_ms, 1)
            item["baseline_spread"] = _decimal(self.baseline.spread, 4)
            item["baseline_samples"] = number(self.baseline.samples)
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any] | None) -> GovernorState | None:
        if not item:
            return None
        baseline = None
        median = _read_float(item, "baseline_median_ms")
        if median is not None and read_number(item, "baseline_samples") > 0:
            baseline = Baseline(
                median,
                _read_float(item, "baseline_spread") or 0.0,
                read_number(item, "baseline_samples"),
            )
        pool_text = item.get("pool", {}).get("S", "")
        return cls(
            state=item.get("state", {}).get("S", "baseline"),
            config_version=read_number(item, "config_version", -1),
            operator_rate=read_number(item, "operator_rate", -1),
            baseline=baseline,
            checks_since_baseline=read_number(item, "checks_since_baseline"),
            pool=tuple(
                tuple(float(ms) for ms in check.split()) for check in pool_text.split("|") if check
            ),
            slow_streak=read_number(item, "slow_streak"),
        )


@dataclass(frozen=True)
class Decision:
    """What one check decided and why: logged, kept for `beekeeper status`, and the metrics."""

    at: float
    decision: str
    reason: str
    rate_before: int
    rate_after: int
    samples: int
    errors: int
    median_ms: float | None
    p90_ms: float | None
    mean_ms: float | None
    slow_above_ms: float | None  # the median above which the check was slow; None: no baseline

    def describe(self) -> str:
        """One line: the decision, the rate, the reason and the figures it was judged on."""
        rate = (
            f"{self.rate_before:,}"
            if self.rate_after == self.rate_before
            else f"{self.rate_before:,} -> {self.rate_after:,}"
        )
        figures = [f"errors {self.errors}/{self.samples}"]
        if self.median_ms is not None and self.p90_ms is not None:
            figures.append(f"median {_ms(self.median_ms)}")
            figures.append(f"p90 {_ms(self.p90_ms)}")
        if self.slow_above_ms is not None:
            figures.append(f"slow above {_ms(self.slow_above_ms)}")
        return f"{self.decision}, rate {rate}: {self.reason} ({', '.join(figures)})"

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "minute": int(self.at // 60)}

    def to_attribute(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "at": _decimal(self.at, 3),
            "decision": {"S": self.decision},
            "reason": {"S": self.reason},
            "rate_before": number(self.rate_before),
            "rate_after": number(self.rate_after),
            "samples": number(self.samples),
            "errors": number(self.errors),
        }
        for name in ("median_ms", "p90_ms", "mean_ms", "slow_above_ms"):
            value = getattr(self, name)
            if value is not None:
                fields[name] = _decimal(value, 1)
        return {"M": fields}

    @classmethod
    def from_attribute(cls, attribute: Mapping[str, Any]) -> Decision:
        fields = attribute.get("M", {})
        return cls(
            at=_read_float(fields, "at") or 0.0,
            decision=fields.get("decision", {}).get("S", "?"),
            reason=fields.get("reason", {}).get("S", ""),
            rate_before=read_number(fields, "rate_before"),
            rate_after=read_number(fields, "rate_after"),
            samples=read_number(fields, "samples"),
            errors=read_number(fields, "errors"),
            median_ms=_read_float(fields, "median_ms"),
            p90_ms=_read_float(fields, "p90_ms"),
            mean_ms=_read_float(fields, "mean_ms"),
            slow_above_ms=_read_float(fields, "slow_above_ms"),
        )


def recent_decisions(item: Mapping[str, Any] | None) -> list[Decision]:
    """The decisions kept in the governor-log item, oldest first."""
    if not item:
        return []
    return [Decision.from_attribute(a) for a in item.get("recent", {}).get("L", [])]


def log_item(decisions: Sequence[Decision]) -> dict[str, Any]:
    kept = decisions[-RECENT_DECISIONS:]
    return {**key(GOVERNOR_LOG_KEY), "recent": {"L": [d.to_attribute() for d in kept]}}


def rate_floor(operator_rate: int) -> int:
    return max(1, math.ceil(operator_rate * MIN_RATE_FRACTION))


def halved(rate: int, operator_rate: int) -> int:
    return max(rate_floor(operator_rate), rate // 2)


def raised(rate: int, operator_rate: int) -> int:
    gap = operator_rate - rate
    return min(operator_rate, rate + math.ceil(gap * RECOVERY_FRACTION))


def decide(
    config: RoomConfig,
    state: GovernorState | None,
    samples: Sequence[Sample],
    now: float,
    *,
    slow_ms: int = 0,
) -> tuple[Decision, GovernorState]:
    """The decision for one check and the governor's next state. Pure: tests and the bench
    drive it directly. `slow_ms` is the room's optional absolute limit for the p90 (0: none).
    """
    check = CheckStats.of(samples)
    if (
        state is None
        or state.config_version != config.version
        or state.operator_rate != config.operator_rate
    ):
        state, rate = GovernorState.fresh(config), config.operator_rate
    else:
        rate = config.rate
    operator_rate = config.operator_rate
    baseline = state.baseline
    ok = len(check.latencies)
    slow_above = baseline.slow_above_ms(ok) if baseline is not None and ok else None
    slow = _slow_reasons(check, slow_above, slow_ms)
    streak = state.slow_streak + 1 if slow else 0
    pool = state.pool

    if not ok and baseline is None:
        kind, new_rate = BASELINE_PENDING, rate
        reason = (
            f"no baseline can be taken: all {check.samples} samples failed "
            f"({check.describe_failures() or 'no samples'}); point health_check_url (or the "
            "origin) at a page that answers 2xx, redirects followed"
        )
    elif check.degraded:
        kind, new_rate, pool = HALVE, halved(rate, operator_rate), ()
        reason = (
            f"{check.errors} of {check.samples} samples failed (degraded at "
            f"{errors_to_degrade(check.samples)}): {check.describe_failures()}"
        )
    elif slow and streak >= SLOW_CHECKS_TO_HALVE:
        kind, new_rate, pool = HALVE, halved(rate, operator_rate), ()
        reason = f"slow {streak} checks in a row: " + "; ".join(slow)
    elif slow:
        kind, new_rate = HOLD, rate
        reason = "slow: " + "; ".join(slow) + "; the next slow check halves the rate"
    elif rate < operator_rate:
        kind, new_rate = RAISE, raised(rate, operator_rate)
        reason = f"healthy: up a quarter of the gap to {operator_rate:,}"
    else:
        kind, new_rate = PASS, rate
        reason = "healthy"
    if check.errors and kind in (PASS, RAISE, HOLD):
        reason += (
            f"; {check.errors} failed, below the {errors_to_degrade(check.samples)} that count"
        )

    since = state.checks_since_baseline + 1
    renewing = baseline is None or since >= BASELINE_RENEW_CHECKS
    if kind == PASS and renewing:
        pool = (*pool, tuple(round(ms, 1) for ms in check.latencies))  # as stored
        if len(pool) >= BASELINE_CHECKS:
            baseline, pool, since = Baseline.pooled(pool), (), 0
            kind = BASELINE
            reason = (
                f"baseline from {BASELINE_CHECKS} healthy checks ({baseline.samples} samples): "
                f"median {_ms(baseline.median_ms)}, slow above "
                f"{_ms(baseline.slow_above_ms(SAMPLES))}"
            )
        elif baseline is None:
            kind = BASELINE
            reason = f"taking a baseline: {len(pool)} of {BASELINE_CHECKS} healthy checks"

    if new_rate < operator_rate:
        name = "throttled"
    else:
        name = "baseline" if baseline is None else "passing"
    decision = Decision(
        at=round(now, 3),
        decision=kind,
        reason=reason,
        rate_before=config.rate,
        rate_after=new_rate,
        samples=check.samples,
        errors=check.errors,
        median_ms=_tenth(check.median_ms),
        p90_ms=_tenth(check.p90_ms),
        mean_ms=_tenth(check.mean_ms),
        slow_above_ms=_tenth(slow_above),
    )
    new_state = GovernorState(
        state=name,
        config_version=state.config_version,
        operator_rate=state.operator_rate,
        baseline=baseline,
        checks_since_baseline=since,
        pool=pool,
        slow_streak=streak,
    )
    return decision, new_state


def _slow_reasons(check: CheckStats, slow_above: float | None, slow_ms: int) -> list[str]:
    reasons = []
    if slow_above is not None and check.median_ms is not None and check.median_ms > slow_above:
        reasons.append("median over the baseline's limit")
    if slow_ms and check.p90_ms is not None and check.p90_ms > slow_ms:
        reasons.append(f"p90 over slow_ms {slow_ms:,} ms")
    return reasons


# -- one run ----------------------------------------------------------------------------------


def run_governor(
    *,
    settings: RoomSettings,
    table: str,
    dynamodb: Any,
    fetch: Fetcher,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    minute_seconds: float = 60.0,
) -> Decision:
    """Sample the shop, decide, write the rate (unless the operator changed it meanwhile)."""
    samples = sample(
        settings.sampled_url,
        fetch,
        count=SAMPLES,
        window=minute_seconds * SAMPLE_WINDOW_FRACTION,
        timeout=min(SAMPLE_TIMEOUT_SECONDS, minute_seconds * SAMPLE_TIMEOUT_FRACTION),
        sleep=sleep,
    )
    now = clock()
    config = read_config(dynamodb, table, settings)
    state = GovernorState.from_item(_get(dynamodb, table, GOVERNOR_KEY))
    decision, new_state = decide(config, state, samples, now, slow_ms=settings.slow_ms)
    if decision.rate_after != config.rate and not set_effective_rate(
        dynamodb, table, rate=decision.rate_after, expected_version=config.version, now=now
    ):
        log.info("governor: the operator changed the config meanwhile; their rate stands")
        return dataclasses.replace(decision, decision=SUPERSEDED, rate_after=config.rate)
    dynamodb.put_item(TableName=table, Item=new_state.to_item(now))
    recent = recent_decisions(_get(dynamodb, table, GOVERNOR_LOG_KEY))
    dynamodb.put_item(TableName=table, Item=log_item([*recent, decision]))
    level = logging.INFO if decision.decision in (PASS, RAISE, BASELINE) else logging.WARNING
    log.log(level, "governor: %s", decision.describe())
    return decision


def _get(dynamodb: Any, table: str, pk: str) -> Mapping[str, Any] | None:
    response = dynamodb.get_item(TableName=table, Key=key(pk), ConsistentRead=True)
    item: Mapping[str, Any] | None = response.get("Item")
    return item


def _decimal(value: float, places: int) -> dict[str, str]:
    return {"N": f"{value:.{places}f}"}


def _read_float(item: Mapping[str, Any], name: str) -> float | None:
    try:
        return float(item[name]["N"])
    except (KeyError, TypeError, ValueError):
        return None


def _tenth(value: float | None) -> float | None:
    """Rounded to 0.1 ms, as the governor-log item stores it."""
    return None if value is None else round(value, 1)


def _ms(value: float) -> str:
    return f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms"


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    settings = runtime.settings()
    if not settings.dynamic_rate_throttling:
        return {"decision": "disabled"}
    decision = run_governor(
        settings=settings,
        table=runtime.env("TABLE_NAME"),
        dynamodb=runtime.client("dynamodb"),
        fetch=fetch_once,
        clock=time.time,
        sleep=time.sleep,
    )
    return {"decision": decision.decision, "median_ms": decision.median_ms}
