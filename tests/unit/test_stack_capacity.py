"""The capacity formulas the stack sizes a room with (docs/stack.md)."""

from __future__ import annotations

import pytest

from beekeeper.core import polling
from beekeeper.core.polling_load import standing_polls_per_second
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import capacity


def _room(**changes: object) -> RoomSettings:
    base = RoomSettings(
        name="r", display_name="R", region="us-east-1", origin="https://shop.example.com", rate=600
    )
    return base.replace(**changes)


@pytest.mark.parametrize(
    ("rate", "consumer_capacity", "per_minute", "reserved"),
    [
        (1, 6_000, 1, 2),
        (6_000, 6_000, 1, 2),
        (6_001, 6_000, 2, 4),
        (300_000, 6_000, 50, 100),
        (300_000, 30_000, 10, 20),
    ],
)
def test_consumers_are_reserved_for_two_overlapping_minutes(
    rate: int, consumer_capacity: int, per_minute: int, reserved: int
) -> None:
    room = _room(rate=rate, consumer_capacity=consumer_capacity)
    assert capacity.consumers_per_minute(room) == per_minute
    assert capacity.consumer_reserved_concurrency(room) == reserved


def _polls_position_by_position(line: int, rate: int) -> float:
    """The poll rule summed one visitor at a time, as the template answers each of them."""
    return sum(1 / polling.poll_after_seconds(p, rate) for p in range(1, line + 1))


@pytest.mark.parametrize("rate", [1, 7, 60, 600, 6_000, 60_000, 300_000])
def test_polls_are_sized_by_the_poll_rule_not_a_fixed_interval(rate: int) -> None:
    # The stack's figure is the template's poll rule over the design line at the room's rate.
    expected = _polls_position_by_position(capacity.DESIGN_WAITING_VISITORS, rate)
    assert capacity.polls_per_second(_room(rate=rate)) == pytest.approx(expected, abs=1)


def test_the_poll_load_grows_with_the_rate_and_the_line() -> None:
    # A faster line puts more visitors near the front, where they poll every 2 s.
    assert standing_polls_per_second(100_000, 600) < standing_polls_per_second(100_000, 60_000)
    assert standing_polls_per_second(1_000, 600) < standing_polls_per_second(100_000, 600)
    # Far back everyone polls at the cap: 300,000 visitors at 1/min poll about 1,000 times a
    # second (the first ten, within 10 minutes of the front, a little more often).
    assert standing_polls_per_second(300_000, 1) == pytest.approx(
        300_000 / polling.POLL_AFTER_MAX_SECONDS, rel=1e-3
    )
    # The page's jitter only stretches intervals.
    assert standing_polls_per_second(50_000, 6_000, interval_factor=1.125) == pytest.approx(
        standing_polls_per_second(50_000, 6_000) / 1.125
    )


def test_stage_limit_is_arrivals_plus_polls_plus_client_checks() -> None:
    room = _room(rate=6_000, arrival_shards=8)
    throttle = capacity.stage_throttle(room)
    # 8 shards x 1,000/s + the poll rule's load + 6,000/min x 10 checks / 60 s
    assert throttle.rate_limit == 8_000 + capacity.polls_per_second(room) + 1_000
    assert 1_500 < capacity.polls_per_second(room) < 2_000
    assert throttle.arrivals_rate_limit == 8_000
    assert throttle.burst_limit == capacity.ACCOUNT_DEFAULT_BURST


def test_a_capacity_room_adds_its_places_heartbeats() -> None:
    rate_room = _room(rate=6_000, arrival_shards=8)
    assert capacity.heartbeats_per_second(rate_room) == 0
    room = rate_room.replace(max_inside=500, session_minutes=5, presence_grace_seconds=10)
    # 500 places, a heartbeat every 3 s (a third of the grace) each.
    assert capacity.heartbeats_per_second(room) == 167
    assert capacity.stage_throttle(room).rate_limit == (
        capacity.stage_throttle(rate_room).rate_limit + 167
    )
    # Without presence a page with the script beats a third of a session apart: 100 s.
    assert capacity.heartbeats_per_second(room.replace(presence_grace_seconds=0)) == 5


def test_small_room_burst_never_exceeds_its_rate() -> None:
    room = _room(rate=1, arrival_shards=1)
    throttle = capacity.stage_throttle(room)
    # At 1 visitor a minute nearly all of the 200,000 poll every 300 s: 667/s (and the front
    # every 2 s).
    assert capacity.polls_per_second(room) == 668
    assert throttle.rate_limit == 1_000 + 668 + 1
    assert throttle.burst_limit == min(throttle.rate_limit, capacity.ACCOUNT_DEFAULT_BURST)
    assert throttle.arrivals_rate_limit == 1_000
