"""The governor's decisions, statistics, stored state and sampling, without AWS or HTTP."""

from __future__ import annotations

import dataclasses
import math
import threading
from statistics import NormalDist

import pytest

from beekeeper.core.settings import MAX_SLOW_MS
from beekeeper.room.governor import (
    BASELINE,
    BASELINE_CHECKS,
    BASELINE_PENDING,
    BASELINE_RENEW_CHECKS,
    HALVE,
    HOLD,
    PASS,
    RAISE,
    SAMPLE_TIMEOUT_SECONDS,
    SAMPLES,
    decide,
    rate_floor,
)
from beekeeper.room.governor_records import (
    RECENT_DECISIONS,
    Decision,
    GovernorState,
    log_item,
    recent_decisions,
)
from beekeeper.room.governor_sampling import TIMEOUT, Sample, sample
from beekeeper.room.governor_stats import (
    Baseline,
    CheckStats,
    errors_to_degrade,
    log_spread,
    percentile,
)
from beekeeper.room.room_state import RoomConfig


def latencies(median: float, sigma: float = 0.3, n: int = SAMPLES) -> list[float]:
    """n lognormal latencies at evenly spaced quantiles: a typical check, without randomness."""
    normal = NormalDist()
    return [median * math.exp(sigma * normal.inv_cdf((i + 0.5) / n)) for i in range(n)]


def check(median: float = 100.0, *, failed: int = 0, sigma: float = 0.3) -> list[Sample]:
    """A check whose every (SAMPLES // failed)-th sample failed with a 502."""
    step = SAMPLES // failed if failed else 0
    return [
        Sample(ok=False, ms=ms, failure="HTTP 502")
        if step and i % step == 0 and i // step < failed
        else Sample(ok=True, ms=ms)
        for i, ms in enumerate(latencies(median, sigma))
    ]


class Room:
    """A room at `rate` and its governor, one check a minute, as run_governor applies them."""

    def __init__(self, rate: int = 1000, *, slow_ms: int = 0) -> None:
        self.config = RoomConfig(True, rate, rate, 3, 0)
        self.state: GovernorState | None = None
        self.slow_ms = slow_ms
        self.now = 1_000_000.0

    def check(self, samples: list[Sample]) -> Decision:
        decision, state = decide(self.config, self.state, samples, self.now, slow_ms=self.slow_ms)
        self.state = GovernorState.from_item(state.to_item(self.now))
        assert self.state == state  # what is stored is what was decided
        self.config = dataclasses.replace(self.config, rate=decision.rate_after)
        self.now += 60
        return decision

    def with_baseline(self, median: float = 100.0) -> Room:
        for _ in range(BASELINE_CHECKS):
            self.check(check(median))
        assert self.state is not None and self.state.baseline is not None
        return self

    @property
    def rate(self) -> int:
        return self.config.rate


# -- statistics ------------------------------------------------------------------------------


def test_percentile_is_nearest_rank() -> None:
    ordered = list(range(1, 61))
    assert percentile(ordered, 0.9) == 54
    assert percentile(ordered, 0.5) == 30
    assert percentile([7.0], 0.9) == 7.0


@pytest.mark.parametrize("sigma", [0.3, 0.6])
def test_log_spread_recovers_a_lognormal_sigma(sigma: float) -> None:
    assert log_spread(sorted(latencies(100.0, sigma, n=300))) == pytest.approx(sigma, rel=0.02)


def test_log_spread_ignores_a_few_wild_outliers() -> None:
    values = latencies(100.0, 0.3, n=300)
    values[-5:] = [30_000.0] * 5
    assert log_spread(sorted(values)) == pytest.approx(0.3, rel=0.05)


@pytest.mark.parametrize(("samples", "degraded_at"), [(60, 6), (20, 2), (80, 8), (1, 1)])
def test_a_tenth_of_the_samples_failing_is_degraded(samples: int, degraded_at: int) -> None:
    assert errors_to_degrade(samples) == degraded_at


def test_check_stats_judge_latency_on_the_successful_samples_only() -> None:
    samples = [Sample(True, ms) for ms in (10.0, 20.0, 30.0)] + [Sample(False, 5000.0, TIMEOUT)]
    stats = CheckStats.of(samples)
    assert (stats.samples, stats.errors, stats.median_ms, stats.p90_ms) == (4, 1, 20.0, 30.0)
    assert stats.describe_failures() == "timeout x1"
    assert stats.degraded  # 1 of 4 is more than a tenth


def test_the_slow_threshold_is_three_standard_errors_of_the_median_difference() -> None:
    baseline = Baseline(median_ms=100.0, spread=0.6, samples=300)
    jitter = math.sqrt(math.pi / 2) * 0.6 * math.sqrt(1 / 60 + 1 / 300)
    assert baseline.slow_above_ms(60) == pytest.approx(100 * math.exp(3 * jitter))
    assert 137 < baseline.slow_above_ms(60) < 138


def test_the_slow_threshold_never_comes_closer_than_25_percent_or_25_ms() -> None:
    assert Baseline(100.0, 0.0, 300).slow_above_ms(60) == pytest.approx(125.0)
    assert Baseline(13.0, 0.05, 300).slow_above_ms(60) == pytest.approx(38.0)  # loopback


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("failed", [1, 2, 5])
def test_fewer_than_a_tenth_failing_is_logged_but_does_not_halve(failed: int) -> None:
    room = Room().with_baseline()
    decision = room.check(check(failed=failed))
    assert (decision.decision, room.rate, decision.errors) == (PASS, 1000, failed)
    assert f"{failed} failed, below the 6 that count" in decision.reason


def test_a_tenth_failing_halves_at_once() -> None:
    room = Room().with_baseline()
    decision = room.check(check(failed=6))
    assert (decision.decision, decision.rate_after) == (HALVE, 500)
    assert decision.reason == "6 of 60 samples failed (degraded at 6): HTTP 502 x6"


def test_errors_halve_before_any_baseline_is_taken() -> None:
    room = Room()
    assert room.check(check(failed=12)).decision == HALVE
    assert room.rate == 500


def test_a_shop_failing_every_sample_before_a_baseline_is_named_not_throttled() -> None:
    room = Room()
    failing = [Sample(False, 3.0, "HTTP 404") for _ in range(SAMPLES)]
    for _ in range(3):
        decision = room.check(failing)
        assert (decision.decision, room.rate) == (BASELINE_PENDING, 1000)
    assert decision.reason.startswith("no baseline can be taken: all 60 samples failed")
    assert "(HTTP 404 x60)" in decision.reason and "health_check_url" in decision.reason
    assert room.state is not None and room.state.state == "baseline"
    # Once the page answers, the baseline is taken as usual.
    assert room.check(check()).reason == f"taking a baseline: 1 of {BASELINE_CHECKS} healthy checks"


def test_a_shop_failing_every_sample_after_its_baseline_halves() -> None:
    room = Room().with_baseline()
    assert room.check([Sample(False, 5000.0, TIMEOUT)] * SAMPLES).decision == HALVE


# -- latency ---------------------------------------------------------------------------------


def test_the_baseline_pools_five_healthy_checks() -> None:
    room = Room()
    for n in range(1, BASELINE_CHECKS):
        decision = room.check(check(100.0 + n))
        assert decision.decision == BASELINE and decision.slow_above_ms is None
        assert decision.reason == f"taking a baseline: {n} of {BASELINE_CHECKS} healthy checks"
    decision = room.check(check(105.0))
    assert decision.decision == BASELINE and decision.reason.startswith(
        "baseline from 5 healthy checks (300 samples): median 10"
    )
    assert room.state is not None and room.state.baseline is not None
    assert room.state.baseline.samples == 300 and room.state.state == "passing"
    assert room.state.baseline.median_ms == pytest.approx(103, abs=1)
    assert room.state.baseline.spread == pytest.approx(0.3, rel=0.05)
    assert room.rate == 1000


def test_one_slow_check_holds_the_second_halves_and_so_does_every_further_one() -> None:
    room = Room().with_baseline()
    hold = room.check(check(200.0))
    assert (hold.decision, room.rate) == (HOLD, 1000)
    assert hold.slow_above_ms is not None and 125 <= hold.slow_above_ms < 130
    assert hold.reason.startswith("slow: median over the baseline's limit; ")
    assert hold.reason.endswith("the next slow check halves the rate")
    second = room.check(check(200.0))
    assert (second.decision, room.rate) == (HALVE, 500)
    assert second.reason == "slow 2 checks in a row: median over the baseline's limit"
    assert room.check(check(200.0)).decision == HALVE and room.rate == 250


def test_a_slow_check_holds_a_throttled_rate_instead_of_raising() -> None:
    room = Room().with_baseline()
    room.check(check(failed=6))
    assert room.rate == 500
    assert room.check(check(200.0)).decision == HOLD and room.rate == 500
    assert room.check(check(100.0)).decision == RAISE and room.rate == 625


def test_slow_checks_that_are_not_consecutive_never_halve() -> None:
    room = Room().with_baseline()
    for _ in range(5):
        assert room.check(check(200.0)).decision == HOLD
        assert room.check(check(100.0)).decision == PASS
    assert room.rate == 1000


def test_a_median_within_the_jitter_is_not_slow() -> None:
    room = Room().with_baseline()
    assert room.check(check(120.0)).decision == PASS  # threshold ~126 ms at sigma 0.3


def test_slow_ms_judges_the_p90_even_without_a_baseline() -> None:
    room = Room(slow_ms=150)
    first = room.check(check(100.0))  # p90 of sigma 0.3 at 100 ms: ~147 ms
    assert first.decision == BASELINE
    slow = room.check(check(120.0))
    assert slow.decision == HOLD and slow.reason.startswith("slow: p90 over slow_ms 150 ms; ")
    assert slow.p90_ms is not None and slow.p90_ms > 150
    assert room.check(check(120.0)).decision == HALVE and room.rate == 500


def test_slow_checks_are_never_pooled_into_the_baseline() -> None:
    room = Room(slow_ms=150)
    room.check(check(100.0))
    room.check(check(120.0))  # slow by slow_ms: not pooled
    assert room.state is not None and len(room.state.pool) == 1


# -- recovery and the floor -------------------------------------------------------------------


def test_healthy_checks_recover_a_quarter_of_the_gap_each() -> None:
    room = Room().with_baseline()
    room.check(check(failed=6))
    room.check(check(failed=6))
    assert room.rate == 250
    rates = []
    while room.rate < 1000:
        assert room.check(check()).decision == RAISE
        rates.append(room.rate)
    assert rates[:4] == [438, 579, 685, 764]  # 250 + ceil(750 / 4), ...
    for before, after in zip([250, *rates], rates, strict=False):
        assert after == before + math.ceil((1000 - before) / 4)
    assert len(rates) == 21


def test_halving_stops_at_5_percent_of_the_operator_rate() -> None:
    room = Room().with_baseline()
    for _ in range(10):
        room.check(check(failed=30))
    assert room.rate == 50 == rate_floor(1000)
    assert rate_floor(10) == 1


def test_an_operator_change_starts_the_governor_again() -> None:
    room = Room().with_baseline()
    room.check(check(failed=6))
    room.config = RoomConfig(True, 2000, 2000, 4, 0)
    decision = room.check(check())
    assert (decision.decision, room.rate) == (BASELINE, 2000)
    assert room.state is not None and room.state.baseline is None
    assert (room.state.config_version, room.state.operator_rate) == (4, 2000)


def test_only_checks_at_the_operators_rate_are_pooled() -> None:
    room = Room()
    room.check(check(failed=6))  # halved before any baseline
    assert room.check(check()).decision == RAISE
    assert room.state is not None and room.state.pool == ()


def test_after_an_hour_a_new_baseline_is_pooled_while_the_old_one_still_judges() -> None:
    room = Room().with_baseline(100.0)
    for _ in range(BASELINE_RENEW_CHECKS - 1):
        assert room.check(check(100.0)).decision == PASS
    for _ in range(BASELINE_CHECKS - 1):
        assert room.check(check(115.0)).decision == PASS  # pooled, judged on the old baseline
    assert room.state is not None and len(room.state.pool) == BASELINE_CHECKS - 1
    decision = room.check(check(115.0))
    assert decision.decision == BASELINE
    assert room.state.baseline is not None
    assert room.state.baseline.median_ms == pytest.approx(115, abs=1)


def test_a_halving_discards_a_half_taken_baseline() -> None:
    room = Room().with_baseline()
    for _ in range(BASELINE_RENEW_CHECKS + 1):
        room.check(check())
    assert room.state is not None and len(room.state.pool) == 2
    room.check(check(failed=6))
    assert room.state.pool == ()


# -- stored state and decisions ----------------------------------------------------------------


def test_an_item_without_the_baseline_fields_reads_as_no_baseline() -> None:
    item = {"pk": {"S": "governor"}, "state": {"S": "passing"}, "baseline_mean_ms": {"N": "100"}}
    state = GovernorState.from_item(item)
    assert state is not None and state.baseline is None and state.pool == ()
    assert GovernorState.from_item(None) is None


def test_decisions_round_trip_and_the_log_keeps_the_last_ten() -> None:
    room = Room().with_baseline()
    decisions = [room.check(check(failed=n % 8)) for n in range(RECENT_DECISIONS + 3)]
    kept = recent_decisions(log_item(decisions))
    assert len(kept) == RECENT_DECISIONS
    for stored, original in zip(kept, decisions[-RECENT_DECISIONS:], strict=True):
        assert stored == original
    assert recent_decisions(None) == []


def test_a_decision_reads_as_one_line_with_its_figures() -> None:
    room = Room().with_baseline()
    decision = room.check(check(200.0, failed=1))
    assert decision.describe() == (
        "hold, rate 1,000: slow: median over the baseline's limit; the next slow check halves "
        "the rate; 1 failed, below the 6 that count (errors 1/60, median 201 ms, p90 298 ms, "
        "slow above 125 ms)"
    )
    assert decision.to_json()["minute"] == int(decision.at // 60)


def test_slow_ms_must_stay_below_the_sample_timeout() -> None:
    assert SAMPLE_TIMEOUT_SECONDS * 1000 > MAX_SLOW_MS


# -- sampling ----------------------------------------------------------------------------------


def test_samples_are_spread_evenly_over_the_window() -> None:
    slept: list[float] = []
    calls: list[tuple[str, float]] = []

    def fetch(url: str, timeout: float) -> Sample:
        calls.append((url, timeout))
        return Sample(True, 12.0)

    got = sample(
        "https://shop.example/", fetch, count=5, window=2.0, timeout=0.5, sleep=slept.append
    )
    assert slept == [0.4] * 4
    assert calls == [("https://shop.example/", 0.5)] * 5
    assert got == [Sample(True, 12.0)] * 5


def test_a_fetch_that_raises_or_never_returns_is_a_failed_sample() -> None:
    release = threading.Event()
    calls = iter(range(3))

    def fetch(url: str, timeout: float) -> Sample:
        n = next(calls)
        if n == 0:
            raise ConnectionResetError
        if n == 1:
            release.wait(5)
        return Sample(True, 1.0)

    try:
        got = sample(
            "https://shop.example/", fetch, count=3, window=0.0, timeout=0.05, sleep=lambda s: None
        )
    finally:
        release.set()
    assert got == [
        Sample(False, 50.0, "connection reset"),
        Sample(False, 50.0, TIMEOUT),
        Sample(True, 1.0),
    ]
