"""Dynamic rate throttling: slow admissions down while the origin is struggling.

Every minute: sample the origin SAMPLES times at once, each with a timeout. A non-2xx answer or
a timeout makes the check degraded. The first clean check after a (re)start is the baseline:
mean and sample standard deviation, the deviation floored (STD_FLOOR_*) so a near-constant
baseline does not turn every jitter into a failure. Later checks fail when degraded or when
their mean exceeds baseline mean + 3 deviations: the rate is halved, never below
max(1, 5% of the operator's rate). A passing check while below the operator's rate raises it by
ceil(25% of the gap). An operator change (config version or operator_rate differs from what
the governor last saw) resets it to the new rate and a new baseline. A baseline older than
BASELINE_MAX_AGE_SECONDS is measured again at the next check that passes at full rate.
"""

from __future__ import annotations

import logging
import math
import statistics
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from beekeeper.core import telemetry
from beekeeper.core.datamodel import (
    BOOKKEEPING_TTL_SECONDS,
    GOVERNOR_KEY,
    governor_decision_key,
)
from beekeeper.core.settings import RoomSettings
from beekeeper.lambdas import runtime
from beekeeper.lambdas.emf import DISCARD, MetricSink
from beekeeper.lambdas.room_state import (
    RoomConfig,
    key,
    number,
    read_config,
    read_number,
    set_effective_rate,
)

log = logging.getLogger("beekeeper.governor")

SAMPLES = 20
SAMPLE_TIMEOUT_SECONDS = 5.0
STD_FLOOR_MS = 5.0
STD_FLOOR_FRACTION = 0.1  # of the baseline mean
BASELINE_MAX_AGE_SECONDS = 3600
MIN_RATE_FRACTION = 0.05
RECOVERY_FRACTION = 0.25


@dataclass(frozen=True)
class Sample:
    ok: bool
    ms: float


Fetcher = Callable[[str, float], Sample]


def fetch_once(url: str, timeout: float) -> Sample:
    """One GET of the origin; any non-2xx answer, error or timeout is not ok."""
    started = time.monotonic()
    request = urllib.request.Request(url, headers={"User-Agent": "beekeeper-governor"})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - https origin
            response.read(1)
            ok = 200 <= response.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        ok = False
    return Sample(ok=ok, ms=(time.monotonic() - started) * 1000)


def sample(
    url: str, fetch: Fetcher, *, count: int = SAMPLES, timeout: float = SAMPLE_TIMEOUT_SECONDS
) -> list[Sample]:
    """`count` concurrent samples; one that overruns the timeout counts as degraded."""
    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(fetch, url, timeout) for _ in range(count)]
        results = []
        for future in futures:
            try:
                results.append(future.result(timeout=timeout + 1))
            except Exception:
                results.append(Sample(ok=False, ms=timeout * 1000))
    return results


@dataclass(frozen=True)
class GovernorState:
    state: str  # "baseline" (none yet), "passing", "throttled"
    baseline_mean_ms: float
    baseline_std_ms: float
    baseline_at: int
    config_version: int
    operator_rate: int

    @classmethod
    def from_item(cls, item: Any) -> GovernorState | None:
        if not item:
            return None
        return cls(
            state=item.get("state", {}).get("S", "baseline"),
            baseline_mean_ms=read_number(item, "baseline_mean_ms"),
            baseline_std_ms=read_number(item, "baseline_std_ms"),
            baseline_at=read_number(item, "baseline_at"),
            config_version=read_number(item, "config_version", -1),
            operator_rate=read_number(item, "operator_rate", -1),
        )


def rate_floor(operator_rate: int) -> int:
    return max(1, math.ceil(operator_rate * MIN_RATE_FRACTION))


def decide(
    config: RoomConfig,
    state: GovernorState | None,
    samples: list[Sample],
    now: float,
) -> tuple[str, int, GovernorState]:
    """(decision, new rate, new state) for one check. Pure: the tests drive it directly."""
    degraded = sum(1 for s in samples if not s.ok)
    good = [s.ms for s in samples if s.ok]
    reset = (
        state is None
        or state.config_version != config.version
        or state.operator_rate != config.operator_rate
    )
    stale = (
        state is not None
        and config.rate >= config.operator_rate
        and now - state.baseline_at > BASELINE_MAX_AGE_SECONDS
    )
    if reset or stale or (state is not None and state.state == "baseline"):
        rate = config.operator_rate if reset else config.rate
        if degraded or len(good) < 2:
            # No clean baseline can be taken from a struggling origin: wait for one.
            empty = GovernorState("baseline", 0, 0, 0, config.version, config.operator_rate)
            return "baseline-pending", rate, empty
        mean = statistics.fmean(good)
        std = max(statistics.stdev(good), STD_FLOOR_MS, mean * STD_FLOOR_FRACTION)
        fresh = GovernorState("passing", mean, std, int(now), config.version, config.operator_rate)
        return "baseline", rate, fresh
    assert state is not None
    mean = statistics.fmean(good) if good else math.inf
    failed = degraded > 0 or mean > state.baseline_mean_ms + 3 * state.baseline_std_ms
    if failed:
        rate = max(rate_floor(config.operator_rate), config.rate // 2)
        return "halve", rate, _with_state(state, "throttled")
    if config.rate < config.operator_rate:
        gap = config.operator_rate - config.rate
        rate = min(config.operator_rate, config.rate + math.ceil(gap * RECOVERY_FRACTION))
        return (
            "raise",
            rate,
            _with_state(state, "passing" if rate >= config.operator_rate else "throttled"),
        )
    return "pass", config.rate, _with_state(state, "passing")


def _with_state(state: GovernorState, name: str) -> GovernorState:
    return GovernorState(
        name,
        state.baseline_mean_ms,
        state.baseline_std_ms,
        state.baseline_at,
        state.config_version,
        state.operator_rate,
    )


def run_governor(
    *,
    settings: RoomSettings,
    table: str,
    dynamodb: Any,
    fetch: Fetcher,
    clock: Callable[[], float],
    metrics: MetricSink = DISCARD,
) -> str:
    now = clock()
    config = read_config(dynamodb, table, settings)
    item = dynamodb.get_item(TableName=table, Key=key(GOVERNOR_KEY), ConsistentRead=True).get(
        "Item"
    )
    state = GovernorState.from_item(item)
    samples = sample(settings.sampled_url, fetch)
    decision, rate, new_state = decide(config, state, samples, now)
    if rate != config.rate and not set_effective_rate(
        dynamodb, table, rate=rate, expected_version=config.version, now=now
    ):
        log.info("the operator changed the config meanwhile; their rate stands")
        return "superseded"
    good = [s.ms for s in samples if s.ok]
    dynamodb.put_item(
        TableName=table,
        Item={
            **key(GOVERNOR_KEY),
            "state": {"S": new_state.state},
            "baseline_mean_ms": number(round(new_state.baseline_mean_ms)),
            "baseline_std_ms": number(math.ceil(new_state.baseline_std_ms)),
            "baseline_at": number(new_state.baseline_at),
            "config_version": number(new_state.config_version),
            "operator_rate": number(new_state.operator_rate),
            "updated_at": number(now),
        },
    )
    minute = int(now // 60)
    dynamodb.put_item(
        TableName=table,
        Item={
            **key(governor_decision_key(minute)),
            "decision": {"S": decision},
            "mean_ms": number(round(statistics.fmean(good)) if good else 0),
            "degraded": number(sum(1 for s in samples if not s.ok)),
            "rate_before": number(config.rate),
            "rate_after": number(rate),
            "ttl": number(now + BOOKKEEPING_TTL_SECONDS),
        },
    )
    log.info("minute %s: governor %s, rate %s -> %s", minute, decision, config.rate, rate)
    if decision in telemetry.GOVERNOR_DECISIONS:
        metrics.count(telemetry.GOVERNOR_DECISIONS[decision])
    return decision


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
        metrics=runtime.metrics(),
    )
    runtime.metrics().flush()
    return {"decision": decision}
