"""The capacity formulas the stack sizes a room with (docs/stack.md)."""

from __future__ import annotations

import pytest

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


def test_stage_limit_is_arrivals_plus_polls_plus_client_checks() -> None:
    room = _room(rate=6_000, arrival_shards=8)
    throttle = capacity.stage_throttle(room)
    # 8 shards x 1,000/s + 200,000 waiting / 20 s + 6,000/min x 10 checks / 60 s
    assert throttle.rate_limit == 8_000 + 10_000 + 1_000
    assert throttle.arrivals_rate_limit == 8_000
    assert throttle.burst_limit == capacity.ACCOUNT_DEFAULT_BURST


def test_small_room_burst_never_exceeds_its_rate() -> None:
    throttle = capacity.stage_throttle(_room(rate=1, arrival_shards=1))
    assert throttle.rate_limit == 1_000 + 10_000 + 1
    assert throttle.burst_limit == min(throttle.rate_limit, capacity.ACCOUNT_DEFAULT_BURST)
    assert throttle.arrivals_rate_limit == 1_000
