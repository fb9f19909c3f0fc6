"""Capacity mode's bars (issue 15) on the real code in simulated time: a small shop, a line that
never runs dry, visitors who walk away, leave the line, shop and leave or go idle.

The figures come from what the simulated visitors did (simulator/capacity.py and
simulator/occupancy.py), never from the room's own counter. bench/capacity_table.py runs the
same checks at the sizes bench/README.md quotes.
"""

from __future__ import annotations

import pytest

from beekeeper.core.settings import RoomSettings
from beekeeper.simulator.faults import Faults
from beekeeper.simulator.run import (
    Arrival,
    Crowd,
    SimulationResult,
    Visits,
    simulate,
    simulated_room,
)

ALL_FAULTS = Faults.parse("crash,throttle,duplicates,double-trigger")
CALM = Faults()
MAX_INSIDE = 20


def run(
    room: RoomSettings, visits: Visits, faults: Faults = CALM, seed: int = 1
) -> SimulationResult:
    # 400 visitors over 6 minutes into a shop of 20 that lets about 8 in a minute: a line
    # waits from the first minute to the last.
    crowd = Crowd(
        visitors=400,
        arrival=Arrival.parse("uniform:6"),
        minutes=12,
        faults=faults,
        seed=seed,
        visits=visits,
    )
    return simulate(room, crowd)


def abandoning(*, leave: float = 1.0) -> tuple[RoomSettings, Visits]:
    room = simulated_room(
        rate=600, join_work=0, max_inside=MAX_INSIDE, session_minutes=1.0, claim_minutes=0.5
    )
    return room, Visits(visit_minutes=3.0, abandon=0.2, leave=leave, leave_line=0.05)


def check_the_room_kept_its_promises(result: SimulationResult) -> None:
    capacity = result.capacity
    assert capacity is not None
    assert capacity.peak_inside == MAX_INSIDE  # full, and never more
    assert result.lost == 0 and result.admitted_twice == 0
    assert capacity.left_then_admitted == 0 and capacity.left_line > 0
    assert capacity.turned_away == 0  # nobody inside lost their session while shopping
    assert result.still_waiting > 0  # the line never ran dry
    assert capacity.refills > 50
    assert capacity.refill_seconds_p50 is not None and capacity.refill_seconds_p50 <= 5
    assert capacity.refill_seconds_p99 is not None and capacity.refill_seconds_p99 <= 15


@pytest.mark.parametrize("faults", [CALM, ALL_FAULTS], ids=["calm", "all faults"])
def test_abandoned_places_do_not_waste_the_shop(faults: Faults) -> None:
    # Seed 2: a run in which every fault happens (a throttle is drawn per table call, and the
    # pages that follow the shared state make few; seeds 1 and 3 meet no throttle at all).
    result = run(*abandoning(), faults, seed=2)
    check_the_room_kept_its_promises(result)
    capacity = result.capacity
    assert capacity is not None
    if faults.crash:
        assert {"crash", "throttle", "duplicates"} <= set(result.faults_injected)
    # A fifth walk away; each holds a place for the claim window only (30 s of 3 minutes).
    assert capacity.no_shows >= 10 and capacity.no_shows == capacity.abandoned
    assert capacity.mean_inside_ratio is not None and capacity.mean_inside_ratio >= 0.9


def test_idle_sessions_free_their_places_when_they_run_out() -> None:
    result = run(*abandoning(leave=0.3), ALL_FAULTS, seed=2)
    check_the_room_kept_its_promises(result)
    capacity = result.capacity
    assert capacity is not None
    assert capacity.sessions_expired >= 20 and capacity.left_shop >= 10
    # Idle visitors hold their place a session after their last check: the shop is less full.
    assert capacity.mean_inside_ratio is not None and capacity.mean_inside_ratio < 0.9


def test_a_cap_of_one_admits_one_visitor_at_a_time() -> None:
    room = simulated_room(
        rate=600, join_work=0, max_inside=1, session_minutes=1.0, claim_minutes=0.5
    )
    visits = Visits(visit_minutes=0.5, leave=0.5)
    crowd = Crowd(visitors=12, arrival=Arrival.parse("burst"), minutes=4, visits=visits)
    result = simulate(room, crowd)
    capacity = result.capacity
    assert capacity is not None
    assert capacity.peak_inside == 1 and capacity.arrived >= 4
    assert result.lost == 0 and result.admitted_twice == 0
