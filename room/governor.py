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

The statistics and the latency limit's derivation are in `governor_stats`, the stored state
and decisions in `governor_records`, the HTTP samples in `governor_sampling`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from beekeeper.core import telemetry
from beekeeper.core.datamodel import GOVERNOR_KEY, GOVERNOR_LOG_KEY
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import RoomSettings
from beekeeper.room.emf import DISCARD, MetricSink
from beekeeper.room.governor_records import (
    Decision,
    GovernorState,
    log_item,
    ms_text,
    recent_decisions,
    tenth,
)
from beekeeper.room.governor_sampling import Fetcher, Sample, sample
from beekeeper.room.governor_stats import Baseline, CheckStats, errors_to_degrade
from beekeeper.room.push import StatePush
from beekeeper.room.room_state import (
    RoomConfig,
    key,
    read_config,
    refresh_status,
    set_effective_rate,
)

log = logging.getLogger("beekeeper.governor")

# -- the check --------------------------------------------------------------------------------
SAMPLES = 60  # per check: 60 requests a minute, one a second, is what the shop pays
SAMPLE_WINDOW_FRACTION = 0.5  # of the minute, over which the samples are spread
SAMPLE_TIMEOUT_SECONDS = 5.0
SAMPLE_TIMEOUT_FRACTION = 0.25  # of the minute, at most: a shortened local minute stays whole
# -- latency (the limit itself: governor_stats) -------------------------------------------------
BASELINE_CHECKS = 5  # healthy checks pooled into a baseline (300 samples)
BASELINE_RENEW_CHECKS = 60  # checks after which a new baseline is pooled (an hour)
SLOW_CHECKS_TO_HALVE = 2
# -- the rate ---------------------------------------------------------------------------------
MIN_RATE_FRACTION = 0.05
RECOVERY_FRACTION = 0.25

# Decisions, as logged, recorded and shown by `beekeeper status`.
BASELINE = "baseline"  # a healthy check pooled toward the baseline, or the baseline taken
BASELINE_PENDING = "baseline-pending"  # no sample succeeded and there is no baseline yet
PASS = "pass"
RAISE = "raise"
HOLD = "hold"  # slow once: no raise
HALVE = "halve"
SUPERSEDED = "superseded"  # the operator changed the config meanwhile; their change stands


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
                f"median {ms_text(baseline.median_ms)}, slow above "
                f"{ms_text(baseline.slow_above_ms(SAMPLES))}"
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
        median_ms=tenth(check.median_ms),
        p90_ms=tenth(check.p90_ms),
        mean_ms=tenth(check.mean_ms),
        slow_above_ms=tenth(slow_above),
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
    pauses: Pauses,
    minute_seconds: float = 60.0,
    metrics: MetricSink = DISCARD,
    push: StatePush | None = None,
) -> Decision:
    """Sample the shop, decide, write the rate (unless the operator changed it meanwhile);
    a new rate is published to waiting pages on the room's channel, `push` (room/push.py)."""
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
    if decision.rate_after != config.rate:
        # The waiting pages learn the new rate from the shared state within seconds, not at
        # the next periodic publish (docs/pipeline.md, "The shared state").
        try:
            refresh_status(
                dynamodb,
                table,
                settings,
                now=now,
                pauses=pauses,
                minute_seconds=minute_seconds,
                push=push,
            )
        except Exception:
            log.exception("governor: the new rate is set; the status copies follow within a minute")
    dynamodb.put_item(TableName=table, Item=new_state.to_item(now))
    recent = recent_decisions(_get(dynamodb, table, GOVERNOR_LOG_KEY))
    dynamodb.put_item(TableName=table, Item=log_item([*recent, decision]))
    # The minute is a field of the JSON log line (Lambda's JSON format adds extra fields).
    minute = {"minute": int(now // minute_seconds)}
    if decision.decision == BASELINE_PENDING:
        log.warning("governor of %s: %s", settings.sampled_url, decision.describe(), extra=minute)
    else:
        level = logging.INFO if decision.decision in (PASS, RAISE, BASELINE) else logging.WARNING
        log.log(level, "governor: %s", decision.describe(), extra=minute)
    record_check(metrics, decision)
    return decision


def record_check(metrics: MetricSink, decision: Decision) -> None:
    """A check's decision and latency as the room's metrics (core/telemetry.py)."""
    counted = telemetry.GOVERNOR_DECISIONS.get(decision.decision)
    if counted is not None:
        metrics.count(counted)
    if decision.median_ms is not None:
        metrics.level(telemetry.GOVERNOR_MEDIAN_MS, decision.median_ms)
    if decision.p90_ms is not None:
        metrics.level(telemetry.GOVERNOR_P90_MS, decision.p90_ms)


def _get(dynamodb: Any, table: str, pk: str) -> Mapping[str, Any] | None:
    response = dynamodb.get_item(TableName=table, Key=key(pk), ConsistentRead=True)
    item: Mapping[str, Any] | None = response.get("Item")
    return item
