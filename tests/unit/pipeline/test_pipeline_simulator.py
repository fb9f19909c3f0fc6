"""The real producer, trigger and consumers in simulated minutes, with and without faults.

Every case asserts what the room promises (docs/pipeline.md): each full minute admits exactly
min(rate, visitors in line during it); no 60 s window admits more than the rate plus one
receive batch per consumer running in it; nobody is lost or admitted twice; no second exceeds
1.25 x the rate's mean second plus one receive batch; the fewest consumers are used; a visitor
who joins while the room has room goes straight in. A fault that is switched on must also
have struck, or the case would prove nothing.

The suite goes to 100,000 a minute (17 consumers); the same promises at 270,000 a minute (45
consumers, a burst of 405,001 over two minutes, with each fault and all four) are checked by
`bench/simulate_table.py --rate 270000`, which fails when one is broken.
"""

from __future__ import annotations

import math

import pytest

from beekeeper.simulator.faults import FAULT_NAMES, Faults
from beekeeper.simulator.run import Arrival, Crowd, SimulationResult, simulate, simulated_room

# Its tests keep a worker minutes: the file starts first (tests/conftest.py).
pytestmark = pytest.mark.minutes(3)

# 12,345 a minute takes a few seconds a case: the full gate's (slow).
SMALL_RATES = (1, 7, 25, 600, 3300, pytest.param(12345, marks=pytest.mark.slow))
ALL_FAULTS = ",".join(FAULT_NAMES)


def check(result: SimulationResult, *, full_first_minute: bool = True) -> None:
    assert result.exact, (result.admitted_per_minute, result.expected_per_minute)
    if full_first_minute:
        assert result.admitted_per_minute[0] == result.rate  # the case is not vacuous
    assert result.lost == 0
    assert result.admitted_twice == 0
    assert result.window_cap_held, f"a window exceeded the cap by {result.max_window_excess}"
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
        simulated_room(rate=rate, join_work=0),
        Crowd(
            visitors=visitors,
            arrival=Arrival.parse("burst"),
            minutes=2,
            faults=Faults.parse(fault),
            seed=rate,
        ),
    )
    check(result)
    assert sum(result.admitted_per_minute) + result.still_waiting == visitors
    assert result.max_admitted_in_any_60s <= rate + 10 * result.peak_consumers
    if fault and rate >= 600:
        assert struck(result, fault)


@pytest.mark.slow
@pytest.mark.parametrize("faults", ["", ALL_FAULTS])
def test_high_rates_with_the_fewest_consumers(faults: str) -> None:
    """100,000/min needs 17 consumers (the original design needed 100), without faults and
    with every fault at once (each must have struck); each fault alone is run at the small
    and medium rates above."""
    rate = 100_000
    result = simulate(
        simulated_room(rate=rate, join_work=0),
        Crowd(
            visitors=rate + 2_000,
            arrival=Arrival.parse("burst"),
            minutes=1,
            faults=Faults.parse(faults),
            seed=rate % 97,
        ),
    )
    check(result)
    assert result.peak_consumers == 17
    for fault in filter(None, faults.split(",")):
        assert struck(result, fault), fault
    if "duplicates" in faults:
        # Two consumers read the same visitor before either wrote, thousands of times; each
        # second write was refused by its condition (0 admitted twice, checked above).
        assert result.interleaved_deliveries > 1_000
        assert result.admission_writes_refused > 1_000


@pytest.mark.parametrize(
    ("rate", "median", "p99", "minutes"),
    [
        (10, 2, 10, 6),
        (600, 2, 5, 6),
        pytest.param(3000, 2, 5, 6, marks=pytest.mark.slow),
        # Ten consumers a minute: three full minutes are 90,000 visitors.
        pytest.param(60_000, 2, 5, 3, marks=pytest.mark.slow),
    ],
)
def test_straight_through_while_the_room_has_room(
    rate: int, median: float, p99: float, minutes: int
) -> None:
    """Half the rate arriving evenly: nobody waits for the next minute."""
    visitors = rate * minutes // 2
    result = simulate(
        simulated_room(rate=rate, join_work=0),
        Crowd(
            visitors=visitors,
            arrival=Arrival.parse(f"uniform:{minutes}"),
            minutes=minutes,
            seed=2,
        ),
    )
    check(result, full_first_minute=False)
    assert result.wait_seconds_p50 is not None and result.wait_seconds_p99 is not None
    assert result.wait_seconds_p50 <= median
    assert result.wait_seconds_p99 <= p99
    assert result.wait_seconds_median == result.wait_seconds_p50
    assert result.late_overtakes == 0
    assert sum(result.admitted_per_minute) + result.still_waiting == visitors


@pytest.mark.slow
@pytest.mark.parametrize("rate", [600, 3000])
def test_over_capacity_every_full_minute_admits_exactly_the_rate(rate: int) -> None:
    result = simulate(
        simulated_room(rate=rate, join_work=0),
        Crowd(visitors=rate * 8, arrival=Arrival.parse("uniform:4"), minutes=5, seed=3),
    )
    check(result, full_first_minute=False)
    assert result.admitted_per_minute[1:] == [rate] * 4
    assert result.max_admitted_in_any_60s <= rate + 10
    assert result.late_overtakes <= 0.001 * sum(result.admitted_per_minute)


def test_a_visitor_who_joins_a_quiet_minute_wakes_a_consumer() -> None:
    # The first minute is claimed with nobody in line; the lone visitor joins 20 s into it.
    result = simulate(
        simulated_room(rate=60, join_work=0),
        Crowd(visitors=1, arrival=Arrival.parse("at:20"), minutes=2, seed=4),
    )
    assert result.consumers_woken == 1
    assert result.admitted_per_minute == [1, 0]
    assert result.wait_seconds_max is not None and result.wait_seconds_max < 1


def test_a_lone_visitor_before_the_minute_goes_in_as_it_starts() -> None:
    result = simulate(
        simulated_room(rate=1, join_work=0),
        Crowd(visitors=1, arrival=Arrival.parse("burst"), minutes=2, seed=3),
    )
    assert result.admitted_per_minute == [1, 0]
    assert result.consumers_woken == 0  # the trigger saw them and planned a consumer
    assert result.wait_seconds_max is not None and result.wait_seconds_max < 3


def test_a_room_nobody_visits_starts_no_consumer() -> None:
    result = simulate(
        simulated_room(rate=300_000, join_work=0),
        Crowd(visitors=0, arrival=Arrival.parse("burst"), minutes=10),
    )
    assert result.consumers_per_minute == [0] * 10
    assert result.peak_consumers == 0
    # The trigger's reads, its claim and the status it publishes: a handful a minute.
    assert result.aws_calls <= 10 * 8


def test_a_live_rate_change_applies_from_the_change() -> None:
    result = simulate(
        simulated_room(rate=600, join_work=0),
        Crowd(
            visitors=6000,
            arrival=Arrival.parse("burst"),
            minutes=4,
            seed=6,
            rate_changes=[(90.0, 1200)],
        ),
    )
    assert result.minutes_with_rate_change == [1]
    assert result.admitted_per_minute[0] == 600
    assert result.admitted_per_minute[2:] == [1200, 1200]
    # Half a minute at each rate, give or take the seconds it takes to notice the change.
    assert 600 < result.admitted_per_minute[1] < 1200
    check(result)


def test_the_same_seed_gives_the_same_run() -> None:
    def run() -> SimulationResult:
        return simulate(
            simulated_room(rate=3300, join_work=0),
            Crowd(
                visitors=5000,
                arrival=Arrival.parse("burst"),
                minutes=2,
                faults=Faults.parse(ALL_FAULTS),
                seed=9,
            ),
        )

    assert run() == run()


@pytest.mark.parametrize(
    "text", ["", "burst:3", "uniform", "uniform:0", "uniform:x", "steady", "at:", "at:-1", "at:x"]
)
def test_bad_arrival_is_refused_with_a_hint(text: str) -> None:
    with pytest.raises(ValueError, match="uniform:MINUTES"):
        Arrival.parse(text)


def test_bad_fault_is_refused_with_the_list() -> None:
    with pytest.raises(ValueError, match="crash, throttle, duplicates, double-trigger"):
        Faults.parse("crash,flood")
