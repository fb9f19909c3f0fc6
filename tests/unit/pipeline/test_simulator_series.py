"""The simulator's time series for charts, on hand-made histories and on a real run."""

from __future__ import annotations

import pytest

from beekeeper.simulator import measure
from beekeeper.simulator.faults import FAULT_NAMES, FaultLog, Faults
from beekeeper.simulator.run import Arrival, Crowd, simulate, simulated_room

EPOCH = 6000.0


def history(
    joined: list[float],
    admitted: list[float | None],
    *,
    minutes: int = 3,
    rate: measure.RateTimeline | None = None,
) -> measure.History:
    return measure.History(
        epoch=EPOCH,
        minutes=minutes,
        joined=joined,
        admitted=admitted,
        lanes=[],
        rate=rate or measure.RateTimeline(10),
    )


def test_arrivals_per_minute_count_a_burst_before_the_start_in_the_first_minute() -> None:
    joined = [EPOCH - 1, EPOCH - 1, EPOCH + 59.9, EPOCH + 60, EPOCH + 179, EPOCH + 200]
    assert measure.arrivals_per_minute(history(joined, [None] * 6)) == [3, 1, 1]


def test_rate_per_minute_is_the_rate_as_each_minute_starts() -> None:
    rate = measure.RateTimeline(10, ((EPOCH + 30, 20), (EPOCH + 120, 5)))
    assert measure.rate_per_minute(history([], [], rate=rate)) == [10, 20, 5]


def test_waiting_over_time_counts_joined_and_not_yet_admitted() -> None:
    joined = [EPOCH - 1, EPOCH + 5, EPOCH + 15, EPOCH + 15]
    admitted = [EPOCH + 10, EPOCH + 20, None, EPOCH + 30]
    waiting = measure.waiting_over_time(history(joined, admitted, minutes=1), step=10)
    # at +0: 1; +10: the first admitted, the second waits; +20: two joined at 15, one left;
    # +30: one admitted; then the one never admitted stays.
    assert waiting == [1, 1, 2, 1, 1, 1, 1]


def test_events_per_minute_by_kind_ignore_the_time_after_the_end() -> None:
    events = [(EPOCH + 1, "crash"), (EPOCH + 61, "crash"), (EPOCH + 62, "throttle"),
              (EPOCH + 400, "crash")]  # fmt: skip
    assert measure.events_per_minute(history([], []), events) == {
        "crash": [1, 1, 0],
        "throttle": [0, 1, 0],
    }


@pytest.mark.parametrize(
    ("waits", "width", "counts"),
    [
        ([], 1, []),
        ([0.2, 0.7, 1.0, 3.5], 1, [2, 1, 0, 1]),
        ([0.0, 59.0, 61.0], 2, [1] + [0] * 28 + [1, 1]),  # 61 s does not fit 60 bins of 1 s
        ([10.0, 400.0, 425.0], 10, [0, 1] + [0] * 38 + [1, 0, 1]),
    ],
)
def test_wait_histogram_uses_the_narrowest_readable_bins(
    waits: list[float], width: int, counts: list[int]
) -> None:
    histogram = measure.wait_histogram(sorted(waits), max_bins=60)
    assert (histogram.bin_seconds, histogram.counts) == (width, counts)
    assert histogram.to_json() == {"bin_seconds": width, "counts": counts}


def test_median_wait_by_arrival_minute_counts_those_still_waiting_as_longest() -> None:
    joined = [EPOCH, EPOCH + 1, EPOCH + 2, EPOCH + 61, EPOCH + 62, EPOCH + 63]
    admitted: list[float | None] = [EPOCH + 10, EPOCH + 31, None, EPOCH + 71, None, None]
    # Minute 0: waits 10, 30, inf -> median 30; minute 1: 10, inf, inf -> half still wait.
    assert measure.median_wait_by_arrival_minute(history(joined, admitted)) == [30.0, None, None]


def test_a_fault_log_keeps_when_each_fault_struck() -> None:
    now = [5.0]
    log = FaultLog(lambda: now[0])
    log.add("crash")
    now[0] = 7.5
    log.add("throttle", 2)
    assert log.events == [(5.0, "crash"), (7.5, "throttle"), (7.5, "throttle")]
    assert log.counts() == {"crash": 1, "throttle": 2}


def test_a_run_with_every_fault_gives_series_that_agree_with_its_totals() -> None:
    minutes = 4
    result = simulate(
        simulated_room(rate=600, join_work=0),
        Crowd(
            visitors=2000,
            arrival=Arrival.parse("uniform:2"),
            minutes=minutes,
            faults=Faults.parse(",".join(FAULT_NAMES)),
            seed=3,
        ),
    )
    assert result.arrivals_per_minute == [1000, 1000, 0, 0]
    assert result.rate_per_minute == [600] * minutes
    assert len(result.waiting_over_time) == minutes * 6 + 1
    assert result.waiting_over_time[-1] == result.still_waiting
    assert max(result.waiting_over_time) > 0
    per_kind = {kind: sum(counts) for kind, counts in result.faults_per_minute.items()}
    assert per_kind.pop("double-trigger") == minutes == result.triggers_refused
    assert per_kind == result.faults_injected
    assert all(len(c) == minutes for c in result.faults_per_minute.values())
    admitted = sum(result.admitted_per_minute)
    assert sum(result.wait_histogram["counts"]) == admitted
    p50, p90, p99 = result.wait_seconds_p50, result.wait_seconds_p90, result.wait_seconds_p99
    assert p50 is not None and p90 is not None and p99 is not None
    assert p50 <= p90 <= p99
    by_minute = result.wait_seconds_by_arrival_minute
    assert by_minute[0] is not None and by_minute[1] is not None and by_minute[0] < by_minute[1]
    assert by_minute[2:] == [None, None]  # nobody arrived then
