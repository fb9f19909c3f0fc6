"""The capacity figures of a simulation, on hand-made visits (simulator/occupancy.py)."""

from __future__ import annotations

import pytest

from beekeeper.simulator.occupancy import (
    Visit,
    first_reaching,
    holding,
    peak,
    refill_times,
    refills,
    time_average,
)

CLAIM, SESSION = 120.0, 600.0


@pytest.mark.parametrize(
    ("visit", "interval"),
    [
        (Visit(10.0, None), (10.0, 130.0)),  # a no-show holds the claim window
        (Visit(10.0, 15.0), (10.0, 615.0)),  # arrived, then idle: the session from the arrival
        (Visit(10.0, 15.0, renewals=(45.0, 75.0)), (10.0, 675.0)),  # the last check renews
        (Visit(10.0, 15.0, renewals=(45.0,), left_at=60.0), (10.0, 60.0)),  # left: at once
        (Visit(10.0, None, left_at=20.0), (10.0, 20.0)),  # left before arriving
        # The room reads its clocks in whole seconds: a deadline runs from the moment's second.
        (Visit(10.7, None), (10.7, 130.0)),
        (Visit(10.7, 15.2, renewals=(45.9,)), (10.7, 645.0)),
    ],
)
def test_holding_ends_at_the_deadline_or_the_leave(visit: Visit, interval: tuple) -> None:
    assert holding(visit, claim_seconds=CLAIM, session_seconds=SESSION) == interval


GRACE = 10.0


@pytest.mark.parametrize(
    ("visit", "interval"),
    [
        # The presence script's heartbeats: the last one holds the place for the grace.
        (Visit(10.0, 15.0, beats=(15.3, 25.3, 35.3)), (10.0, 45.0)),
        # A check after the last heartbeat holds it for the session, a heartbeat after a
        # check for the grace: whichever write came last decides.
        (Visit(10.0, 15.0, renewals=(45.0,), beats=(35.3,)), (10.0, 645.0)),
        (Visit(10.0, 15.0, renewals=(45.0,), beats=(35.3, 45.4)), (10.0, 55.0)),
        (Visit(10.0, 15.0, beats=(15.3, 25.3), left_at=20.0), (10.0, 20.0)),
    ],
)
def test_a_heartbeat_holds_the_place_for_the_grace(visit: Visit, interval: tuple) -> None:
    assert (
        holding(visit, claim_seconds=CLAIM, session_seconds=SESSION, beat_hold_seconds=GRACE)
        == interval
    )


def test_peak_counts_overlaps_and_an_end_frees_before_a_start_at_the_same_instant() -> None:
    assert peak([]) == 0
    assert peak([(0, 10), (5, 15), (9, 20)]) == 3
    assert peak([(0, 10), (10, 20), (20, 30)]) == 1
    assert peak([(0, 10), (0, 10), (10, 11)]) == 2


def test_time_average_is_clipped_to_the_window() -> None:
    assert time_average([(0, 10), (5, 15)], 0, 10) == pytest.approx(1.5)
    assert time_average([(0, 100)], 50, 60) == pytest.approx(1.0)
    assert time_average([(0, 100)], 60, 50) == 0.0


def test_refills_pair_each_admission_with_the_oldest_place_freed_while_someone_waited() -> None:
    waiting = [(0.0, 5), (50.0, 0), (60.0, 3)]
    frees = [10.0, 12.0, 55.0, 70.0]  # 55: nobody waited then
    admissions = [1.0, 11.0, 14.0, 20.0, 56.0, 72.0]  # 1.0: the shop had room
    assert refill_times(frees, admissions, waiting) == [1.0, 2.0, 2.0]  # 10->11, 12->14, 70->72
    # An admission before any free place refills nothing; a free place never taken counts not.
    assert refill_times([100.0], [50.0], [(0.0, 1)]) == []
    # The pairs themselves: which place each admission took.
    assert refills(frees, admissions, waiting) == [(10.0, 11.0), (12.0, 14.0), (70.0, 72.0)]


def test_first_reaching_finds_the_moment_the_shop_first_filled() -> None:
    intervals = [(0.0, 10.0), (2.0, 5.0), (4.0, 12.0), (11.0, 20.0)]
    assert first_reaching(intervals, 3) == 4.0
    assert first_reaching(intervals, 4) is None
    assert first_reaching([(0.0, 5.0), (5.0, 9.0)], 2) is None  # one ends as the other starts
