"""A simulation runs with the garbage collector's youngest generation at the simulator's
threshold (a quarter of a run's time went to collecting at Python's default) and leaves the
caller's thresholds as they were, whether the run ends or fails."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from beekeeper.simulator.pages import PageCrowd
from beekeeper.simulator.run import GC_YOUNG_THRESHOLD, Arrival, Crowd, simulate, simulated_room

CALLERS = (700, 10, 10)


@pytest.fixture
def callers_thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(*CALLERS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def small_crowd() -> Crowd:
    return Crowd(visitors=20, arrival=Arrival.parse("burst"), minutes=2, seed=1)


@pytest.mark.usefixtures("callers_thresholds")
def test_a_run_collects_at_the_simulators_threshold_then_restores_the_callers() -> None:
    during: list[tuple[int, int, int]] = []

    def look(_pages: PageCrowd) -> None:
        during.append(gc.get_threshold())

    result = simulate(simulated_room(rate=60), small_crowd(), watch_pages=look)
    assert result.lost == 0 and result.still_waiting == 0
    assert during == [(GC_YOUNG_THRESHOLD, 10, 10)]
    assert gc.get_threshold() == CALLERS


@pytest.mark.usefixtures("callers_thresholds")
def test_a_failed_run_restores_the_callers_thresholds() -> None:
    def fail(_pages: PageCrowd) -> None:
        raise RuntimeError("the look failed")

    with pytest.raises(RuntimeError, match="the look failed"):
        simulate(simulated_room(rate=60), small_crowd(), watch_pages=fail)
    assert gc.get_threshold() == CALLERS


def test_a_caller_collecting_less_often_is_left_so() -> None:
    before = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD * 2, 10, 10)
    try:
        during: list[int] = []
        simulate(
            simulated_room(rate=60),
            small_crowd(),
            watch_pages=lambda _pages: during.append(gc.get_threshold()[0]),
        )
        assert during == [GC_YOUNG_THRESHOLD * 2]
    finally:
        gc.set_threshold(*before)
