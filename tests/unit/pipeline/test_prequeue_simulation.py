"""A scheduled event in the simulator: the draw is fair (a statistical test that arrival order or
its reverse would fail), the drawn pre-queue goes in before later arrivals at exactly the rate,
and nobody is lost, with every fault switched on; at the issue's size too, 100,000 pre-queued
at 30,000/min (bench/prequeue_draw.py times it and adds fairness over more seeds)."""

from __future__ import annotations

import math
import random

import pytest

from beekeeper.simulator.faults import Faults
from beekeeper.simulator.prequeue import inversions, kendall_tau, prequeue_figures
from beekeeper.simulator.run import Arrival, Crowd, simulate, simulated_room

# Its tests keep a worker minutes: the file starts first (tests/conftest.py).
pytestmark = pytest.mark.minutes(1.7)


def tau_z(tau: float, n: int) -> float:
    """tau in standard deviations of Kendall's tau for a uniformly random order of n."""
    return tau / math.sqrt(2 * (2 * n + 5) / (9 * n * (n - 1)))


def fair(tau: float | None, n: int) -> bool:
    """The issue's bar (|tau| <= 0.05) and, tighter, within 4 standard deviations of 0."""
    return tau is not None and abs(tau) <= 0.05 and abs(tau_z(tau, n)) < 4


def test_the_fairness_check_fails_for_arrival_order_and_its_reverse() -> None:
    n = 5000
    assert not fair(kendall_tau(list(range(n))), n)
    assert not fair(kendall_tau(list(range(n))[::-1]), n)
    # Nor for an order that merely leans on arrival: each visitor moved up to 500 places.
    rng = random.Random(3)
    leaning = sorted(range(n), key=lambda i: i + rng.uniform(0, 500))
    assert not fair(kendall_tau(leaning), n)
    shuffled = list(range(n))
    rng.shuffle(shuffled)
    assert fair(kendall_tau(shuffled), n)


def test_inversions_count_as_a_direct_count_does() -> None:
    rng = random.Random(5)
    for size in (0, 1, 2, 7, 50):
        values = [rng.randrange(20) for _ in range(size)]
        direct = sum(1 for i in range(size) for j in range(i + 1, size) if values[i] > values[j])
        assert inversions(values) == direct


def test_figures_count_pre_queue_visitors_admitted_after_a_later_one() -> None:
    prequeue = [True, True, True, False, False]
    assert prequeue_figures(prequeue, [2, 0, 1, 3, 4]).exceptions == 0
    late = prequeue_figures(prequeue, [2, 3, 0, 1, 4])
    assert (late.before_later, late.exceptions, late.visitors) == (False, 2, 3)


@pytest.mark.parametrize("seed", [1, 2])
def test_five_thousand_pre_queued_visitors_are_drawn_fairly(seed: int) -> None:
    result = simulate(
        simulated_room(rate=5000, join_work=0),
        Crowd(
            visitors=5000,
            arrival=Arrival.parse("uniform:1"),
            minutes=3,
            seed=seed,
            starts_at_minute=1,
        ),
    )
    assert result.prequeue_visitors == 5000
    assert fair(result.prequeue_order_tau, 5000), result.prequeue_order_tau
    assert result.admitted_per_minute == [0, 5000, 0]
    assert result.lost == 0 and result.admitted_twice == 0 and result.still_waiting == 0


def test_the_pre_queue_goes_before_later_arrivals_at_the_rate_with_every_fault() -> None:
    result = simulate(
        simulated_room(rate=1000, join_work=0),
        Crowd(
            visitors=5000,
            arrival=Arrival.parse("uniform:6"),
            minutes=10,
            faults=Faults.parse("crash,throttle,duplicates,double-trigger"),
            seed=7,
            starts_at_minute=3,
        ),
    )
    assert result.prequeue_visitors == 2500
    assert result.faults_injected["crash"] > 0 and result.faults_injected["throttle"] > 0
    assert result.prequeue_exceptions <= 0.001 * result.prequeue_visitors
    assert result.admitted_per_minute[:3] == [0, 0, 0]  # nobody before the start
    assert result.exact  # exactly the rate in every full minute after it
    assert result.lost == 0 and result.admitted_twice == 0 and result.still_waiting == 0


@pytest.mark.slow
def test_twenty_thousand_pre_queued_at_six_thousand_a_minute_exactly() -> None:
    result = simulate(
        simulated_room(rate=6000, join_work=0),
        Crowd(
            visitors=20_000,
            arrival=Arrival.parse("uniform:1"),
            minutes=5,
            seed=11,
            starts_at_minute=1,
        ),
    )
    assert result.admitted_per_minute == [0, 6000, 6000, 6000, 2000]
    assert result.exact and result.max_window_excess <= 0
    assert result.lost == 0 and result.admitted_twice == 0 and result.still_waiting == 0
    assert fair(result.prequeue_order_tau, 20_000)


@pytest.mark.slow
def test_a_hundred_thousand_pre_queued_at_thirty_thousand_a_minute_exactly() -> None:
    """The issue's size: 100,000 drawn at the start, admitted at exactly the rate, nobody lost."""
    result = simulate(
        simulated_room(rate=30_000, join_work=0),
        Crowd(
            visitors=100_000,
            arrival=Arrival.parse("uniform:1"),
            minutes=6,
            seed=5,
            starts_at_minute=1,
        ),
    )
    assert result.prequeue_visitors == 100_000
    assert result.admitted_per_minute == [0, 30_000, 30_000, 30_000, 10_000, 0]
    assert result.exact and result.max_window_excess <= 0
    assert result.lost == 0 and result.admitted_twice == 0 and result.still_waiting == 0
    assert fair(result.prequeue_order_tau, 100_000)
