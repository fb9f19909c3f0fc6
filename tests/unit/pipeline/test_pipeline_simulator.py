"""The real trigger and consumers in simulated minutes, with and without faults.

Every case asserts what the room promises: each full minute admits exactly min(rate, backlog
when the minute was claimed), nobody is lost or admitted twice, no second exceeds 1.25 x the
minute's mean plus one receive batch, and the fewest consumers are used. A fault that is
switched on must also have struck, or the case would prove nothing.
"""

from __future__ import annotations

import math

import pytest

from beekeeper.simulator.faults import FAULT_NAMES, Faults
from beekeeper.simulator.run import Arrival, SimulationResult, simulate

SMALL_RATES = (1, 7, 25, 600, 3300, 12345)
ALL_FAULTS = ",".join(FAULT_NAMES)


def check(result: SimulationResult, *, full_first_minute: bool = True) -> None:
    assert result.admitted_per_minute == result.expected_per_minute
    assert all(
        e == min(result.rate, b)
        for e, b in zip(result.expected_per_minute, result.backlog_per_minute, strict=True)
    )
    if full_first_minute:
        assert result.admitted_per_minute[0] == result.rate  # the case is not vacuous
    assert result.lost == 0
    assert result.admitted_twice == 0
    assert result.smooth, f"peak second {result.peak_second_ratio} x the mean"
    assert result.peak_consumers <= math.ceil(result.rate / 6000)


def struck(result: SimulationResult, fault: str) -> bool:
    if fault == "double-trigger":
        return result.triggers_refused >= result.minutes
    return result.faults_injected.get(fault, 0) > 0


@pytest.mark.parametrize("rate", SMALL_RATES)
@pytest.mark.parametrize("fault", ["", *FAULT_NAMES])
def test_small_and_medium_rates(rate: int, fault: str) -> None:
    visitors = rate + rate // 2 + 1
    result = simulate(
        rate=rate,
        visitors=visitors,
        arrival=Arrival.parse("burst"),
        minutes=2,
        faults=Faults.parse(fault),
        seed=rate,
    )
    check(result)
    assert sum(result.admitted_per_minute) + result.still_waiting == visitors
    if fault and rate >= 600:
        assert struck(result, fault)


def test_uniform_arrivals_are_admitted_as_they_queue_up() -> None:
    result = simulate(
        rate=600, visitors=1500, arrival=Arrival.parse("uniform:3"), minutes=4, seed=5
    )
    check(result, full_first_minute=False)
    # Minute 1 starts with an empty queue; each later one admits the previous minute's ~500.
    assert result.admitted_per_minute[0] <= 5
    assert all(490 <= n <= 510 for n in result.admitted_per_minute[1:])
    assert sum(result.admitted_per_minute) + result.still_waiting == 1500


@pytest.mark.parametrize("rate", [1, 10, 60])
def test_a_lone_visitor_goes_in_as_the_next_minute_starts(rate: int) -> None:
    # Joined a second before the minute: the quota of 1 falls due at the start of its share,
    # not at the end of the minute.
    result = simulate(rate=rate, visitors=1, arrival=Arrival.parse("burst"), minutes=2, seed=3)
    assert result.admitted_per_minute == [1, 0]
    assert result.wait_seconds_max is not None and result.wait_seconds_max < 3


def test_waits_are_measured_from_joining_to_admission() -> None:
    # A backlog of 1.5 minutes at 600/min: the first are let in at once, the last in the
    # second minute's second half.
    result = simulate(rate=600, visitors=901, arrival=Arrival.parse("burst"), minutes=2, seed=1)
    assert result.wait_seconds_median is not None and result.wait_seconds_max is not None
    assert 30 < result.wait_seconds_median < 60 < result.wait_seconds_max < 120


@pytest.mark.parametrize("faults", ["", *FAULT_NAMES, ALL_FAULTS])
@pytest.mark.parametrize(("rate", "consumers"), [(100_000, 17), (270_000, 45)])
def test_high_rates_with_the_fewest_consumers(rate: int, consumers: int, faults: str) -> None:
    """270,000/min needs at most 45 consumers (the original needed 270)."""
    result = simulate(
        rate=rate,
        visitors=rate + 2_000,
        arrival=Arrival.parse("burst"),
        minutes=1,
        faults=Faults.parse(faults),
        seed=rate % 97,
    )
    check(result)
    assert result.peak_consumers == consumers
    assert result.aws_calls_per_admitted is not None and result.aws_calls_per_admitted < 1
    for fault in filter(None, faults.split(",")):
        assert struck(result, fault), fault


def test_the_same_seed_gives_the_same_run() -> None:
    def run() -> SimulationResult:
        return simulate(
            rate=3300,
            visitors=5000,
            arrival=Arrival.parse("burst"),
            minutes=2,
            faults=Faults.parse(ALL_FAULTS),
            seed=9,
        )

    assert run() == run()


@pytest.mark.parametrize("text", ["", "burst:3", "uniform", "uniform:0", "uniform:x", "steady"])
def test_bad_arrival_is_refused_with_a_hint(text: str) -> None:
    with pytest.raises(ValueError, match="uniform:MINUTES"):
        Arrival.parse(text)


def test_bad_fault_is_refused_with_the_list() -> None:
    with pytest.raises(ValueError, match="crash, throttle, duplicates, double-trigger"):
        Faults.parse("crash,flood")
